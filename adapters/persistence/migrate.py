"""Schema upgrades. Alembic owns the schema; nothing calls create_all."""

import fcntl
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url

import migrations
from adapters.persistence.schema_head import SCHEMA_HEAD
from adapters.persistence.sqlite import sync_url

if TYPE_CHECKING:
    from alembic.config import Config


def alembic_config(url: str) -> "Config":  # alembic is imported lazily: it is slow
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    config.set_main_option("sqlalchemy.url", sync_url(url).replace("%", "%%"))
    return config


def _is_current(url: str) -> bool:
    """Checks the stored revision with the standard library: skips loading alembic at start."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return False
    path = Path(parsed.database)
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.Error:
        return False
    return rows == [(SCHEMA_HEAD,)]


def upgrade_to_head(url: str) -> bool:
    """Bring the database to the newest schema. Returns True if anything was migrated."""
    if _is_current(url):
        return False
    from alembic import command

    parsed = make_url(url)
    if not parsed.database or parsed.database == ":memory:":
        command.upgrade(alembic_config(url), "head")
        return True
    database = Path(parsed.database)
    database.parent.mkdir(parents=True, exist_ok=True)
    # Two servers starting together on a new database must not both create the tables.
    with open(f"{database}.migrate-lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if _is_current(url):  # the other process did it while we waited
                return False
            command.upgrade(alembic_config(url), "head")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return True
