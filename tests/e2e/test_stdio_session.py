from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextResourceContents,
)

from tests.e2e.conftest import DEMO, Spawn

pytestmark = pytest.mark.e2e


async def test_handshake_advertises_only_what_works(spawn: Spawn) -> None:
    async with spawn(DEMO) as agent:
        init = await agent.initialize()
    assert init.protocol_version == 1
    caps = init.agent_capabilities
    assert caps.load_session is True
    assert (
        caps.prompt_capabilities.image,
        caps.prompt_capabilities.audio,
        caps.prompt_capabilities.embedded_context,
    ) == (True, False, True)
    sessions = caps.session_capabilities
    for capability in ("list", "resume", "close", "fork", "delete", "additional_directories"):
        assert getattr(sessions, capability) is not None, capability
    assert (caps.mcp_capabilities.http, caps.mcp_capabilities.sse) == (True, True)
    assert init.agent_info.name == "iac-code"
    assert init.auth_methods == []


async def test_a_prompt_streams_the_reply_and_is_stored(spawn: Spawn, workdir: Path) -> None:
    async with spawn(DEMO) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        assert [o.id for o in session.config_options] == [
            *("mode", "model", "thought_level"),
            *("sandbox", "network"),
        ]
        assert [o.category for o in session.config_options][:3] == [
            *("mode", "model", "thought_level")
        ]
        assert session.modes.current_mode_id == "default"
        result = await agent.conn.prompt(
            session_id=session.session_id, prompt=[text_block("Hello agent")]
        )
    assert result.stop_reason == "end_turn"
    assert result.usage.total_tokens == result.usage.input_tokens + result.usage.output_tokens > 0
    kinds = agent.client.kinds()
    assert "agent_thought_chunk" in kinds and "agent_message_chunk" in kinds
    assert "You said: Hello agent" in agent.client.agent_text()
    chunk_ids = {
        u.message_id for _, u in agent.client.updates if u.session_update == "agent_message_chunk"
    }
    assert len(chunk_ids) == 1
    assert "session_info_update" in kinds


async def test_history_survives_a_restart_and_replays_on_load(spawn: Spawn, workdir: Path) -> None:
    async with spawn(DEMO) as first:
        await first.initialize()
        session = await first.conn.new_session(cwd=str(workdir), mcp_servers=[])
        await first.conn.prompt(
            session_id=session.session_id,
            prompt=[
                text_block("Remember me"),
                ResourceContentBlock(type="resource_link", uri="file:///x/a.py", name="a.py"),
            ],
        )

    async with spawn(DEMO) as second:
        await second.initialize()
        loaded = await second.conn.load_session(
            cwd=str(workdir), session_id=session.session_id, mcp_servers=[]
        )
        updates = list(second.client.updates)  # everything before the load answer
        assert loaded.modes.current_mode_id == "default"
        again = await second.conn.prompt(
            session_id=session.session_id, prompt=[text_block("and again")]
        )
    assert again.stop_reason == "end_turn"
    kinds = [u.session_update for _, u in updates]
    assert kinds[:2] == ["user_message_chunk", "user_message_chunk"]
    assert updates[0][1].content.text == "Remember me"
    assert updates[1][1].content.uri == "file:///x/a.py"
    assert "agent_message_chunk" in kinds and "agent_thought_chunk" in kinds
    # The load answer came after the replay: the last message before it is an update.
    answer_index = next(
        i
        for i, (s, m) in enumerate(second.raw)
        if s == "agent"
        and "result" in m
        and "modes" in m["result"]
        and "sessionId" not in m["result"]
    )
    replayed = [m for s, m in second.raw[:answer_index] if m.get("method") == "session/update"]
    assert len(replayed) == len(updates)


async def test_every_prompt_block_kind_is_accepted(spawn: Spawn, workdir: Path) -> None:
    async with spawn(DEMO) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        result = await agent.conn.prompt(
            session_id=session.session_id,
            prompt=[
                text_block("look"),
                ImageContentBlock(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
                AudioContentBlock(type="audio", data="UklGRg==", mime_type="audio/wav"),
                ResourceContentBlock(type="resource_link", uri="file:///p/a.py", name="a.py"),
                EmbeddedResourceContentBlock(
                    type="resource",
                    resource=TextResourceContents(
                        uri="file:///p/b.py", text="print('b')", mime_type="text/x-python"
                    ),
                ),
            ],
        )
    assert result.stop_reason == "end_turn"
    said = agent.client.agent_text()
    assert "[image: image/png]" in said and "[audio: audio/wav]" in said
    assert "a.py <file:///p/a.py>" in said and "print('b')" in said


async def test_choosing_a_model_and_mode(spawn: Spawn, workdir: Path) -> None:
    async with spawn({**DEMO}) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        options = await agent.conn.set_config_option(
            config_id="model", session_id=session.session_id, value="demo"
        )
        assert {o.id: o.current_value for o in options.config_options}["model"] == "demo"
        with pytest.raises(RequestError) as caught:
            await agent.conn.set_config_option(
                config_id="model", session_id=session.session_id, value="gpt-nope"
            )
        assert caught.value.code == -32602
        assert caught.value.data["allowed"] == ["demo"]
        with pytest.raises(RequestError) as caught:
            await agent.conn.set_config_option(
                config_id="colour", session_id=session.session_id, value="red"
            )
        assert caught.value.data["configId"] == "colour"
        await agent.conn.set_session_mode(session_id=session.session_id, mode_id="default")
        with pytest.raises(RequestError) as caught:
            await agent.conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        assert caught.value.code == -32602


async def test_closed_session_cannot_be_prompted(spawn: Spawn, workdir: Path) -> None:
    async with spawn(DEMO) as agent:
        await agent.initialize()
        session = await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        await agent.conn.close_session(session_id=session.session_id)
        await agent.conn.close_session(session_id=session.session_id)  # idempotent
        with pytest.raises(RequestError) as caught:
            await agent.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
    assert caught.value.code == -32602
    assert caught.value.data == {"sessionId": session.session_id}


async def test_new_session_checks_cwd(spawn: Spawn, workdir: Path) -> None:
    async with spawn(DEMO) as agent:
        await agent.initialize()
        for cwd, reason in (
            ("relative/dir", "not absolute"),
            (str(workdir / "missing"), "no such directory"),
        ):
            with pytest.raises(RequestError) as caught:
                await agent.conn.new_session(cwd=cwd, mcp_servers=[])
            assert caught.value.code == -32602
            assert caught.value.data["field"] == "cwd"
            assert caught.value.data["reason"] == reason


@pytest.mark.parametrize(
    ("provider", "variable"),
    [("anthropic", "ANTHROPIC_API_KEY"), ("DashScope", "DASHSCOPE_API_KEY")],
)
async def test_missing_api_key_is_an_auth_error_not_a_crash(
    spawn: Spawn, workdir: Path, provider: str, variable: str
) -> None:
    async with spawn({"IAC_CODE_PROVIDER": provider}) as agent:
        init = await agent.initialize()
        (method,) = init.auth_methods  # no terminal method: the client did not enable it
        assert method.id == "api-key"
        assert variable in method.description  # the active provider's own key
        with pytest.raises(RequestError) as caught:
            await agent.conn.new_session(cwd=str(workdir), mcp_servers=[])
        assert caught.value.code == -32000
        assert caught.value.data["authMethods"] == ["api-key"]
        with pytest.raises(RequestError) as caught:
            await agent.conn.authenticate(method_id="api-key")
        assert caught.value.code == -32000
        # still serving
        assert (await agent.initialize()).protocol_version == 1
