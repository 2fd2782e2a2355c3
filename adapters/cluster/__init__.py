"""The cluster: what only replicas sharing PostgreSQL need, behind the protocol core's one
port for it (adapters.protocol.replicas.Replicas, implemented by replicas.py).

- replicas.py: `ClusterReplicas`, the port, and the start of the rest.
- routing.py: requests routed to the replica running a session's turn.
- questions.py: a turn's permission requests shown on every replica, the first answer wins.
- relay.py: a session's live updates to the clients attached on other replicas, made of
  following.py (who follows what; the heartbeat), sweeping.py (turns of a dead replica),
  sending.py and receiving.py, sharing routes.py and relaying.py (what they work with).
- signal_messages.py, side_tasks.py: the signals' JSON, and the tasks a signal starts.

It may use the protocol core (the journal, the channels, JSON-RPC errors), never a
transport or a protocol version's face: what it carries between replicas is the
requests' params as they were sent, applied by the dispatcher of the replica they reach.
"""
