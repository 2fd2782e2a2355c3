"""MCP results as the model and the user get them."""

import base64

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from adapters.mcp.results import block_text, error_result, prompt_text, tool_result
from adapters.mcp.scrubbing import Scrubber
from domain.tool_call import TextOutput

NO_SECRETS = Scrubber([])


def b64(size: int) -> str:
    return base64.b64encode(b"x" * size).decode()


def test_text_blocks_are_joined_and_shown_to_the_user() -> None:
    result = CallToolResult(content=[TextContent(text="one"), TextContent(text="two")])

    converted = tool_result("srv", "t", result, NO_SECRETS)

    assert (converted.text, converted.is_error) == ("one\ntwo", False)
    assert converted.output == (TextOutput(text="one\ntwo"),)
    assert converted.raw_output == {"server": "srv", "tool": "t", "isError": False}


def test_is_error_makes_an_error_result() -> None:
    result = CallToolResult(content=[TextContent(text="bad")], is_error=True)

    converted = tool_result("srv", "t", result, NO_SECRETS)

    assert (converted.text, converted.is_error) == ("bad", True)
    assert converted.raw_output["isError"] is True


def test_binary_content_becomes_a_short_marker() -> None:
    assert block_text(ImageContent(data=b64(12 * 1024), mime_type="image/png")) == (
        "[image image/png, 12 KB]"
    )
    assert block_text(AudioContent(data=b64(100), mime_type="audio/wav")) == (
        "[audio audio/wav, 100 bytes]"
    )
    blob = BlobResourceContents(uri="file:///a.bin", blob=b64(3), mime_type="application/zip")
    assert block_text(EmbeddedResource(resource=blob)) == (
        "[resource file:///a.bin application/zip, 3 bytes]"
    )


def test_resources_give_their_text_and_links_their_uri() -> None:
    text = TextResourceContents(uri="file:///a.txt", text="body")
    assert block_text(EmbeddedResource(resource=text)) == "body"
    assert block_text(ResourceLink(uri="https://x.test/doc", name="doc")) == (
        "[resource https://x.test/doc]"
    )


def test_structured_content_is_used_when_there_is_no_content() -> None:
    result = CallToolResult(content=[], structured_content={"answer": 42, "ok": True})

    assert tool_result("s", "t", result, NO_SECRETS).text == '{"answer": 42, "ok": true}'


def test_an_empty_result_still_says_something() -> None:
    assert tool_result("s", "t", CallToolResult(content=[]), NO_SECRETS).text == "(no output)"
    failed = CallToolResult(content=[], is_error=True)
    assert tool_result("s", "t", failed, NO_SECRETS).text == "(the tool failed)"


def test_secrets_are_masked_in_results() -> None:
    result = CallToolResult(content=[TextContent(text="token=abcd1234 ok")])

    converted = tool_result("s", "t", result, Scrubber(["abcd1234"]))

    assert converted.text == "token=*** ok"
    assert converted.output == (TextOutput(text="token=*** ok"),)


def test_error_result_tells_the_model_why() -> None:
    result = error_result("s", "t", "the server stopped")

    assert (result.text, result.is_error) == ("the server stopped", True)
    assert result.output == (TextOutput(text="the server stopped"),)


def test_prompt_messages_become_one_text() -> None:
    result = GetPromptResult(
        messages=[
            PromptMessage(role="user", content=TextContent(text="Review it.")),
            PromptMessage(role="assistant", content=TextContent(text="Sure.")),
            PromptMessage(
                role="user",
                content=EmbeddedResource(
                    resource=TextResourceContents(uri="file:///f", text="the file")
                ),
            ),
        ]
    )

    assert prompt_text(result, NO_SECRETS) == "Review it.\n\nSure.\n\nthe file"
