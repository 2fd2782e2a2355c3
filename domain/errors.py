from typing import ClassVar


class DomainError(Exception):
    """A domain rule was violated. `details` name what was wrong, for error payloads."""

    default_message: ClassVar[str] = "Domain rule violated."

    def __init__(self, message: str | None = None, **details: object) -> None:
        super().__init__(message or self.default_message)
        self.details = details


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
