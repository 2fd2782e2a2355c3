"""Elicitation through the real process and the official client (its unstable
`create_elicitation` / `complete_elicitation` handlers) against the scripted Messages API:
the model's `ask_user` tool, and an MCP server's own elicitation requests, with and without
the client's `elicitation` capability. Every elicitation frame is checked against the newest
schema file besides the SDK's models."""

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.schema import (
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
)

from tests.e2e.conftest import DEMO, Agent, RecordingClient, Spawn, anthropic_env, until
from tests.e2e.test_stdio_mcp import stdio_server
from tests.e2e.test_stdio_tools import all_valid, calls, tool_results
from tests.support.mcp_server import SIGN_IN_URL
from tests.support.schema_file import SchemaFileValidator
from tests.support.scripted_anthropic import ScriptedAnthropic, stream, text, tool_use
from tests.support.wire_validator import AGENT, CLIENT

pytestmark = pytest.mark.e2e

FORM_ONLY = ClientCapabilities(
    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
)
FORM_AND_URL = ClientCapabilities(
    elicitation=ElicitationCapabilities(
        form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()
    )
)
BRANCH = {"question": "Which branch?", "choices": ["main", "dev"]}
ELICITATION = ("elicitation/create", "elicitation/complete", "$/cancel_request")


@dataclass
class AskedClient(RecordingClient):
    """Answers each elicitation with the next of `replies` (a result, or an event to wait
    on first: the question stays open until it is set)."""

    replies: list[dict[str, Any] | asyncio.Event] = field(default_factory=list)
    elicitations: list[tuple[str, Any, dict[str, Any]]] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> dict[str, Any]:
        self.elicitations.append((message, mode, kwargs))
        reply = self.replies.pop(0) if self.replies else {"action": "cancel"}
        if isinstance(reply, asyncio.Event):
            await reply.wait()
            return {"action": "cancel"}
        return reply

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        self.completed.append(elicitation_id)


def elicitation_frames_valid(agent: Agent) -> list[dict[str, Any]]:
    """The elicitation requests and notifications the agent sent, and the client's answers
    to them, each checked against the newest schema file; the requests are returned."""
    checker = SchemaFileValidator()
    asked = {m["id"] for m in agent.sent_by_agent("elicitation/create")}
    for sender, message in agent.raw:
        ours = sender == AGENT and message.get("method") in ELICITATION
        answer = sender == CLIENT and "method" not in message and message.get("id") in asked
        if ours or answer:
            checker.check(sender, message)
    assert not checker.problems, "\n".join(checker.problems)
    return agent.sent_by_agent("elicitation/create")


async def start(agent: Agent, workdir: Path, capabilities: ClientCapabilities, *mcp: Any) -> str:
    await agent.initialize(capabilities)
    session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=list(mcp))
    return session.session_id


def offered(server: ScriptedAnthropic, request: int = 0) -> set[str]:
    return {t["name"] for t in server.requests[request].body["tools"]}


async def test_ask_user_is_answered_through_a_form_and_accept_decline_cancel_differ(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(tool_use("ask_user", BRANCH, id="toolu_a1")),
        calls(tool_use("ask_user", BRANCH, id="toolu_a2")),
        calls(tool_use("ask_user", {"question": "Why not?"}, id="toolu_a3")),
        stream(text("Working on dev.")),
    )
    client = AskedClient(
        replies=[
            {"action": "accept", "content": {"answer": "dev"}},
            {"action": "decline"},
            {"action": "cancel"},
        ]
    )
    async with spawn(anthropic_env(server), client) as agent:
        sid = await start(agent, workdir, FORM_ONLY)
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("pick a branch")])
        assert result.stop_reason == "end_turn"
    assert "ask_user" in offered(server)
    answers = [tool_results(server, i)[0] for i in (1, 2, 3)]
    assert [a["content"] for a in answers] == [
        "The user answered: dev",
        "The user declined to answer.",
        "The user cancelled the question.",
    ]
    assert not any(a.get("is_error") for a in answers)
    assert client.permission_requests == []  # asking the user needs no permission
    first = elicitation_frames_valid(agent)[0]["params"]
    assert first == {
        "sessionId": sid,
        "message": "Which branch?",
        "mode": "form",
        "toolCallId": "toolu_a1",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "answer": {
                    "type": "string",
                    "title": "Answer",
                    "oneOf": [
                        {"const": "main", "title": "main"},
                        {"const": "dev", "title": "dev"},
                    ],
                }
            },
            "required": ["answer"],
        },
    }
    done = agent.client.tool_updates("toolu_a1")[-1]
    assert done.status == "completed"
    assert done.raw_output == {"action": "accept", "content": {"answer": "dev"}}
    all_valid(server)

    # A new process on the same database: the load replays the question and its answer,
    # asking nothing again.
    async with spawn(anthropic_env(server), AskedClient()) as second:
        await second.initialize(FORM_ONLY)
        await second.conn.load_session(cwd=str(workdir), session_id=sid, mcp_servers=[])
        replayed = second.client.tool_updates("toolu_a1")
    assert (replayed[0].session_update, replayed[0].title) == ("tool_call", "Ask: Which branch?")
    assert replayed[-1].raw_output == done.raw_output
    assert second.sent_by_agent("elicitation/create") == []


async def test_without_the_capability_ask_user_is_not_offered_and_nothing_is_elicited(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(
        calls(tool_use("ask_user", BRANCH, id="toolu_n1")),  # a model that calls it anyway
        stream(text("I will ask in my reply then.")),
    )
    client = AskedClient()
    async with spawn(anthropic_env(server), client) as agent:
        sid = await start(agent, workdir, ClientCapabilities())
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("pick")])
        assert result.stop_reason == "end_turn"
    assert "ask_user" not in offered(server)
    assert agent.sent_by_agent("elicitation/create") == []
    (refused,) = tool_results(server, 1)
    assert refused["is_error"] and "ask_user is not available" in str(refused["content"])
    all_valid(server)


async def test_cancelling_the_turn_withdraws_a_pending_question(
    spawn: Spawn, workdir: Path, server: ScriptedAnthropic
) -> None:
    server.script(calls(tool_use("ask_user", BRANCH, id="toolu_c1")), stream(text("next")))
    held = asyncio.Event()
    client = AskedClient(replies=[held])
    async with spawn(anthropic_env(server), client) as agent:
        sid = await start(agent, workdir, FORM_ONLY)
        prompting = asyncio.ensure_future(
            agent.conn.prompt(session_id=sid, prompt=[text_block("pick")])
        )
        await until(lambda: bool(client.elicitations), agent)
        await agent.conn.cancel(session_id=sid)
        result = await asyncio.wait_for(prompting, 30)
        assert result.stop_reason == "cancelled"
        (request,) = agent.sent_by_agent("elicitation/create")
        withdrawn = [m["params"]["requestId"] for m in agent.sent_by_agent("$/cancel_request")]
        assert withdrawn == [request["id"]]
        assert client.tool_updates("toolu_c1")[-1].status == "failed"  # ACP has no cancelled
        again = await agent.conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        assert again.stop_reason == "end_turn"
        held.set()  # the client's dialog closes late: its answer is ignored
    elicitation_frames_valid(agent)


@pytest.mark.parametrize(
    ("capabilities", "reply", "expected"),
    [
        (FORM_ONLY, {"action": "accept", "content": {"name": "Ada"}}, "accept: Ada"),
        (FORM_ONLY, {"action": "decline"}, "decline"),
        (ClientCapabilities(), None, "decline"),  # no client support: declined, unasked
    ],
)
async def test_an_mcp_servers_form_is_forwarded_to_the_client(
    spawn: Spawn,
    workdir: Path,
    server: ScriptedAnthropic,
    capabilities: ClientCapabilities,
    reply: dict[str, Any] | None,
    expected: str,
) -> None:
    server.script(
        calls(tool_use("mcp__tests__ask_name", {}, id="toolu_m1")), stream(text("Hello."))
    )
    client = AskedClient(replies=[reply] if reply else [], answers=["allow_once"])
    async with spawn(anthropic_env(server), client) as agent:
        sid = await start(agent, workdir, capabilities, stdio_server("tests"))
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("ask my name")])
        assert result.stop_reason == "end_turn"
    assert expected in str(tool_results(server, 1)[0]["content"])
    requests = elicitation_frames_valid(agent)
    if reply is None:
        assert requests == []
        return
    (request,) = requests
    params = request["params"]
    assert (params["mode"], params["message"], params["toolCallId"]) == (
        "form",
        "What is your name?",
        "toolu_m1",
    )
    assert "name" in params["requestedSchema"]["properties"]


@pytest.mark.parametrize(
    ("capabilities", "expected"), [(FORM_AND_URL, "accept"), (FORM_ONLY, "decline")]
)
async def test_an_mcp_servers_url_step_goes_to_a_client_that_shows_urls(
    spawn: Spawn,
    workdir: Path,
    server: ScriptedAnthropic,
    capabilities: ClientCapabilities,
    expected: str,
) -> None:
    server.script(
        calls(tool_use("mcp__tests__sign_in", {}, id="toolu_u1")), stream(text("Signed in."))
    )
    client = AskedClient(replies=[{"action": "accept"}], answers=["allow_once"])
    async with spawn(anthropic_env(server), client) as agent:
        sid = await start(agent, workdir, capabilities, stdio_server("tests"))
        result = await agent.conn.prompt(session_id=sid, prompt=[text_block("sign in")])
        assert result.stop_reason == "end_turn"
        if expected == "accept":
            await until(lambda: bool(client.completed), agent)
    assert expected in str(tool_results(server, 1)[0]["content"])
    requests = elicitation_frames_valid(agent)
    if expected == "decline":
        assert requests == [] and client.completed == []
        return
    (request,) = requests
    params = request["params"]
    assert (params["mode"], params["url"], params["toolCallId"]) == ("url", SIGN_IN_URL, "toolu_u1")
    assert client.completed == [params["elicitationId"]]


async def test_the_demo_model_asks_offline(spawn: Spawn, workdir: Path) -> None:
    client = AskedClient(replies=[{"action": "accept", "content": {"answer": "dev"}}])
    async with spawn(DEMO, client) as agent:
        sid = await start(agent, workdir, FORM_ONLY)
        said = [text_block("ask which branch: main, dev")]
        result = await agent.conn.prompt(session_id=sid, prompt=said)
        assert result.stop_reason == "end_turn"
    ((message, mode, _),) = client.elicitations
    assert message == "which branch"
    assert [o.const for o in mode.requested_schema.properties["answer"].one_of] == ["main", "dev"]
    assert client.agent_text().endswith("Thanks: you answered dev.")
    elicitation_frames_valid(agent)
