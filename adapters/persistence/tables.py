from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    column,
    false,
    func,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

# Named constraints: alembic's batch mode on SQLite needs them.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


def short_text(length: int) -> TypeEngine[str]:
    """Text meant to stay within `length`: VARCHAR(length) on SQLite, which never enforces it,
    and TEXT on PostgreSQL, which would. Both accept the same values: a tool call id or name
    the model made up may be long, and one refused row would fail the turn's writes."""
    return String(length).with_variant(Text(), "postgresql")


class UtcDateTime(TypeDecorator[datetime]):
    """Stores UTC without an offset (SQLite has no time zones); reads back aware UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


sessions = Table(
    "sessions",
    metadata,
    Column("id", short_text(64), primary_key=True),
    Column("cwd", Text, nullable=False),
    Column("title", Text, nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("mode_id", short_text(64), nullable=False),
    Column("model", short_text(200), nullable=False),
    Column("config", JSON, nullable=False, default=dict),
    Column("message_count", Integer, nullable=False, default=0),
    # A fork reads its parent's messages below fork_position and stores only its own.
    Column("parent_id", short_text(64), nullable=True),
    Column("fork_position", Integer, nullable=True),
    # Deleted while forks still share its messages: hidden, kept until they are gone.
    Column("deleted_at", UtcDateTime, nullable=True),
    # The server defaults are the ones migration 0006 gave rows older than these columns: a
    # new database, created from this file (fresh_schema.py), has them too.
    Column("additional_directories", JSON, nullable=False, default=list, server_default="[]"),
    Column(  # without secret values
        "mcp_servers", JSON, nullable=False, default=list, server_default="[]"
    ),
    # The client's system prompt: {"mode": …, "content": [text, …]}; null: none given.
    Column("system_prompt", JSON, nullable=True),
    # Bumped by every stored change: a write checked against the version it read turns a
    # concurrent change into a conflict instead of an overwrite.
    Column("version", Integer, nullable=False, server_default="0"),
    # A sub-agent's session: the session and tool call that started it, and its agent.
    # Children are listed only under their parent and deleted with it.
    Column("spawned_by", short_text(64), nullable=True),
    Column("spawn_call_id", short_text(128), nullable=True),
    Column("spawn_agent", short_text(100), nullable=True),
    Index("ix_sessions_cwd_updated", "cwd", "updated_at", "id").ddl_if(dialect="sqlite"),
    # PostgreSQL: a btree entry holds ~2.7 kB, less than a path may be: the index holds a hash.
    Index("ix_sessions_cwd_hash_updated", func.md5(column("cwd")), "updated_at", "id").ddl_if(
        dialect="postgresql"
    ),
    Index("ix_sessions_updated", "updated_at", "id"),
    Index("ix_sessions_parent_id", "parent_id"),
    Index("ix_sessions_spawned_by", "spawned_by"),
)

messages = Table(
    "messages",
    metadata,
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("position", Integer, primary_key=True),
    Column("id", short_text(64), nullable=False),
    Column("role", short_text(16), nullable=False),
    Column("content", JSON, nullable=False),
    Column("interrupted", Boolean, nullable=False, default=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("kind", short_text(16), nullable=False, server_default="chat"),
    # Facts beside the content: a reply's counted context size, a compaction's boundary.
    Column("meta", JSON, nullable=True),
)

turns = Table(
    "turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("started_at", UtcDateTime, nullable=False),
    Column("finished_at", UtcDateTime, nullable=True),
    Column("stop_reason", short_text(32), nullable=True),
    Column("requests", Integer, nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("cache_read_tokens", Integer, nullable=False),
    Column("cache_write_tokens", Integer, nullable=False),
    Column("error", Text, nullable=True),
    Column("cost", Float, nullable=True),  # in the catalogue's currency; NULL: not priced
)

# The one process (replica) running a turn of the session, until expires_at; renewed while
# the turn runs. Another replica's session/cancel sets cancel_requested for the holder to see.
session_leases = Table(
    "session_leases",
    metadata,
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("holder", short_text(128), nullable=False),
    Column("expires_at", UtcDateTime, nullable=False),
    Column("cancel_requested", Boolean, nullable=False, server_default=false()),
)

tool_calls = Table(
    "tool_calls",
    metadata,
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("id", short_text(128), primary_key=True),
    Column("name", short_text(100), nullable=False),
    Column("title", Text, nullable=False),
    Column("kind", short_text(32), nullable=False),
    Column("status", short_text(32), nullable=False),
    Column("arguments", JSON, nullable=False),
    Column("locations", JSON, nullable=False),
    Column("output", JSON, nullable=False),
    Column("raw_output", JSON, nullable=True),
)

permission_decisions = Table(
    "permission_decisions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("tool_call_id", short_text(128), nullable=False),
    Column("tool_name", short_text(100), nullable=False),
    Column("arguments", JSON, nullable=False),
    Column("option", short_text(32), nullable=True),
    Column("decided_by", short_text(32), nullable=False),
    Column("decided_at", UtcDateTime, nullable=False),
)

# "Always allow" per project. Not tied to a session: a rule outlives the session that granted
# it. `grant_key` is the command pattern as text ('' for none) so that the uniqueness holds
# (SQLite treats NULLs in a unique constraint as distinct, so NULLable columns would not do).
project_rules = Table(
    "project_rules",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("cwd", Text, nullable=False),
    Column("tool_name", short_text(100), nullable=False),
    Column("command", JSON, nullable=True),
    Column("exact", Boolean, nullable=True),
    Column("grant_key", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("session_id", short_text(64), nullable=True),
    UniqueConstraint("cwd", "tool_name", "grant_key", name="uq_project_rules_grant").ddl_if(
        dialect="sqlite"
    ),
    Index("ix_project_rules_cwd_created", "cwd", "created_at", "id").ddl_if(dialect="sqlite"),
    # PostgreSQL: hashes of the texts a btree entry could not hold (long paths and commands).
    Index(
        "uq_project_rules_grant_hash",
        func.md5(column("cwd")),
        "tool_name",
        func.md5(column("grant_key")),
        unique=True,
    ).ddl_if(dialect="postgresql"),
    Index("ix_project_rules_cwd_hash_created", func.md5(column("cwd")), "created_at", "id").ddl_if(
        dialect="postgresql"
    ),
    # AUTOINCREMENT: a revoked rule's id is never given to a new rule, so a second
    # `permissions revoke ID` cannot remove a rule nobody meant.
    sqlite_autoincrement=True,
)


# The session journal: each live session/update, numbered per session (seq 1, 2, ...), as
# its clients were sent it. A bounded tail per session (adapters/protocol/journal.py prunes
# it). No foreign key: a batch holding an update of a session deleted meanwhile must still
# be written for the others; age pruning removes such rows.
session_updates = Table(
    "session_updates",
    metadata,
    Column("session_id", short_text(64), primary_key=True),
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("params", Text, nullable=False),  # JSON text, encoded once by the journal
    Index("ix_session_updates_created_at", "created_at"),
)

# An HTTP connection that may be taken up by another process (after a restart, or another
# replica): written when its sessions change, not per event.
http_connections = Table(
    "http_connections",
    metadata,
    Column("id", short_text(200), primary_key=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("record", JSON, nullable=False),
    Index("ix_http_connections_updated_at", "updated_at"),
)

# A request a replica hands to the replica running the session's turn (holder): a
# permission answer, a steering message, a setting changed mid-turn. The holder claims it
# (pending -> claimed: applied once), writes its outcome (done) and the sender, told by a
# signal, reads and deletes it; a sender whose holder died first marks it abandoned.
routed_requests = Table(
    "routed_requests",
    metadata,
    Column("id", short_text(64), primary_key=True),
    Column("session_id", short_text(64), nullable=False),
    Column("holder", short_text(128), nullable=False),
    Column("sender", short_text(128), nullable=False),
    Column("method", short_text(100), nullable=False),
    Column("params", JSON, nullable=False),
    Column("state", short_text(16), nullable=False),
    Column("outcome", JSON, nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
    Index("ix_routed_requests_holder", "holder", "state"),
)

# A permission request pending on the replica running the turn (holder), shown by every
# replica to its own clients of the session; deleted once decided.
asked_questions = Table(
    "asked_questions",
    metadata,
    Column("id", short_text(64), primary_key=True),
    Column("session_id", short_text(64), nullable=False),
    Column("holder", short_text(128), nullable=False),
    Column("subject", short_text(128), nullable=False),
    Column("method", short_text(100), nullable=False),
    Column("params", JSON, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Index("ix_asked_questions_session_id", "session_id"),
)

# File checkpoints: a file's state before the agent first changed it in a turn (the turn's
# prompt: message_id), and the state it left it in; the prior bytes are in checkpoint_blobs,
# once per session and state (sha256).
file_checkpoints = Table(
    "file_checkpoints",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("message_id", short_text(64), nullable=False),
    Column("path", Text, nullable=False),
    Column("prior", short_text(64), nullable=False),
    Column("after", short_text(64), nullable=True),
    Column("unrestorable", short_text(32), nullable=True),
    Index("ix_file_checkpoints_session_message", "session_id", "message_id"),
)

checkpoint_blobs = Table(
    "checkpoint_blobs",
    metadata,
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("state", short_text(64), primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("content", LargeBinary, nullable=False),
)

# The last rewind of a session, kept until it is undone or the session is rewound again: the
# messages it cut (as message rows, in JSON) and the files it restored as they were before
# it (base64, null: no file), so the undo survives a restart.
rewind_undos = Table(
    "rewind_undos",
    metadata,
    Column(
        "session_id",
        short_text(64),
        ForeignKey("sessions.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("token", short_text(64), nullable=False),
    Column("position", Integer, nullable=False),
    Column("to_message_id", short_text(64), nullable=False),
    Column("messages", JSON, nullable=False),
    Column("files", JSON, nullable=False),
)

# The replicas alive: each renews its row while it runs (a dead one's lapses).
replicas = Table(
    "replicas",
    metadata,
    Column("id", short_text(128), primary_key=True),
    Column("expires_at", UtcDateTime, nullable=False),
)

# Which replica has clients attached to which session (how many): a turn's updates are
# signalled to those replicas only. No foreign key: a session is attached before it is
# stored (session/new), and a row outlives nothing but its replica's lease.
session_attachments = Table(
    "session_attachments",
    metadata,
    Column("session_id", short_text(64), primary_key=True),
    Column("replica_id", short_text(128), primary_key=True, index=True),
    Column("clients", Integer, nullable=False),
    Column("attached_at", UtcDateTime, nullable=False),
)

# Indexes that exist on one database only (the ddl_if above), by name: what a schema
# comparison of the other database leaves out.
ONLY_ON = {
    "postgresql": {
        "ix_sessions_cwd_hash_updated",
        "uq_project_rules_grant_hash",
        "ix_project_rules_cwd_hash_created",
    },
    "sqlite": {"ix_sessions_cwd_updated", "uq_project_rules_grant", "ix_project_rules_cwd_created"},
}


def exists_on(dialect: str, name: str | None) -> bool:
    """Whether the index or constraint `name` is created on `dialect`."""
    return not any(name in names for other, names in ONLY_ON.items() if other != dialect)
