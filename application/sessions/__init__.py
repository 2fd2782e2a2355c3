"""Sessions and their lifecycle: made, opened, listed, resumed, forked, renamed, deleted,
cancelled and closed, their settings, and the lease that gives one process their turn.

- new_session.py (fresh_session.py: the new session itself, light), load_session.py,
  opening.py (what a client opens a session with), state.py (what it is told back).
- listing.py + cursor.py: session/list a page at a time.
- resume.py, fork.py, rename.py, delete.py, lifecycle.py (cancel, close).
- settings.py: mode and config options; turn_lease.py: one turn per session across
  processes; import_sessions.py: the reference system's files.
"""
