"""File checkpoints: the files the agent changes, kept per turn (file_checkpoints.py),
carried to forks, and put back by a rewind or its undo, only inside the session's
directories (restoring.py)."""
