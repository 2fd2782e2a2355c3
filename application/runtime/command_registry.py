"""Slash commands: each is a small use case; the registry is the list a session offers.

Other parts may add commands later (MCP prompts, say): listeners hear of every change, so
open sessions can be sent the new list."""

from abc import abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from application.runtime.turn_control import TurnControl
from domain.commands import CommandSpec
from domain.ids import MessageId
from domain.session import Session
from domain.turn import Turn


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandInput:
    session: Session
    control: TurnControl
    turn: Turn  # the command's own turn: what its model requests used is counted here
    argument: str
    reply_id: MessageId  # the message id its answer is shown under
    offered: tuple[CommandSpec, ...]  # every command the session offers (for /help)


class Command(Protocol):
    @property
    @abstractmethod
    def spec(self) -> CommandSpec: ...

    @abstractmethod
    async def run(self, command: CommandInput) -> str:
        """The answer shown to the user ("" when the command showed what it did itself)."""


Listener = Callable[[], Awaitable[None]]
Maker = Callable[[], Command]


class CommandRegistry:
    """Commands by name. Each is built afresh for each use (like every use case, it holds
    a unit of work of its own), so the registry keeps how to make it."""

    def __init__(self, makers: Iterable[Maker] = ()) -> None:
        self._makers: dict[str, tuple[CommandSpec, Maker]] = {}
        self._listeners: list[Listener] = []
        for make in makers:
            self.register(make)

    def register(self, make: Maker) -> None:
        """Offer a command from the start (before any session is open)."""
        spec = make().spec
        self._makers[spec.name] = (spec, make)

    def get(self, name: str) -> Command | None:
        entry = self._makers.get(name)
        return entry[1]() if entry else None

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._makers)

    def specs(self) -> tuple[CommandSpec, ...]:
        return tuple(spec for spec, _ in self._makers.values())

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    async def add(self, make: Maker) -> None:
        """Offer one more command (or replace one of the same name), and tell listeners."""
        self.register(make)
        for listener in self._listeners:
            await listener()
