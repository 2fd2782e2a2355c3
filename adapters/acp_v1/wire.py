"""Domain objects to ACP wire models (acp.schema) and back. No schema is written here."""

from datetime import UTC, datetime
from typing import Any, Literal, cast

from acp import schema as acp

from adapters.acp_v1.notices import notice_params
from adapters.acp_v1.subagent_updates import child_params
from adapters.acp_v1.updates import shown, shown_data, update_dict
from domain.commands import CommandSpec
from domain.config import SelectOption
from domain.content import (
    AudioBlock,
    ContentBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    UserInputBlock,
    as_model_text,
)
from domain.events import (
    AgentEvent,
    ChildEvent,
    CommandsAvailable,
    ConfigOptionsChanged,
    McpServersChanged,
    ModeChanged,
    Notice,
    PlanUpdated,
    PromptQueueChanged,
    SessionNotice,
    SessionRewound,
    SessionTitleChanged,
    SteeringWaiting,
    TasksChanged,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolCallUpdated,
    UsageUpdated,
    UserContentReplayed,
)
from domain.mcp import McpServerState
from domain.tasks import TaskSummary
from domain.tool_call import (
    DiffOutput,
    TerminalOutput,
    TextOutput,
    ToolCallStatus,
    ToolOutput,
)

AcpPromptBlock = (
    acp.TextContentBlock
    | acp.ImageContentBlock
    | acp.AudioContentBlock
    | acp.ResourceContentBlock
    | acp.EmbeddedResourceContentBlock
)


def dump(model: acp.BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def block_from_acp(block: AcpPromptBlock) -> UserInputBlock:
    match block:
        case acp.TextContentBlock(text=text):
            return TextBlock(text=text)
        case acp.ImageContentBlock(mime_type=mime, uri=uri, data=data):
            return ImageBlock(mime_type=mime, uri=uri, data=data)
        case acp.AudioContentBlock(mime_type=mime):
            return AudioBlock(mime_type=mime)
        case acp.ResourceContentBlock(uri=uri, name=name, title=title, mime_type=mime):
            return ResourceLinkBlock(uri=uri, name=name, title=title, mime_type=mime)
        case acp.EmbeddedResourceContentBlock(resource=acp.TextResourceContents() as res):
            return EmbeddedResourceBlock(uri=res.uri, text=res.text, mime_type=res.mime_type)
        case acp.EmbeddedResourceContentBlock(resource=res):
            return EmbeddedResourceBlock(uri=res.uri, mime_type=res.mime_type, is_binary=True)
    raise TypeError(f"unsupported content block {type(block).__name__}")


def block_to_acp(block: ContentBlock) -> AcpPromptBlock:
    """A stored user block as a replayable ACP block; what we did not keep goes as text."""
    match block:
        case TextBlock(text=text):
            return acp.TextContentBlock(type="text", text=text)
        case ResourceLinkBlock(uri=uri, name=name, title=title, mime_type=mime):
            return acp.ResourceContentBlock(
                type="resource_link", uri=uri, name=name, title=title, mime_type=mime
            )
        case EmbeddedResourceBlock(uri=uri, text=text, mime_type=mime, is_binary=False):
            return acp.EmbeddedResourceContentBlock(
                type="resource",
                resource=acp.TextResourceContents(uri=uri, text=text or "", mime_type=mime),
            )
        case ImageBlock(mime_type=mime, uri=uri, data=str() as data):
            return acp.ImageContentBlock(type="image", data=data, mime_type=mime, uri=uri)
    marker = as_model_text(block)
    text = marker.text if isinstance(marker, TextBlock) else ""
    return acp.TextContentBlock(type="text", text=text)


def _text(text: str) -> acp.TextContentBlock:
    return acp.TextContentBlock(type="text", text=text)


def update_for(event: AgentEvent) -> Any:
    match event:
        case TextDelta(message_id=mid, text=text) | Notice(message_id=mid, text=text):
            return acp.AgentMessageChunk(
                session_update="agent_message_chunk", content=_text(text), message_id=mid
            )
        case ThinkingDelta(message_id=mid, text=text):
            return acp.AgentThoughtChunk(
                session_update="agent_thought_chunk", content=_text(text), message_id=mid
            )
        case UserContentReplayed(message_id=mid, block=block):
            return acp.UserMessageChunk(
                session_update="user_message_chunk", content=block_to_acp(block), message_id=mid
            )
        case SessionTitleChanged(title=title):
            return acp.SessionInfoUpdate(session_update="session_info_update", title=title)
        case McpServersChanged(servers=servers):
            return acp.SessionInfoUpdate(
                session_update="session_info_update",
                field_meta={"iac_code": {"mcpServers": [_server_state(s) for s in servers]}},
            )
        case TasksChanged(tasks=tasks):
            return acp.SessionInfoUpdate(
                session_update="session_info_update",
                field_meta={"iac_code": {"tasks": [task_meta(t) for t in tasks]}},
            )
        case PromptQueueChanged(entries=entries):
            queue = [{"id": e.id, "preview": e.preview, "queuedBy": e.queued_by} for e in entries]
            return acp.SessionInfoUpdate(
                session_update="session_info_update", field_meta={"iac_code": {"queue": queue}}
            )
        case SteeringWaiting(waiting=waiting):
            return acp.SessionInfoUpdate(
                session_update="session_info_update",
                field_meta={"iac_code": {"steering": {"waiting": waiting}}},
            )
        case SessionRewound():
            return acp.SessionInfoUpdate(
                session_update="session_info_update", field_meta={"iac_code": rewound_meta(event)}
            )
        case ToolCallStarted():
            return tool_call_start(event)
        case ToolCallUpdated():
            return tool_call_progress(event)
        case ModeChanged(mode_id=mode_id):
            return acp.CurrentModeUpdate(
                session_update="current_mode_update", current_mode_id=mode_id
            )
        case ConfigOptionsChanged(options=options):
            return acp.ConfigOptionUpdate(
                session_update="config_option_update", config_options=config_option_models(options)
            )
        case UsageUpdated(used=used, size=size, cost=cost, currency=currency):
            return acp.UsageUpdate(
                session_update="usage_update",
                used=used,
                size=size,
                cost=None if cost is None else acp.Cost(amount=round(cost, 6), currency=currency),
            )
        case CommandsAvailable(commands=commands):
            return acp.AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=[_command(c) for c in commands],
            )
        case PlanUpdated(entries=entries):
            return acp.AgentPlanUpdate(
                session_update="plan",
                entries=[
                    acp.PlanEntry(
                        content=e.content, status=e.status.value, priority=e.priority.value
                    )
                    for e in entries
                ],
            )
    raise TypeError(f"no ACP update for {type(event).__name__}")


def rewound_meta(event: SessionRewound) -> dict[str, Any]:
    """`_meta.iac_code` of the update that tells a rewind (`rewound`: drop the transcript
    from `toMessageId` on) or its undo (`rewindUndone`: the replay of what came back
    follows)."""
    key = "rewindUndone" if event.undone else "rewound"
    return {key: {"toMessageId": event.to_message_id, "messageCount": event.message_count}}


def _command(spec: CommandSpec) -> acp.AvailableCommand:
    hint = spec.hint
    return acp.AvailableCommand(
        name=spec.name,
        description=spec.description,
        input=None
        if hint is None
        else acp.AvailableCommandInput(root=acp.UnstructuredCommandInput(hint=hint)),
    )


def notification_for(session_id: str, event: AgentEvent) -> dict[str, Any]:
    if isinstance(event, ChildEvent):  # addressed to the child, delivered on the parent
        inner = notification_for(event.child_id, event.event)
        return child_params(session_id, event.child_id, inner["update"])
    if (update := update_dict(event)) is not None:  # the frequent kinds, without pydantic
        return {"sessionId": session_id, "update": update}
    if isinstance(event, SessionNotice):  # newer than the SDK; shaped per client later
        return notice_params(session_id, event)
    return dump(acp.SessionNotification(session_id=session_id, update=update_for(event)))


ConfigOption = acp.SessionConfigOptionSelect | acp.SessionConfigOptionBoolean
ToolStatus = Literal["pending", "in_progress", "completed", "failed"]


def config_option_models(options: tuple[SelectOption, ...]) -> list[ConfigOption]:
    return [
        acp.SessionConfigOptionSelect(
            type="select",
            id=o.id,
            name=o.name,
            description=o.description,
            category=cast(Any, o.category),  # one of ACP's categories, from the catalog
            current_value=o.current_value,
            options=[
                acp.SessionConfigSelectOption(value=c.value, name=c.name, description=c.description)
                for c in o.choices
            ],
        )
        for o in options
    ]


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _server_state(state: McpServerState) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "name": state.name,
        "status": state.status.value,
        "tools": state.tools,
        "prompts": state.prompts,
    }
    if state.error:
        shown["error"] = state.error
    return shown


def task_meta(task: TaskSummary) -> dict[str, Any]:
    """One background task as `_meta.iac_code.tasks` lists it."""
    shown: dict[str, Any] = {
        "id": task.id,
        "command": task.command,
        "toolCallId": task.tool_call_id,
        "state": task.state.value,
        "status": task.status,
        "exitCode": task.exit_code,
        "startedAt": iso(task.started_at),
        "lastLines": task.last_lines,
    }
    if task.ended_at is not None:
        shown["endedAt"] = iso(task.ended_at)
    return shown


def _status(status: ToolCallStatus | None) -> ToolStatus | None:
    # ACP has no "cancelled" status: clients mark cancelled calls themselves; we say failed.
    if status is None:
        return None
    return "failed" if status is ToolCallStatus.CANCELLED else cast(ToolStatus, status.value)


def tool_output_to_acp(output: ToolOutput) -> Any:
    match output:
        case DiffOutput(path=path, old_text=old, new_text=new):
            return acp.FileEditToolCallContent(
                type="diff",
                path=path,
                old_text=None if old is None else shown(old),
                new_text=shown(new),
            )
        case TextOutput(text=text):
            return acp.ContentToolCallContent(type="content", content=_text(shown(text)))
        case TerminalOutput(terminal_id=terminal_id):
            # The editor shows its terminal live (and keeps showing it once released).
            return acp.TerminalToolCallContent(type="terminal", terminal_id=terminal_id)
    raise TypeError(f"unknown tool output {output!r}")


def tool_locations(paths: tuple[str, ...]) -> list[acp.ToolCallLocation] | None:
    return [acp.ToolCallLocation(path=p) for p in paths] or None


def tool_call_start(event: ToolCallStarted) -> acp.ToolCallStart:
    return acp.ToolCallStart(
        session_update="tool_call",
        tool_call_id=event.tool_call_id,
        title=event.title,
        kind=event.kind.value,
        status=_status(event.status),
        raw_input=None if event.arguments is None else shown_data(dict(event.arguments)),
        locations=tool_locations(event.locations),
    )


def tool_call_progress(event: ToolCallUpdated) -> acp.ToolCallProgress:
    content = None if event.output is None else [tool_output_to_acp(o) for o in event.output]
    return acp.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=event.tool_call_id,
        status=_status(event.status),
        title=event.title,
        content=content,
        locations=None if event.locations is None else tool_locations(event.locations),
        raw_input=None if event.arguments is None else shown_data(dict(event.arguments)),
        raw_output=None if event.raw_output is None else shown_data(dict(event.raw_output)),
    )
