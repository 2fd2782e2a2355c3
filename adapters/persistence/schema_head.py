"""The newest schema revision, importable without SQLAlchemy (the start path checks it)."""

# The newest revision in migrations/versions; a test keeps this in step with alembic.
SCHEMA_HEAD = "0008"
