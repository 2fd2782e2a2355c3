"""Rewind: a session's history back to before one of the user's prompts, optionally with
the files the cut turns changed, and its undo (rewind.py; the history's side: history_cut.py),
asking first through the one permission rule and recording the answer
(restore_permission.py). The file checkpoints themselves are application.checkpoints.
"""
