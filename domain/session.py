from datetime import datetime
from posixpath import isabs

from domain.client_prompt import ClientPrompt
from domain.config import MODE_OPTION_ID, MODEL_OPTION_ID, THOUGHT_OPTION_ID, SessionConfig
from domain.errors import InvalidTitle, InvalidWorkingDirectory, UnknownMessage
from domain.ids import MessageId, SessionId
from domain.message import Message, Role
from domain.models import ThoughtLevel
from domain.permission import PermissionRules
from domain.session_changes import (
    MessageAdded,
    SessionChange,
    Setting,
    SettingChanged,
    TitleGiven,
)
from domain.spawn import Spawn
from domain.usage import Usage

TITLE_LIMIT = 80


def title_from(text: str) -> str | None:
    """A session title from a prompt: its first non-empty line, trimmed and shortened."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1].rstrip() + "…"
    return None


class Session:
    """Aggregate root: a conversation in a working directory. Equal by id.

    Every method that changes what is stored records the change; a store writes exactly
    the recorded changes (`take_changes`), checked against `version`."""

    def __init__(
        self,
        *,
        id: SessionId,
        cwd: str,
        created_at: datetime,
        model: str,
        mode_id: str = "default",
        title: str | None = None,
        updated_at: datetime | None = None,
        config: dict[str, object] | None = None,
        messages: list[Message] | None = None,
        permissions: PermissionRules | None = None,
        spent: Usage | None = None,
        cost: float | None = None,
        additional_directories: tuple[str, ...] = (),
        mcp_servers: tuple[dict[str, object], ...] = (),
        system_prompt: ClientPrompt | None = None,
        version: int = 0,
        spawn: Spawn | None = None,
    ) -> None:
        if not isabs(cwd):
            raise InvalidWorkingDirectory(f"cwd must be an absolute path, got {cwd!r}.", cwd=cwd)
        self.id = id
        self.cwd = cwd
        self.created_at = created_at
        self.updated_at = updated_at or created_at
        self.model = model
        self.mode_id = mode_id
        self.title = title
        self.config = dict(config or {})
        self._messages = list(messages or [])
        self.permissions = permissions or PermissionRules()
        # What the session's finished turns used and cost (None: no price was known).
        self.spent = spent or Usage()
        self.cost = cost
        # The editor's world as last opened: extra directories inside the session, and its
        # MCP servers as stored (McpServerSpec.stored(): no secret values).
        self.additional_directories = tuple(additional_directories)
        self.mcp_servers = tuple(mcp_servers)
        # The client's system prompt, as last given (None: the agent's own instructions).
        self.system_prompt = system_prompt
        # The stored version this copy was read at (or last wrote): stores check it.
        self.version = version
        # Set for a sub-agent's session: who started it (clients only read such a session).
        self.spawn = spawn
        self._changes: list[SessionChange] = []

    @property
    def roots(self) -> tuple[str, ...]:
        """Every directory the session works in: cwd first, then the extra ones."""
        return (self.cwd, *self.additional_directories)

    def open_with(
        self,
        additional_directories: tuple[str, ...],
        mcp_servers: tuple[dict[str, object], ...],
    ) -> bool:
        """Take the directories and MCP servers a client opened the session with (the
        request's lists are complete: what it omits is no longer there). True if changed."""
        for directory in additional_directories:
            if not isabs(directory):
                raise InvalidWorkingDirectory(
                    f"additional directories must be absolute paths, got {directory!r}.",
                    cwd=directory,
                )
        changed = (self.additional_directories, self.mcp_servers) != (
            tuple(additional_directories),
            tuple(mcp_servers),
        )
        self.additional_directories = tuple(additional_directories)
        self.mcp_servers = tuple(mcp_servers)
        if changed:
            self._changes.append(SettingChanged(Setting.WORKSPACE))
        return changed

    def set_system_prompt(self, prompt: ClientPrompt) -> bool:
        """Take the system prompt a client opened the session with: it replaces the one
        stored (a client that gives none keeps it, so no call is made). True if changed."""
        changed = prompt != self.system_prompt
        self.system_prompt = prompt
        if changed:
            self._changes.append(SettingChanged(Setting.SYSTEM_PROMPT))
        return changed

    def charge(self, usage: Usage, cost: float | None) -> None:
        """Count a model request's usage in the session's totals."""
        self.spent = self.spent + usage
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Session) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    @property
    def message_count(self) -> int:
        return len(self._messages)

    def add_message(self, message: Message) -> bool:
        """Append a message. Returns True when this gave the session its title."""
        self._changes.append(MessageAdded(len(self._messages), message))
        self._messages.append(message)
        self.updated_at = max(self.updated_at, message.created_at)
        if self.title is None and message.role is Role.USER and message.is_chat:
            self.title = title_from(message.visible_text())
            if self.title is not None:
                self._changes.append(TitleGiven(self.title))
            return self.title is not None
        return False

    def last_prompt_id(self) -> MessageId | None:
        """The user's prompt the current (or last) turn answers: what a file checkpoint
        taken now belongs to."""
        for message in reversed(self._messages):
            if message.role is Role.USER and message.is_chat and not message.tool_results:
                return message.id
        return None

    def prompt_position(self, message_id: MessageId | str) -> int:
        """Where the user's prompt `message_id` sits in the history: a rewind cuts there.
        Only prompts the user sent qualify (not tool results, commands or markers)."""
        for position, message in enumerate(self._messages):
            if message.id == message_id:
                if message.role is Role.USER and message.is_chat and not message.tool_results:
                    return position
                raise UnknownMessage(
                    f"Message {message_id!r} is not a prompt the user sent; a rewind goes "
                    "back to one of those.",
                    messageId=message_id,
                )
        raise UnknownMessage(
            f"Session {self.id!r} has no message {message_id!r}.", messageId=message_id
        )

    def cut_at(self, position: int) -> tuple[Message, ...]:
        """Drop the history from `position` on and hand back what was dropped. Nothing is
        recorded: the store rewrites the history from `position` (`rewrite_history`)."""
        cut = tuple(self._messages[position:])
        del self._messages[position:]
        return cut

    def put_back(self, messages: tuple[Message, ...]) -> None:
        """Append messages a rewind cut off (its undo); stored as `cut_at` is."""
        self._messages.extend(messages)

    @property
    def changes(self) -> tuple[SessionChange, ...]:
        """What changed since the store last took the changes, oldest first."""
        return tuple(self._changes)

    def take_changes(self) -> list[SessionChange]:
        """Hand the recorded changes to a store, which now owns writing them."""
        taken, self._changes = self._changes, []
        return taken

    def restore_changes(self, changes: list[SessionChange]) -> None:
        """Put back changes a store took but could not write (before any made since).
        Appends stay in the order of their positions: two writes that failed in turn may
        put theirs back later one first."""
        merged = [*changes, *self._changes]
        self._changes = sorted(
            merged, key=lambda c: c.position if isinstance(c, MessageAdded) else -1
        )

    def adopt(self, stored: "Session") -> None:
        """Become `stored`, this session as written elsewhere since this copy was read: its
        history, settings and version. Appends recorded here and not yet stored stay
        recorded if the stored history is the one they follow; other changes are dropped
        (they were made on what is no longer the session)."""
        pending = [c for c in self._changes if isinstance(c, MessageAdded)]
        follows = stored.message_count == self.message_count - len(pending)
        self.__dict__.update(
            {k: v for k, v in stored.__dict__.items() if k not in ("id", "_changes")}
        )
        self.config = dict(stored.config)
        self._messages = list(stored._messages)
        self._changes = []
        if follows:
            self._messages += [c.message for c in pending]
            self._changes = list(pending)

    def with_history(self, messages: list[Message]) -> "Session":
        """The same session holding `messages` instead (e.g. its repaired history)."""
        return Session(
            id=self.id,
            cwd=self.cwd,
            created_at=self.created_at,
            updated_at=self.updated_at,
            model=self.model,
            mode_id=self.mode_id,
            title=self.title,
            config=self.config,
            messages=messages,
            permissions=self.permissions,
            spent=self.spent,
            cost=self.cost,
            additional_directories=self.additional_directories,
            mcp_servers=self.mcp_servers,
            system_prompt=self.system_prompt,
            version=self.version,
            spawn=self.spawn,
        )

    def fork(self, new_id: SessionId, *, at: datetime) -> "Session":
        """A new session with this history, settings and "always" answers."""
        return Session(
            id=new_id,
            cwd=self.cwd,
            created_at=at,
            updated_at=at,
            model=self.model,
            mode_id=self.mode_id,
            title=self.title,
            config=self.config,
            messages=list(self._messages),
            permissions=PermissionRules(set(self.permissions.rejected)),
            additional_directories=self.additional_directories,
            mcp_servers=self.mcp_servers,
            system_prompt=self.system_prompt,
        )

    def rename(self, title: str, *, at: datetime) -> str:
        """Replace the title (one trimmed line, as for titles from prompts)."""
        cleaned = title_from(title)
        if cleaned is None:
            raise InvalidTitle("A title needs some text.", title=title)
        self.title = cleaned
        self._touch(Setting.TITLE, at)
        return cleaned

    def choose_model(self, model: str, *, at: datetime) -> None:
        self.model = model
        self._touch(Setting.MODEL, at)

    def set_mode(self, mode_id: str, *, at: datetime) -> None:
        self.mode_id = mode_id
        self._touch(Setting.MODE, at)

    def _touch(self, setting: Setting, at: datetime) -> None:
        self.updated_at = max(self.updated_at, at)
        self._changes.append(SettingChanged(setting))

    @property
    def thought_level(self) -> str:
        level = self.config.get(THOUGHT_OPTION_ID)
        return level if isinstance(level, str) else ThoughtLevel.OFF

    @property
    def settings(self) -> SessionConfig:
        return SessionConfig(
            mode_id=self.mode_id, model=self.model, thought_level=self.thought_level
        )

    def configure(self, option_id: str, value: str, *, at: datetime) -> None:
        """Set one config option (already checked against the catalogue)."""
        if option_id == MODE_OPTION_ID:
            self.set_mode(value, at=at)
        elif option_id == MODEL_OPTION_ID:
            self.choose_model(value, at=at)
        else:
            self.config[option_id] = value
            self._touch(Setting.CONFIG, at)
