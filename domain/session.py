"""The Session aggregate, in one class over 400 lines: a fifth of it is its read-only view
(a property for each part others read, as flat as before the parts became value objects:
`session.cwd`, not `session.workspace.cwd`), the rest its methods, grouped by what they
change. Split over modules, the aggregate would only be scattered."""

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime

from domain.choices import Choices
from domain.client_prompt import ClientPrompt
from domain.config import MODE_OPTION_ID, MODEL_OPTION_ID, SessionConfig
from domain.errors import InvalidTitle, UnknownMessage
from domain.ids import MessageId, SessionId
from domain.message import Message, Role
from domain.permission import PermissionDecision, PermissionRules
from domain.session_changes import (
    MessageAdded,
    SessionChange,
    Setting,
    SettingChanged,
    TakenChanges,
    TitleGiven,
)
from domain.spawn import Spawn
from domain.timestamps import Timestamps
from domain.totals import NOTHING_SPENT, Totals
from domain.usage import Usage
from domain.workspace import Workspace

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

    Its state changes only through its methods. Each that changes what is stored records
    the change; a store writes exactly the recorded changes (`take_changes`), checked
    against `version`, and tells the session what it learnt back (`stored_as`). Made by
    `start` (a new session) or `as_stored` (one read from a store)."""

    __slots__ = (
        "__weakref__",  # application.history.saving keeps a lock per session, weakly
        "_changes",
        "_choices",
        "_id",
        "_messages",
        "_permissions",
        "_spawn",
        "_timestamps",
        "_title",
        "_totals",
        "_version",
        "_workspace",
    )

    def __init__(
        self,
        *,
        id: SessionId,
        workspace: Workspace,
        choices: Choices,
        title: str | None,
        timestamps: Timestamps,
        history: Iterable[Message],
        totals: Totals,
        rejected_tools: Iterable[str],
        spawn: Spawn | None,
        version: int | None,
    ) -> None:
        self._id = id
        self._workspace = workspace
        self._choices = choices
        self._title = title
        self._timestamps = timestamps
        self._messages = list(history)
        self._totals = totals
        self._permissions = PermissionRules(set(rejected_tools))
        # Set for a sub-agent's session: who started it (clients only read such a session).
        self._spawn = spawn
        # The stored version this copy was read at or last wrote; None while it holds a
        # history no stored version holds (`keep_in_memory`).
        self._version = version
        self._changes: list[SessionChange] = []

    @classmethod
    def start(
        cls,
        *,
        id: SessionId,
        workspace: Workspace,
        choices: Choices,
        at: datetime,
        title: str | None = None,
        spawn: Spawn | None = None,
    ) -> "Session":
        """A new session (`session/new`, a sub-agent's run): no history, nothing spent, to
        be added to a store, where its row starts at version 0."""
        return cls(
            id=id,
            workspace=workspace,
            choices=choices,
            title=title,
            timestamps=Timestamps.starting(at),
            history=(),
            totals=NOTHING_SPENT,
            rejected_tools=(),
            spawn=spawn,
            version=0,
        )

    @classmethod
    def as_stored(
        cls,
        *,
        id: SessionId,
        workspace: Workspace,
        choices: Choices,
        title: str | None,
        timestamps: Timestamps,
        history: Iterable[Message],
        version: int,
        totals: Totals = NOTHING_SPENT,
        rejected_tools: Iterable[str] = (),
        spawn: Spawn | None = None,
    ) -> "Session":
        """A session as a store holds it (a row and its messages, a legacy file), read at
        `version`, with what its turns spent and the tools the user always rejects."""
        return cls(
            id=id,
            workspace=workspace,
            choices=choices,
            title=title,
            timestamps=timestamps,
            history=history,
            totals=totals,
            rejected_tools=rejected_tools,
            spawn=spawn,
            version=version,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Session) and other._id == self._id

    def __hash__(self) -> int:
        return hash(self._id)

    # What others read.

    @property
    def id(self) -> SessionId:
        return self._id

    @property
    def cwd(self) -> str:
        return self._workspace.cwd

    @property
    def additional_directories(self) -> tuple[str, ...]:
        return self._workspace.additional_directories

    @property
    def mcp_servers(self) -> tuple[dict[str, object], ...]:
        return self._workspace.mcp_servers

    @property
    def system_prompt(self) -> ClientPrompt | None:
        return self._workspace.system_prompt

    @property
    def roots(self) -> tuple[str, ...]:
        """Every directory the session works in: cwd first, then the extra ones."""
        return self._workspace.roots

    @property
    def model(self) -> str:
        return self._choices.model

    @property
    def mode_id(self) -> str:
        return self._choices.mode_id

    @property
    def config(self) -> Mapping[str, object]:
        return self._choices.config

    @property
    def thought_level(self) -> str:
        return self._choices.thought_level

    @property
    def settings(self) -> SessionConfig:
        return self._choices.as_config()

    @property
    def title(self) -> str | None:
        return self._title

    @property
    def created_at(self) -> datetime:
        return self._timestamps.created_at

    @property
    def updated_at(self) -> datetime:
        return self._timestamps.updated_at

    @property
    def spent(self) -> Usage:
        return self._totals.spent

    @property
    def cost(self) -> float | None:
        return self._totals.cost

    @property
    def permissions(self) -> PermissionRules:
        """A copy of the session's "always reject" answers (it learns through `learn`)."""
        return PermissionRules(set(self._permissions.rejected))

    @property
    def spawn(self) -> Spawn | None:
        return self._spawn

    @property
    def version(self) -> int | None:
        """The stored version this copy was read at or last wrote: stores check writes
        against it. None while the copy holds a history no stored version holds (see
        `keep_in_memory`)."""
        return self._version

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    @property
    def message_count(self) -> int:
        return len(self._messages)

    # The conversation.

    def add_message(self, message: Message) -> bool:
        """Append a message. Returns True when this gave the session its title."""
        self._changes.append(MessageAdded(len(self._messages), message))
        self._messages.append(message)
        self._timestamps = self._timestamps.touched(message.created_at)
        if self._title is None and message.role is Role.USER and message.is_chat:
            self._title = title_from(message.visible_text())
            if self._title is not None:
                self._changes.append(TitleGiven(self._title))
            return self._title is not None
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
            f"Session {self._id!r} has no message {message_id!r}.", messageId=message_id
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

    def charge(self, usage: Usage, cost: float | None) -> None:
        """Count a model request's usage in the session's totals (stored with its turn,
        not as a change of the session)."""
        self._totals = self._totals.charged(usage, cost)

    def learn(self, decision: PermissionDecision) -> None:
        """Remember an "always reject" answer for the rest of the session (stored as the
        decision, not as a change of the session)."""
        self._permissions.learn(decision)

    # Settings.

    def open_with(
        self,
        additional_directories: tuple[str, ...],
        mcp_servers: tuple[dict[str, object], ...],
    ) -> bool:
        """Take the directories and MCP servers a client opened the session with (the
        request's lists are complete: what it omits is no longer there). True if changed."""
        opened = replace(
            self._workspace,
            additional_directories=tuple(additional_directories),
            mcp_servers=tuple(mcp_servers),
        )
        changed = opened != self._workspace
        self._workspace = opened
        if changed:
            self._changes.append(SettingChanged(Setting.WORKSPACE))
        return changed

    def set_system_prompt(self, prompt: ClientPrompt) -> bool:
        """Take the system prompt a client opened the session with: it replaces the one
        stored (a client that gives none keeps it, so no call is made). True if changed."""
        changed = prompt != self._workspace.system_prompt
        self._workspace = replace(self._workspace, system_prompt=prompt)
        if changed:
            self._changes.append(SettingChanged(Setting.SYSTEM_PROMPT))
        return changed

    def rename(self, title: str, *, at: datetime) -> str:
        """Replace the title (one trimmed line, as for titles from prompts)."""
        cleaned = title_from(title)
        if cleaned is None:
            raise InvalidTitle("A title needs some text.", title=title)
        self._title = cleaned
        self._touch(Setting.TITLE, at)
        return cleaned

    def choose_model(self, model: str, *, at: datetime) -> None:
        self._choices = replace(self._choices, model=model)
        self._touch(Setting.MODEL, at)

    def set_mode(self, mode_id: str, *, at: datetime) -> None:
        self._choices = replace(self._choices, mode_id=mode_id)
        self._touch(Setting.MODE, at)

    def configure(self, option_id: str, value: str, *, at: datetime) -> None:
        """Set one config option (already checked against the catalogue)."""
        if option_id == MODE_OPTION_ID:
            self.set_mode(value, at=at)
        elif option_id == MODEL_OPTION_ID:
            self.choose_model(value, at=at)
        else:
            self._choices = self._choices.with_option(option_id, value)
            self._touch(Setting.CONFIG, at)

    def _touch(self, setting: Setting, at: datetime) -> None:
        self._timestamps = self._timestamps.touched(at)
        self._changes.append(SettingChanged(setting))

    # What a store calls: the changes it writes, and what it learns back.

    @property
    def changes(self) -> tuple[SessionChange, ...]:
        """What changed since the store last took the changes, oldest first."""
        return tuple(self._changes)

    def take_changes(self) -> TakenChanges:
        """Hand the recorded changes to a store, which now owns writing them."""
        taken = TakenChanges(changes=tuple(self._changes), version=self._version, title=self._title)
        self._changes = []
        return taken

    def restore_changes(self, taken: TakenChanges) -> None:
        """Put back changes a store took but did not keep (its write failed or was rolled
        back), before any made since, and forget what the store told this copy after
        taking them (`stored_as`). Appends stay in the order of their positions: two
        writes that failed in turn may put theirs back later one first."""
        merged = [*taken.changes, *self._changes]
        self._changes = sorted(
            merged, key=lambda c: c.position if isinstance(c, MessageAdded) else -1
        )
        self._version, self._title = taken.version, taken.title

    def stored_as(self, version: int, title: str | None) -> None:
        """Learn what the store holds once it wrote this copy's changes: the version it
        moved to, and the title (a title from a prompt yields to one another writer set
        meanwhile). The copy is the stored session again."""
        self._version, self._title = version, title

    def keep_in_memory(self) -> None:
        """This copy's history (a repair) is not to be stored: its turn may still append
        in another process, or storing it conflicted. Until the copy is read again or
        written, it matches no stored version (`version` is None): a setting's write
        conflicts (and is retried on the stored session), the next turn or load here reads
        the session again, and a fork stores this history as its own."""
        self._version = None

    def read_again(self, stored: "Session") -> None:
        """Become `stored`, this session as another writer left it since this copy was
        read: its history, settings, totals and version. Appends recorded here and not yet
        stored stay recorded if the stored history is the one they follow; other changes
        are dropped (they were made on what is no longer the session)."""
        if stored._id != self._id:
            raise ValueError(f"{stored._id!r} is another session than {self._id!r}")
        pending = [c for c in self._changes if isinstance(c, MessageAdded)]
        follows = stored.message_count == self.message_count - len(pending)
        self._workspace, self._choices = stored._workspace, stored._choices
        self._title, self._timestamps = stored._title, stored._timestamps
        self._totals, self._spawn, self._version = stored._totals, stored._spawn, stored._version
        self._permissions = stored.permissions
        self._messages = list(stored._messages)
        self._changes = []
        if follows:
            for change in pending:
                self._messages.append(change.message)
                self._timestamps = self._timestamps.touched(change.message.created_at)
            self._changes = list(pending)

    # Copies.

    def with_history(self, messages: Iterable[Message]) -> "Session":
        """The same session holding `messages` instead (e.g. its repaired history), at the
        same version, with no changes recorded."""
        return Session(
            id=self._id,
            workspace=self._workspace,
            choices=self._choices,
            title=self._title,
            timestamps=self._timestamps,
            history=messages,
            totals=self._totals,
            rejected_tools=self._permissions.rejected,
            spawn=self._spawn,
            version=self._version,
        )

    def fork(self, new_id: SessionId, *, at: datetime, cwd: str | None = None) -> "Session":
        """A new session with this history, settings and "always" answers (nothing spent
        yet, no sub-agent's place); working in `cwd` where given (its own worktree)."""
        workspace = self._workspace if cwd is None else replace(self._workspace, cwd=cwd)
        return Session(
            id=new_id,
            workspace=workspace,
            choices=self._choices,
            title=self._title,
            timestamps=Timestamps.starting(at),
            history=self._messages,
            totals=NOTHING_SPENT,
            rejected_tools=self._permissions.rejected,
            spawn=None,
            version=0,
        )
