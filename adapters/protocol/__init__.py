"""The protocol core every transport hands its messages to, whatever the protocol version.

A module is here, not in a version's face (adapters/acp_v1), when it does not know that
version's shapes: no `acp` SDK model, no method's params or result, no update's JSON. What
the core needs from a face is handed in: the method table's routes (dispatch), how updates
are rendered and shaped per client (rendering), the `initialize` answer (lazy). What it
needs of the other replicas goes through one port (replicas); adapters/cluster implements it.

- jsonrpc, connection: the JSON-RPC 2.0 codec and peer (light: `initialize` is answered
  before the heavy modules load); lazy: the dispatcher that answers meanwhile; traced: a
  span per request.
- dispatch: the method table, each route's params read once through its model.
- errors: the application's errors as JSON-RPC errors, the one table.
- journal: every live update numbered and kept; channels: each session's updates delivered
  to every client attached, a replay to an attaching one alone.
- opening_flow: what opening a session for a client means; received: prompts read and not
  yet answered; queued_turns: prompts waiting behind a running turn; revival: an HTTP
  connection taken up again after a restart.
- use_cases: the use cases a face's handlers call.
"""
