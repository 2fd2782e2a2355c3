"""The use cases the protocol methods call, as factories (the composition root decides how
they are built)."""

from collections.abc import Callable
from dataclasses import dataclass

from application.handshake.initialize import Initialize
from application.notices.telling import TellSession
from application.rewind.rewind import RewindSession
from application.runtime.queueing import QueuePrompts
from application.sessions.delete import DeleteSession
from application.sessions.fork import ForkSession
from application.sessions.lifecycle import CancelTurn, CloseSession
from application.sessions.listing import ListSessions
from application.sessions.load_session import LoadSession
from application.sessions.new_session import NewSession
from application.sessions.rename import RenameSession
from application.sessions.resume import ResumeSession
from application.sessions.settings import SetConfigOption, SetMode
from application.turn.announce import AnnounceSession
from application.turn.edit_prompt import EditPrompt
from application.turn.prompt import Prompt
from application.turn.steering import SteerSession


@dataclass(frozen=True, slots=True, kw_only=True)
class UseCases:
    initialize: Initialize
    has_credentials: Callable[[], bool]
    new_session: Callable[[], NewSession]
    load_session: Callable[[], LoadSession]
    prompt: Callable[[], Prompt]
    cancel: Callable[[], CancelTurn]
    close: Callable[[], CloseSession]
    set_mode: Callable[[], SetMode]
    set_config_option: Callable[[], SetConfigOption]
    list_sessions: Callable[[], ListSessions]
    resume_session: Callable[[], ResumeSession]
    fork_session: Callable[[], ForkSession]
    delete_session: Callable[[], DeleteSession]
    rename_session: Callable[[], RenameSession]
    rewind_session: Callable[[], RewindSession]
    edit_prompt: Callable[[], EditPrompt]
    announce: Callable[[], AnnounceSession]
    steer: Callable[[], SteerSession]
    queue: Callable[[], QueuePrompts]
    tell: Callable[[], TellSession]
    key_variable: str = "IAC_CODE_API_KEY"  # named when a key is missing
