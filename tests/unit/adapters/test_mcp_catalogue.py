"""Listing a server's tools and prompts: every page, names sanitised, collisions dropped."""

import logging

import pytest
from mcp_types import (
    ListPromptsResult,
    ListToolsResult,
    Prompt,
    PromptArgument,
    Tool,
    ToolAnnotations,
)

from adapters.mcp.catalogue import PAGE_LIMIT, catalogue, list_catalogue, tool_title

SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}}}


def tool(name: str, **fields: object) -> Tool:
    return Tool(name=name, input_schema=SCHEMA, **fields)  # type: ignore[arg-type]


class PagedServer:
    def __init__(self, tool_pages: list[list[Tool]], prompt_pages: list[list[Prompt]]) -> None:
        self.tool_pages = tool_pages
        self.prompt_pages = prompt_pages
        self.cursors: list[str | None] = []

    async def list_tools(self, *, cursor: str | None = None) -> ListToolsResult:
        self.cursors.append(cursor)
        index = int(cursor or 0)
        more = index + 1 < len(self.tool_pages)
        return ListToolsResult(
            tools=self.tool_pages[index], next_cursor=str(index + 1) if more else None
        )

    async def list_prompts(self, *, cursor: str | None = None) -> ListPromptsResult:
        index = int(cursor or 0)
        more = index + 1 < len(self.prompt_pages)
        return ListPromptsResult(
            prompts=self.prompt_pages[index], next_cursor=str(index + 1) if more else None
        )


async def test_every_page_is_listed() -> None:
    server = PagedServer([[tool("a")], [tool("b")], [tool("c")]], [[Prompt(name="p")], []])

    listed = await list_catalogue("srv", server, has_prompts=True)

    assert list(listed.tools) == ["mcp__srv__a", "mcp__srv__b", "mcp__srv__c"]
    assert list(listed.prompts) == ["mcp__srv__p"]
    assert server.cursors == [None, "1", "2"]


async def test_a_cursor_that_never_ends_is_cut_short() -> None:
    class Endless(PagedServer):
        async def list_tools(self, *, cursor: str | None = None) -> ListToolsResult:
            self.cursors.append(cursor)
            return ListToolsResult(tools=[], next_cursor="again")

    server = Endless([], [])

    await list_catalogue("srv", server, has_prompts=False)

    assert len(server.cursors) == PAGE_LIMIT


async def test_prompts_are_not_asked_of_a_server_without_them() -> None:
    server = PagedServer([[tool("a")]], [])  # listing prompts would fail

    listed = await list_catalogue("srv", server, has_prompts=False)

    assert listed.prompts == {}


def test_tools_are_offered_under_their_qualified_name() -> None:
    listed = catalogue("my server", [tool("read.file", description="Reads.\nMore.")], [])

    offered, own_name = listed.tools["mcp__my_server__read_file"]
    assert own_name == "read.file"
    assert offered.server == "my server"
    assert offered.definition.input_schema == SCHEMA
    assert offered.definition.description == "Reads.\nMore."
    assert offered.title == "Reads."


def test_titles_fall_back_in_order() -> None:
    assert tool_title(tool("t", title="Title", description="Desc")) == "Title"
    annotated = tool("t", annotations=ToolAnnotations(title="Annotated"), description="Desc")
    assert tool_title(annotated) == "Annotated"
    assert tool_title(tool("t", description="\n  First line\nsecond")) == "First line"
    assert tool_title(tool("t")) == "t"


def test_colliding_names_keep_the_first(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    listed = catalogue(
        "s",
        [tool("a.b", description="first"), tool("a_b", description="second")],
        [Prompt(name="p q"), Prompt(name="p_q")],
    )

    assert [(t.definition.description, n) for t, n in listed.tools.values()] == [("first", "a.b")]
    assert [own for _, own in listed.prompts.values()] == ["p q"]
    assert "'a_b'" in caplog.text and "only 'a.b' is offered" in caplog.text


def test_long_names_stay_within_the_limit() -> None:
    listed = catalogue("server", [tool("x" * 100)], [])

    assert [len(name) for name in listed.tools] == [64]


def test_prompts_keep_their_arguments() -> None:
    prompt = Prompt(
        name="review",
        description="Review a file.",
        arguments=[
            PromptArgument(name="file", description="Which file", required=True),
            PromptArgument(name="focus"),
        ],
    )

    [(offered, own)] = catalogue("s", [], [prompt]).prompts.values()

    assert (offered.name, offered.server, offered.description, own) == (
        "mcp__s__review", "s", "Review a file.", "review",
    )  # fmt: skip
    assert [(a.name, a.description, a.required) for a in offered.arguments] == [
        ("file", "Which file", True),
        ("focus", "", False),
    ]
