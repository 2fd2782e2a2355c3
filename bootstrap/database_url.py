"""A database URL as it may be shown in logs: without its password. Standard library only
(the start path logs it before SQLAlchemy is loaded)."""

from urllib.parse import urlsplit, urlunsplit


def shown(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    name = user.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{name}:***@{host}"))
