"""The HTTP server's listening sockets, bound before anything says the server started.

uvicorn binds after its start-up has run and, on a port in use, logs the bind error after
"startup complete" and exits without a hint. Binding first, as asyncio would (every address
the host resolves to, SO_REUSEADDR, IPv6 sockets IPv6 only), turns that into one line that
says what to change; uvicorn then serves on these sockets."""

import socket


class CannotListen(OSError):
    pass


def listening_sockets(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address of `host` at `port` (not listening yet: uvicorn's
    server does), or CannotListen naming the address and the flags that change it."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise CannotListen(_advice(host, port, f"the host does not resolve ({exc})")) from None
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError as exc:
        for sock in bound:
            sock.close()
        raise CannotListen(_advice(host, port, exc.strerror or str(exc))) from None
    return bound


def _advice(host: str, port: int, reason: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return (
        f"cannot listen on {shown}:{port}: {reason}; choose another port with --port "
        "(or another address with --host)"
    )
