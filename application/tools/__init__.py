"""Tool calls and their permissions: the tools a turn has, one assistant message's tool
uses shown, decided on, then run or refused.

- phase.py: ToolPhase, the round; toolbox.py: the tools a turn works with (the port), and
  catalogue.py: a session's (ToolCatalogue).
- gate.py: whether a call runs (the port; a session's: SessionGate), deciding through
  permissions.py + permission_desk.py (the rules decide or the user is asked, and every
  decision is written down) and plan_exit.py (leaving plan mode).
- execution.py + call_log.py: running an allowed call, what is shown and stored of it;
  own_tools.py: the session's tools run here rather than by the runner; call_watch.py:
  what the session keeps of a call's effects (checkpoints, nested instructions).
- the agent's own tools: ask_user.py, plan_tool.py (todo_write), skill_tools.py
  (load_skill); session_tools.py: the built-in and MCP tools of one session.
"""
