"""What a session's history stores as it grows: messages and turns (session_log.py), a
setting saved against concurrent writers (saving.py), a sub-agent run's record
(subagent_record.py)."""
