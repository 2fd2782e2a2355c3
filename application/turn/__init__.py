"""A prompt, from the moment it arrives to its answer: the entry point, and what starts or
surrounds a turn.

- prompt.py: Prompt, the use case behind session/prompt (a built-in command, or a turn).
- preparation.py: a prompt made ready (MCP servers up, briefing read, prompt commands).
- ownership.py: what a turn does first and last when processes share the store.
- steering.py: a message into the running turn (or the next turn's prompt).
- edit_prompt.py: rewind to a prompt and send another in its place, as one operation.
- task_follow_up.py: a turn the agent starts itself when a background task ends.
- announce.py: what a client is told right after it opens a session.

The top layer of the application: it may use every other folder, none uses it.
"""
