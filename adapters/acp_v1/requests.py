"""The params models of the methods the SDK has no model for (our `_iac_code/*` extensions,
the peers' `_session/steering`) or none that reads them as one (set_config_option's two
shapes). The dispatcher reads every route's params through its model
(adapters.protocol.dispatch); each model here words its refusal as these methods always
have (`refused`), so what a client is told did not change when they stopped being read by
hand."""

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from acp import schema as acp
from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    RootModel,
    StrictBool,
    StrictStr,
    Tag,
    model_validator,
)
from pydantic_core import ErrorDetails

from adapters.acp_v1.params import empty_prompt
from adapters.protocol.dispatch import invalid_params
from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from application.rewind.rewind import OnConflict, RestoreFiles
from domain.steering import IdleBehavior

# A prompt's blocks, as the SDK's PromptRequest reads them (the same errors, too).
PromptBlocks = list[
    Annotated[
        acp.TextContentBlock
        | acp.ImageContentBlock
        | acp.AudioContentBlock
        | acp.ResourceContentBlock
        | acp.EmbeddedResourceContentBlock,
        Field(discriminator="type"),
    ]
]

FILES_OPTIONS = ["keep", "restore"]


def _fields(details: Sequence[ErrorDetails]) -> set[str]:
    """The top-level fields (by their wire names) the model refused."""
    return {str(e["loc"][0]) for e in details if e["loc"]}


def _strings(method: str, *fields: str) -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        f"Invalid params: {' and '.join(fields)} must be strings.",
        {"method": method, "fields": list(fields)},
    )


class RenameParams(BaseModel):
    session_id: StrictStr = Field(alias="sessionId")
    title: StrictStr

    @classmethod
    def refused(cls, method: str, given: dict[str, Any], details: Any) -> RpcError:
        return _strings(method, "sessionId", "title")


class ConflictChoice(BaseModel):
    """What happens to a file the user changed since it was last written for them:
    `force: true` overwrites it, `skip: true` leaves it, neither refuses the whole
    operation (a rewind's restore, and its undo)."""

    force: StrictBool = False
    skip: StrictBool = False

    @model_validator(mode="after")
    def _one_at_most(self) -> Self:
        if self.force and self.skip:
            raise ValueError("force and skip are not both true")
        return self

    def resolve(self) -> RestoreFiles:
        if self.force:
            return RestoreFiles(OnConflict.FORCE)
        return RestoreFiles(OnConflict.SKIP if self.skip else OnConflict.REFUSE)


class FilesChoice(ConflictChoice):
    """What a rewind does with the files: `files` "keep" (the default) or "restore", and
    with "restore" what happens to files the user changed (ConflictChoice)."""

    files: Literal["keep", "restore"] | None = "keep"

    def restore_files(self) -> RestoreFiles | None:
        return self.resolve() if self.files == "restore" else None

    @staticmethod
    def files_refused(method: str, given: dict[str, Any], fields: set[str]) -> RpcError:
        """What a refused files choice is told: `files` first, then `force`/`skip`."""
        if "files" in fields:
            files = given.get("files", "keep")
            return RpcError(
                INVALID_PARAMS,
                f"Invalid params: files must be one of {FILES_OPTIONS}.",
                {"method": method, "field": "files", "received": files, "supported": FILES_OPTIONS},
            )
        force, skip = given.get("force", False), given.get("skip", False)
        return RpcError(
            INVALID_PARAMS,
            "Invalid params: force and skip are booleans, and at most one of them is true.",
            {"method": method, "fields": ["force", "skip"], "received": [force, skip]},
        )


class RewindUndoParams(ConflictChoice):
    """The session and the undo token a rewind answered; `force`/`skip` say what happens
    to files changed since the rewind put them back (refused by default, as a rewind's)."""

    session_id: StrictStr = Field(alias="sessionId")
    undo_token: StrictStr = Field(alias="undoToken")

    @classmethod
    def refused(cls, method: str, given: dict[str, Any], details: Any) -> RpcError:
        fields = _fields(details)
        if fields & {"sessionId", "undoToken"}:
            return _strings(method, "sessionId", "undoToken")
        return FilesChoice.files_refused(method, given, fields)


class RewindParams(FilesChoice):
    """The session and the prompt to rewind to (the history is cut before it)."""

    session_id: StrictStr = Field(alias="sessionId")
    to_message_id: StrictStr = Field(alias="toMessageId")

    @classmethod
    def refused(cls, method: str, given: dict[str, Any], details: Any) -> RpcError:
        fields = _fields(details)
        if fields & {"sessionId", "toMessageId"}:
            return _strings(method, "sessionId", "toMessageId")
        return cls.files_refused(method, given, fields)


class EditPromptParams(FilesChoice):
    """The prompt to rewind to (`messageId`), the prompt sent instead, read as
    session/prompt reads its own, and what to do with the files (as a rewind)."""

    session_id: str = Field(alias="sessionId")
    prompt: PromptBlocks
    message_id: StrictStr = Field(alias="messageId")

    @model_validator(mode="before")
    @classmethod
    def _absent_as_null(cls, data: Any) -> Any:
        """A missing sessionId or prompt is refused as a null one is (not as required),
        as when they were read by hand."""
        if isinstance(data, dict):
            return {**data, "sessionId": data.get("sessionId"), "prompt": data.get("prompt")}
        return data

    @classmethod
    def refused(cls, method: str, given: dict[str, Any], details: Any) -> RpcError:
        fields = _fields(details)
        if "messageId" in fields:
            return RpcError(
                INVALID_PARAMS,
                "Invalid params: messageId must be the id of a prompt the user sent.",
                {"method": method, "field": "messageId", "received": given.get("messageId")},
            )
        of_prompt = [e for e in details if e["loc"] and e["loc"][0] in ("sessionId", "prompt")]
        if of_prompt:
            return invalid_params(method, of_prompt)
        if not given.get("prompt"):  # read, and empty: refused as session/prompt refuses it
            return empty_prompt()
        return cls.files_refused(method, given, fields)


class SteeringParams(acp.PromptRequest):
    """`session/prompt`'s shape (sessionId, prompt, _meta) plus an optional
    `idleBehavior`: what the message does when no turn runs."""

    idle_behavior: IdleBehavior = Field(IdleBehavior.START_NEW_TURN, alias="idleBehavior")

    @model_validator(mode="before")
    @classmethod
    def _by_wire_name_only(cls, data: Any) -> Any:
        """The SDK's models also take fields by their Python names; not this one, which
        no client ever sent under that name."""
        if isinstance(data, dict) and "idle_behavior" in data:
            return {k: v for k, v in data.items() if k != "idle_behavior"}
        return data

    @classmethod
    def refused(cls, method: str, given: dict[str, Any], details: Any) -> RpcError:
        if "idleBehavior" not in _fields(details):
            return invalid_params(method, details)
        allowed = [b.value for b in IdleBehavior]
        idle = given.get("idleBehavior")
        return RpcError(
            INVALID_PARAMS,
            f"Invalid params for {method}: idleBehavior must be one of {', '.join(allowed)}.",
            {
                "method": method,
                "field": "idleBehavior",
                "allowed": allowed,
                "received": idle[:64] if isinstance(idle, str) else type(idle).__name__,
            },
        )


def _option_kind(given: Any) -> str:
    """session/set_config_option's params are one of two shapes, told by `type`."""
    return "boolean" if isinstance(given, dict) and given.get("type") == "boolean" else "select"


class ConfigOptionParams(
    RootModel[
        Annotated[
            Annotated[acp.SetSessionConfigOptionBooleanRequest, Tag("boolean")]
            | Annotated[acp.SetSessionConfigOptionSelectRequest, Tag("select")],
            Discriminator(_option_kind),
        ]
    ]
):
    @classmethod
    def refused(cls, method: str, given: dict[str, Any], details: Any) -> RpcError:
        """Each error named as the shape's own model names it (without the shape's tag)."""
        untagged: list[ErrorDetails] = []
        for error in details:
            copied = error.copy()
            copied["loc"] = error["loc"][1:]
            untagged.append(copied)
        return invalid_params(method, untagged)
