"""The use cases the protocol methods call, as factories (the composition root decides how
they are built)."""

from collections.abc import Callable
from dataclasses import dataclass

from application.use_cases.announce import AnnounceSession
from application.use_cases.edit_prompt import EditPrompt
from application.use_cases.initialize import Initialize
from application.use_cases.lifecycle import CancelTurn, CloseSession
from application.use_cases.listing import ListSessions
from application.use_cases.load_session import LoadSession
from application.use_cases.new_session import NewSession
from application.use_cases.prompt import Prompt
from application.use_cases.prompt_queueing import QueuePrompts
from application.use_cases.rewind import RewindSession
from application.use_cases.session_settings import SetConfigOption, SetMode
from application.use_cases.sessions import DeleteSession, ForkSession, RenameSession, ResumeSession
from application.use_cases.steering import SteerSession
from application.use_cases.telling import TellSession


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
