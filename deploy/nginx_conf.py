"""Renders deploy/nginx/iac-code.conf.template for a set of replicas (standard library only).

    python3 deploy/nginx_conf.py --listen 8080 replica-a=replica-a:8765 replica-b=replica-b:8765

Each argument is `<IAC_CODE_REPLICA_ID>=<host>:<port>`. The output is the server-level
configuration (nginx's http context). deploy/nginx/iac-code.conf is this script's output for
docker-compose.yml's replicas (a test holds them equal); tests/cluster and bench/cluster.py
render the same template for replicas on loopback ports.
"""

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parent / "nginx" / "iac-code.conf.template"
# As bootstrap/settings.py accepts IAC_CODE_REPLICA_ID: nothing a regex or nginx would read.
REPLICA_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")
ADDRESS = re.compile(r"[A-Za-z0-9_.-]+:[0-9]{1,5}")
# Below the replicas' 5 s (uvicorn's `timeout_keep_alive`): nginx lets an idle connection go
# before the replica may close it, so it never sends a request on a connection being closed
# (a POST that fails so is not retried: the client would get a 502).
KEEPALIVE = "    keepalive 16;\n    keepalive_timeout 4s;\n"


@dataclass(frozen=True, slots=True)
class Replica:
    id: str
    address: str  # host:port

    @classmethod
    def parse(cls, text: str) -> "Replica":
        replica_id, _, address = text.partition("=")
        if not REPLICA_ID.fullmatch(replica_id) or not ADDRESS.fullmatch(address):
            raise ValueError(f"not <replica id>=<host>:<port>: {text!r}")
        return cls(replica_id, address)


def render(replicas: list[Replica], listen: str) -> str:
    ids = [r.id for r in replicas]
    if not replicas or len(set(ids)) != len(ids):
        raise ValueError(f"one or more replicas, each id once: {ids}")
    # Upstream names are numbered: replica ids may hold characters upstream names had better not.
    names = [f"iac_code_{n}" for n in range(1, len(replicas) + 1)]
    routes = "\n".join(
        f'    "~^{r.id}\\." {name};' for r, name in zip(replicas, names, strict=True)
    )
    servers = "".join(f"    server {r.address};\n" for r in replicas)
    upstreams = [f"# Every replica, in turn.\nupstream iac_code_any {{\n{servers}{KEEPALIVE}}}"]
    upstreams += [
        f"# Replica {r.id}.\nupstream {name} {{\n    server {r.address};\n{KEEPALIVE}}}"
        for r, name in zip(replicas, names, strict=True)
    ]
    text = TEMPLATE.read_text()
    for marker, value in (
        ("{{routes}}", routes),
        ("{{upstreams}}", "\n\n".join(upstreams)),
        ("{{listen}}", listen),
    ):
        if text.count(marker) != 1:
            raise ValueError(f"{TEMPLATE.name} must hold {marker} once")
        text = text.replace(marker, value)
    return text


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", default="8080", help="nginx's `listen` (default 8080)")
    parser.add_argument("replicas", nargs="+", metavar="ID=HOST:PORT")
    args = parser.parse_args(argv)
    try:
        replicas = [Replica.parse(text) for text in args.replicas]
        sys.stdout.write(render(replicas, args.listen))
    except ValueError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
