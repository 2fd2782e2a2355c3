"""The line `iac-code acp --transport http` prints once it listens: where to open the web
client, with the token in the link's fragment when one is needed.

The token travels after `#`: browsers never send a fragment to the server (nor in a
Referer), so it reaches no request line, access log or proxy; the page reads it, keeps it in
the tab's session storage and drops it from the address bar. The line goes to stderr, not
through `logging`. Stderr is often a log too (systemd, a container's log driver), so the
token is written only when stderr is a terminal, where a person reads it; elsewhere the
line says where to put it. IAC_CODE_HTTP_SIGN_IN_LINK changes that: `always` writes the
token wherever stderr goes, `never` leaves it out even on a terminal."""

import ipaddress
import socket
from collections.abc import Collection, Mapping
from typing import TextIO
from urllib.parse import quote

from bootstrap.settings import SettingsError

SETTING = "IAC_CODE_HTTP_SIGN_IN_LINK"
CHOICES = ("auto", "always", "never")
WILDCARDS = ("0.0.0.0", "::", "")


def sign_in_choice(environ: Mapping[str, str]) -> str:
    """IAC_CODE_HTTP_SIGN_IN_LINK, `auto` when unset; SettingsError for anything else."""
    choice = environ.get(SETTING, "").strip().lower() or "auto"
    if choice not in CHOICES:
        raise SettingsError(f"{SETTING} must be one of {', '.join(CHOICES)}, not {choice[:40]!r}")
    return choice


def link_host(host: str, allowed_hosts: Collection[str] | None) -> str:
    """The host name a browser should use for a server bound to `host`, bracketed when it
    is an IPv6 address. Bound to every interface, it is this machine's name, or one of the
    names the server answers to when they are restricted."""
    if host in WILDCARDS:
        name = socket.gethostname()
        if allowed_hosts and name.lower() not in allowed_hosts:
            name = sorted(allowed_hosts)[0]
        host = name
    try:
        is_v6 = ipaddress.ip_address(host).version == 6
    except ValueError:
        is_v6 = False
    return f"[{host}]" if is_v6 else host


def sign_in_link(base: str, token: str | None) -> str:
    """`base/`, with `#token=<token, percent-encoded>` when a token is needed."""
    root = f"{base.rstrip('/')}/"
    return f"{root}#token={quote(token, safe='')}" if token else root


def shows_token(choice: str, stream: TextIO) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    try:
        return stream.isatty()
    except ValueError:  # closed
        return False


def announcement(base: str, token: str | None, *, show_token: bool) -> str:
    """The line(s) to print: the link to open, or, when the token is kept out, the link
    and where to add it."""
    if not token or show_token:
        return f"iac-code: web client: open {sign_in_link(base, token)}"
    return (
        f"iac-code: web client: open {sign_in_link(base, None)} and sign in with the token "
        f"(IACCODE_ACP_HTTP_TOKEN), or open {base.rstrip('/')}/#token=<the token, "
        f"URL-encoded>; the token is printed only on a terminal ({SETTING}=always prints it "
        "here too)"
    )
