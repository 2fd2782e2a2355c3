import asyncio
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, MetaData, create_engine, inspect

from adapters.persistence import tables
from adapters.persistence.engine import make_engine
from adapters.persistence.migrate import SCHEMA_HEAD, alembic_config, upgrade_to_head
from tests.support.postgres import scratch_database

pytestmark = pytest.mark.integration
T = TypeVar("T")


def declared_for(dialect: str) -> MetaData:
    """tables.py's schema as created on `dialect` (some indexes exist on one database only)."""
    copy = MetaData(naming_convention=tables.metadata.naming_convention)
    for table in [t.to_metadata(copy) for t in tables.metadata.sorted_tables]:
        table.indexes = {i for i in table.indexes if tables.exists_on(dialect, i.name)}
        for other in [c for c in table.constraints if not tables.exists_on(dialect, c.name)]:
            table.constraints.discard(other)
    return copy


def revisions(url: str) -> list[str]:
    script = ScriptDirectory.from_config(alembic_config(url))
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def test_head_constant_matches_the_migration_scripts(tmp_path: Path) -> None:
    script = ScriptDirectory.from_config(alembic_config(f"sqlite:///{tmp_path / 'x.db'}"))
    assert script.get_heads() == [SCHEMA_HEAD]


def test_stairway_every_revision_upgrades_downgrades_and_upgrades(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'stairway.db'}"
    config = alembic_config(url)
    previous = "base"
    for revision in revisions(url):
        command.upgrade(config, revision)
        command.downgrade(config, previous)
        command.upgrade(config, revision)
        previous = revision


def test_upgrade_creates_the_schema_once(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "db.sqlite"
    url = f"sqlite+aiosqlite:///{path}"
    assert upgrade_to_head(url) is True
    assert upgrade_to_head(url) is False  # fast path: already current, alembic not run
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "messages", "turns", "project_rules", "alembic_version"} <= tables


def test_the_migrated_schema_is_the_one_tables_py_declares(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    upgrade_to_head(f"sqlite+aiosqlite:///{path}")
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, declared_for("sqlite")) == []
    finally:
        engine.dispose()


def test_a_database_from_the_first_release_upgrades_without_losing_data(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(url), "0001")
    with sqlite3.connect(tmp_path / "old.db") as db:
        db.execute(
            "INSERT INTO sessions (id, cwd, title, created_at, updated_at, mode_id, model, "
            "config, message_count) VALUES ('sess_old', '/p', 'Old', '2026-01-01 00:00:00', "
            "'2026-01-02 00:00:00', 'default', 'm', '{}', 1)"
        )
        db.execute(
            "INSERT INTO messages (session_id, position, id, role, content, interrupted, "
            "created_at) VALUES ('sess_old', 0, 'msg_1', 'user', "
            '\'[{"type": "text", "text": "hello"}]\', 0, \'2026-01-01 00:00:00\')'
        )
    assert upgrade_to_head(url) is True
    with sqlite3.connect(tmp_path / "old.db") as db:
        row = db.execute(
            "SELECT id, title, message_count, parent_id, deleted_at FROM sessions"
        ).fetchone()
        assert row == ("sess_old", "Old", 1, None, None)
        assert db.execute("SELECT content FROM messages").fetchone() == (
            '[{"type": "text", "text": "hello"}]',
        )
        assert db.execute("SELECT version_num FROM alembic_version").fetchone() == (SCHEMA_HEAD,)


def test_servers_starting_together_on_a_new_database_both_succeed(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    code = f"from adapters.persistence.migrate import upgrade_to_head; upgrade_to_head({url!r})"
    processes = [
        subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE) for _ in range(4)
    ]
    for process in processes:
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err.decode()
    assert upgrade_to_head(url) is False


# The same migrations on PostgreSQL, each test on a fresh database of its own.


@pytest.fixture
def fresh_postgres() -> Iterator[str]:
    with scratch_database("migrations") as url:
        yield url


def test_postgres_stairway_every_revision_upgrades_downgrades_and_upgrades(
    fresh_postgres: str,
) -> None:
    config = alembic_config(fresh_postgres)
    previous = "base"
    for revision in revisions(fresh_postgres):
        command.upgrade(config, revision)
        command.downgrade(config, previous)
        command.upgrade(config, revision)
        previous = revision
    assert _postgres_revision(fresh_postgres) == SCHEMA_HEAD
    command.downgrade(config, "base")
    assert _postgres_tables(fresh_postgres) == {"alembic_version"}


def test_postgres_migrated_schema_is_the_one_tables_py_declares(fresh_postgres: str) -> None:
    assert upgrade_to_head(fresh_postgres) is True
    assert upgrade_to_head(fresh_postgres) is False

    def differences(connection: Connection) -> list[Any]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, declared_for("postgresql")))

    assert asyncio.run(on_postgres(fresh_postgres, differences)) == []


def test_postgres_replicas_starting_together_migrate_once(fresh_postgres: str) -> None:
    code = (
        "from adapters.persistence.migrate import upgrade_to_head; "
        f"print(upgrade_to_head({fresh_postgres!r}))"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    answers = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        answers.append(out.decode().strip())
    assert sorted(answers) == ["False", "False", "False", "True"]  # one of them migrated
    assert _postgres_revision(fresh_postgres) == SCHEMA_HEAD
    assert upgrade_to_head(fresh_postgres) is False


def test_db_upgrade_command_migrates_postgres(fresh_postgres: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "IAC_CODE_DATABASE_URL": fresh_postgres,
        "IAC_CODE_CONFIG_DIR": str(tmp_path),
    }
    iac_code = Path(sys.executable).parent / "iac-code"
    first = subprocess.run(
        [iac_code, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120
    )
    assert first.returncode == 0, first.stderr
    again = subprocess.run(
        [iac_code, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert "migrated to the newest schema" in first.stderr
    assert "already at the newest schema" in again.stderr
    assert _postgres_revision(fresh_postgres) == SCHEMA_HEAD


async def on_postgres(url: str, work: Callable[[Connection], T]) -> T:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(work)
    finally:
        await engine.dispose()


def _postgres_revision(url: str) -> str | None:
    return asyncio.run(
        on_postgres(url, lambda c: MigrationContext.configure(c).get_current_revision())
    )


def _postgres_tables(url: str) -> set[str]:
    return asyncio.run(on_postgres(url, lambda c: set(inspect(c).get_table_names())))
