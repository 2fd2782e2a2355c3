"""Reading what the reference system left on disk."""
