"""The answers of the session methods as v1's models say them (acp.schema), dumped to JSON:
the opened session's modes and config options, a page of sessions, a changed setting, a
prompt's stop reason and usage, a steering message's outcome."""

from typing import Any

from acp import schema as acp

from adapters.acp_v1.wire import ConfigOption, config_option_models, dump, iso
from adapters.acp_v1.worktree_meta import listed_meta, worktree_meta
from application.dto import PromptResult, SessionState
from application.sessions.listing import SessionPage
from domain.steering import SteerResult
from domain.usage import Usage


def _modes(state: SessionState) -> acp.SessionModeState:
    return acp.SessionModeState(
        current_mode_id=state.current_mode_id,
        available_modes=[
            acp.SessionMode(id=m.id, name=m.name, description=m.description) for m in state.modes
        ],
    )


def config_options(state: SessionState) -> list[ConfigOption]:
    return config_option_models(state.options)


def new_session_result(state: SessionState) -> dict[str, Any]:
    return dump(
        acp.NewSessionResponse(
            session_id=state.session_id,
            modes=_modes(state),
            config_options=config_options(state),
            field_meta=worktree_meta(state.worktree),
        )
    )


def load_session_result(state: SessionState) -> dict[str, Any]:
    return dump(acp.LoadSessionResponse(modes=_modes(state), config_options=config_options(state)))


def resume_session_result(state: SessionState) -> dict[str, Any]:
    return dump(
        acp.ResumeSessionResponse(modes=_modes(state), config_options=config_options(state))
    )


def fork_session_result(state: SessionState) -> dict[str, Any]:
    return dump(
        acp.ForkSessionResponse(
            session_id=state.session_id,
            modes=_modes(state),
            config_options=config_options(state),
            field_meta=worktree_meta(state.worktree),
        )
    )


def list_result(page: SessionPage) -> dict[str, Any]:
    return dump(
        acp.ListSessionsResponse(
            sessions=[
                acp.SessionInfo(
                    session_id=s.session_id,
                    cwd=s.cwd,
                    additional_directories=list(s.additional_directories) or None,
                    title=s.title,
                    updated_at=iso(s.updated_at),
                    field_meta=listed_meta(s),
                )
                for s in page.sessions
            ],
            next_cursor=page.next_cursor,
        )
    )


def set_config_result(state: SessionState) -> dict[str, Any]:
    return dump(acp.SetSessionConfigOptionResponse(config_options=config_options(state)))


def usage_to_acp(usage: Usage) -> acp.Usage:
    return acp.Usage(
        total_tokens=usage.total_tokens,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_read_tokens=usage.cache_read_tokens or None,
        cached_write_tokens=usage.cache_write_tokens or None,
    )


def prompt_result(result: PromptResult) -> dict[str, Any]:
    return dump(
        acp.PromptResponse(stop_reason=result.stop_reason.value, usage=usage_to_acp(result.usage))
    )


def steering_result(result: SteerResult) -> dict[str, Any]:
    """`_session/steering`'s answer: the peers' `outcome`, and ours beside it (the user
    message it became, why it failed)."""
    answer: dict[str, Any] = {"outcome": result.outcome.value}
    if result.reason is not None:
        answer["reason"] = result.reason
    if result.message_id is not None:
        answer["_meta"] = {"iac_code": {"messageId": result.message_id}}
    return answer
