"""deploy/nginx_conf.py renders the nginx configuration for any set of replicas: each
replica id routes to an upstream of that replica alone; requests without an id to all."""

import re
import subprocess
import sys

import pytest

from deploy.nginx_conf import Replica, render
from tests.http.container import ROOT

THREE = [Replica("r1", "a:8765"), Replica("b-2", "b:9000"), Replica("c_3", "c:1")]


def upstream_servers(text: str) -> dict[str, list[str]]:
    blocks = re.findall(r"^upstream (\w+) \{\n(.*?)^\}", text, re.MULTILINE | re.DOTALL)
    return {name: re.findall(r"^\s+server (\S+);", body, re.MULTILINE) for name, body in blocks}


def test_each_replica_id_routes_to_that_replica_alone_and_no_id_to_every_one() -> None:
    text = render(THREE, listen="127.0.0.1:8080")
    routes = dict(re.findall(r'^\s+"~\^([\w-]+)\\\." (\w+);$', text, re.MULTILINE))
    servers = upstream_servers(text)
    assert {r.id: servers[routes[r.id]] for r in THREE} == {r.id: [r.address] for r in THREE}
    assert re.search(r"^\s+default iac_code_any;$", text, re.MULTILINE)
    assert servers["iac_code_any"] == [r.address for r in THREE]
    assert re.search(r"^\s+listen 127\.0\.0\.1:8080;$", text, re.MULTILINE)
    assert "{{" not in text


@pytest.mark.parametrize(
    "replicas",
    [
        [],
        [Replica("r1", "a:1"), Replica("r1", "b:2")],
    ],
    ids=["none", "an id twice"],
)
def test_a_replica_set_that_cannot_route_is_refused(replicas: list[Replica]) -> None:
    with pytest.raises(ValueError, match="each id once"):
        render(replicas, listen="8080")


@pytest.mark.parametrize("text", ["r.1=a:1", "r1=a", "r1=a:port", "=a:1", "r1 a:1", "r1=a b:1"])
def test_a_replica_that_is_not_id_equals_host_port_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not <replica id>=<host>:<port>"):
        Replica.parse(text)


def test_the_committed_configuration_is_what_the_documented_command_prints() -> None:
    command = [
        sys.executable,
        str(ROOT / "deploy" / "nginx_conf.py"),
        "--listen",
        "8080",
        "replica-a=replica-a:8765",
        "replica-b=replica-b:8765",
    ]
    printed = subprocess.run(command, capture_output=True, text=True, check=True, timeout=30)
    assert printed.stdout == (ROOT / "deploy" / "nginx" / "iac-code.conf").read_text()
    assert " ".join(command[2:]) in (ROOT / "docs" / "deploy.md").read_text()
