"""A small HTTP server for the sandbox's network tests, and a command that fetches from
it with the server's own interpreter (which an `allowlist` sandbox has bound, for its
proxy's forwarder, and whose standard library follows HTTP_PROXY)."""

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PYTHON = os.path.realpath(sys.executable)  # bound into an allowlist sandbox for its proxy


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {self.server.server_address[0]}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        return None


@contextmanager
def serving(host: str) -> Iterator[int]:
    server = ThreadingHTTPServer((host, 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def fetch(url: str) -> str:
    """A command fetching `url` with the standard library, which follows HTTP_PROXY."""
    code = (
        "import urllib.request, urllib.error\n"
        "try:\n"
        f"    print(urllib.request.urlopen('{url}', timeout=10).read().decode())\n"
        "except urllib.error.HTTPError as e:\n"
        "    print(e.code, e.read().decode())\n"
        "except Exception as e:\n"
        "    print('unreachable', type(e).__name__)\n"
    )
    return f'{PYTHON} -I -c "{code}"'
