"""Keeps credentials a client put where they do not belong out of the server's log.

uvicorn writes a line per WebSocket handshake (`"WebSocket /acp?token=..." 401`, on
`uvicorn.error`, at INFO) and, at DEBUG, every handshake header (websockets' `< authorization:
Bearer ...`); its HTTP access lines, when enabled, hold the query string too. A client that
puts its token in a URL (browsers cannot set headers on a WebSocket) would have it in the
log. The web client sends its token as a WebSocket subprotocol,
`iac-code.bearer.<base64url(token)>`, which websockets writes at DEBUG in the
`sec-websocket-protocol` header line. This filter, on uvicorn's loggers, replaces every
query string with `?[redacted]`, the values of credential headers with `[redacted]` and
the encoded token of a bearer subprotocol, wherever a line holds one, with `[redacted]`.
Our own access log (access_log.py) writes the path without the query and no header but
the connection id. The sign-in link's token is in its fragment, which browsers never send."""

import logging
import re

QUERY = re.compile(r'(/[^\s"?]*)\?[^\s"]*')
REDACTED_QUERY = r"\1?[redacted]"
CREDENTIAL_HEADER = re.compile(
    r"^([<>] (?:proxy-authorization|authorization|cookie|set-cookie)):.*$",
    re.IGNORECASE | re.MULTILINE,
)
REDACTED_HEADER = r"\1: [redacted]"
# Any characters up to a separator, not only base64url's: a malformed one is hidden too.
BEARER_SUBPROTOCOL = re.compile(r"(iac-code\.bearer\.)[^\s,;\"']+", re.IGNORECASE)
REDACTED_SUBPROTOCOL = r"\1[redacted]"
UVICORN_LOGGERS = ("uvicorn.error", "uvicorn.access")
_TRACEBACKS = logging.Formatter()


def redact(message: str) -> str:
    message = BEARER_SUBPROTOCOL.sub(REDACTED_SUBPROTOCOL, message)
    return CREDENTIAL_HEADER.sub(REDACTED_HEADER, QUERY.sub(REDACTED_QUERY, message))


class Redaction(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: logging reports it itself when formatting
            return True
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        # websockets logs a refused handshake with its exception, whose text can quote the
        # header: formatted and redacted here, and the formatter uses the cached text.
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(_TRACEBACKS.formatException(record.exc_info))
        return True


def redact_uvicorn_logs() -> None:
    """Install the filter on uvicorn's loggers (once: calling again changes nothing). A
    logger's filter sees the records made on it, which is where uvicorn and websockets
    write theirs."""
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, Redaction) for f in logger.filters):
            logger.addFilter(Redaction())
