"""ACP v1's face on the protocol core (adapters/protocol): everything that knows v1's
shapes, from the method table to each update's JSON. A second version would be a second
face beside this one, over the same core.

- agent: `AcpAgent`, the method table (each method's params model, handler and the
  capabilities it stands for), the notifications, and requests routed from other replicas;
  turns, session_methods, openers: the handlers; requests, params: the params models the
  SDK lacks and the checks models do not make; methods: the methods and capabilities.
- handshake, auth_methods, plain_new, listing, early_new: answers given before pydantic and
  the SDK load (`initialize`, an early `session/new` or `session/list`), in plain JSON.
- wire, results, updates, notices, compaction_updates, subagent_updates, child_sessions,
  rewind_wire: the domain to v1's JSON; rendering and shaping: what the core's channels are
  handed to render each update and shape it per client; coalesce: which waiting updates a
  transport may merge.
- attachments, opening: a prompt's blocks and a session's opening read from the wire;
  permissions, elicitation: the questions the room puts to the clients, as v1 asks them;
  queueing, dropped_queues: the prompt queue's capability, command and lost-queue notice.
"""
