from typing import ClassVar


class DetailedError(Exception):
    """An error whose `details` name what was wrong, for error payloads; each kind says its
    default message. The domain's and the application's errors are both of this shape."""

    default_message: ClassVar[str] = "The request could not be served."

    def __init__(self, message: str | None = None, **details: object) -> None:
        super().__init__(message or self.default_message)
        self.details = details


class DomainError(DetailedError):
    """A domain rule was violated."""

    default_message = "Domain rule violated."


class InvalidWorkingDirectory(DomainError):
    default_message = "cwd must be an absolute path."


class InvalidTitle(DomainError):
    default_message = "Invalid title."


class InvalidTransition(DomainError):
    default_message = "This status change is not allowed."


class UnknownMode(DomainError):
    default_message = "Unknown mode."


class UnknownConfigOption(DomainError):
    default_message = "Unknown configuration option."


class InvalidConfigValue(DomainError):
    default_message = "Value not allowed for this configuration option."


class InvalidClientPrompt(DomainError):
    default_message = "Invalid client system prompt."


class UnknownMessage(DomainError):
    default_message = "No such message in this session."
