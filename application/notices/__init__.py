"""Telling a session's users something outside any model reply (session_notices.py,
telling.py)."""
