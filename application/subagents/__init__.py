"""Sub-agents: the `agent` tool (subagent.py), which runs a child's turn on the agent loop,
the same ModelTurn and ToolPhase a session's turn runs on (child_turns.py makes it), with
what is the child's own put in their place (child_seat.py): its events to its parent's
clients (child_output.py, child_run.py), its few tools and its prompt (child_tools.py),
where its calls that would ask are decided (child_gate.py: refused to the researcher, its
parent's permission flow for a named agent). Each run is stored as a child session
(child_sessions.py); what its parent keeps of it is history (application.history).
"""
