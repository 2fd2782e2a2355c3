"""Inside a sandbox whose network is `allowlist`: a TCP listener on 127.0.0.1 that carries
each connection to the server's egress proxy through the Unix socket bound into the
sandbox (adapters/workspace/egress.py). The command finds it as its HTTP(S)_PROXY.

Run as a script with the server's own interpreter (bound read-only into the sandbox):
`python -I -S forwarder.py PORT SOCKET`. Standard library only. It returns once it
listens, leaving a child that serves until the sandbox's PID namespace ends with the
command, so `forwarder.py ... && exec COMMAND` never lets the command start too early.
"""

import contextlib
import os
import selectors
import socket
import sys
import threading


def _pipe(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _carry(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        while True:
            selector.select()
            client, _ = listener.accept()
            threading.Thread(target=_carry, args=(client, path), daemon=True).start()


def main() -> None:
    port, path = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    if os.fork() != 0:  # listening already: the command may start
        os._exit(0)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    _serve(listener, path)


if __name__ == "__main__":
    main()
