"""What lives in this process only: the sessions open here and their running turns.

- registry.py: SessionRegistry and each open session's ActiveSession.
- turn_control.py: a running turn's cancellation and end; steer_inbox.py: its steering
  messages; prompt_queue.py + queueing.py: prompts queued behind it.
- subagent_runs.py: the sub-agents running; command_registry.py: the slash commands the
  sessions offer.
"""
