from typing import ClassVar

from domain.errors import DetailedError


class ApplicationError(DetailedError):
    """A use case could not do what was asked."""


class SessionNotFound(ApplicationError):
    default_message = "Session not found."


class SessionBusy(ApplicationError):
    default_message = "A prompt is already running in this session."


class InvalidCursor(ApplicationError):
    default_message = "Invalid cursor."


class AuthRequired(ApplicationError):
    default_message = "Authentication required."


class ModelError(ApplicationError):
    """The model provider failed. Raised by LLM adapters; the turn decides whether to ask
    again (application.agent_loop.provider_retry)."""

    default_message = "The model provider failed."
    kind: ClassVar[str] = "provider_error"
    # How long the provider asked us to wait before asking again (its `retry-after`), in
    # seconds; None: it did not say.
    retry_after: float | None = None
    # Whether the provider said asking again may help (its `x-should-retry`); None: silent.
    should_retry: bool | None = None


class ModelUnavailable(ModelError):
    default_message = "The model provider is unavailable."
    kind = "unavailable"


class ModelRateLimited(ModelError):
    default_message = "The model provider is rate limiting requests."
    kind = "rate_limited"


class ModelUsageLimited(ModelRateLimited):
    """A usage, quota or billing limit: asking again soon will not help."""

    default_message = "The model provider's usage limit is reached."
    kind = "usage_limit"


class ModelAuthFailed(ModelError):
    default_message = "The model provider rejected the credentials."
    kind = "authentication_failed"


class ModelRequestRejected(ModelError):
    default_message = "The model provider rejected the request."
    kind = "invalid_request"


class StorageError(ApplicationError):
    default_message = "The session store failed."


class SessionConflict(StorageError):
    """Another writer changed the session since this copy was read: nothing was written."""

    default_message = "The session was changed elsewhere."


class ContextOverflow(ModelRequestRejected):
    """The provider refused the request as longer than the model's context window."""

    default_message = "The request is longer than the model's context window."
    kind = "context_overflow"


class ChildSessionReadOnly(ApplicationError):
    """A sub-agent's session is written by its run alone: clients load it, never prompt it."""

    default_message = "A sub-agent's session is read-only: prompt its parent session instead."


class RewindNotUndoable(ApplicationError):
    default_message = "There is no rewind of this session to undo."


class RewindConflict(ApplicationError):
    """Files the rewind would restore were changed by the user since the agent changed
    them: nothing was done; the client asks again with `force` or `skip`."""

    default_message = "Files changed since the agent changed them; restore with force or skip."


class RestoreRefused(ApplicationError):
    """Restoring files is a write: not in a mode that allows none (plan)."""

    default_message = "Files cannot be restored in plan mode."


class RestoreDeclined(ApplicationError):
    """The user did not allow the files to be restored: nothing was done."""

    default_message = "The user did not allow restoring the files; nothing was done."


class WorktreeRefused(ApplicationError):
    """A session's worktree could not be made, or deleting it would lose work not asked
    to be discarded; the details say what and how to go on."""

    default_message = "The session's worktree refused the request."
