"""Prompt intake: images checked and turned into image blocks, refusals naming the block."""

import base64
import os
from pathlib import Path

import pytest
from acp import schema as acp

from adapters.acp_v1.attachments import prompt_content
from adapters.acp_v1.wire import block_from_acp, block_to_acp
from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from domain.content import (
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
JPEG = b"\xff\xd8\xff\xe0" + bytes(16)
CAP = 1024


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def image(mime: str, raw: bytes) -> acp.ImageContentBlock:
    return acp.ImageContentBlock(type="image", data=b64(raw), mime_type=mime)


def link(uri: str, mime: str | None = "image/png") -> acp.ResourceContentBlock:
    return acp.ResourceContentBlock(type="resource_link", uri=uri, name="shot", mime_type=mime)


def blob(raw: bytes, mime: str | None) -> acp.EmbeddedResourceContentBlock:
    return acp.EmbeddedResourceContentBlock(
        type="resource",
        resource=acp.BlobResourceContents(uri="file:///p/x.png", blob=b64(raw), mime_type=mime),
    )


TEXT = acp.TextContentBlock(type="text", text="look")


async def refused(*blocks: object, cap: int = CAP) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await prompt_content(list(blocks), max_image_bytes=cap)  # type: ignore[arg-type]
    assert caught.value.code == INVALID_PARAMS
    return caught.value


async def test_an_image_block_becomes_a_checked_image_with_its_data() -> None:
    content = await prompt_content([TEXT, image("image/jpg", JPEG)], max_image_bytes=CAP)
    assert content == (
        TextBlock(text="look"),
        ImageBlock(mime_type="image/jpeg", data=b64(JPEG)),
    )


async def test_an_oversized_image_is_refused_naming_its_index_type_reason_and_the_cap() -> None:
    error = await refused(TEXT, image("image/png", PNG + bytes(CAP)))
    assert error.data == {
        "field": "prompt[1]",
        "index": 1,
        "type": "image",
        "mimeType": "image/png",
        "reason": "too_large",
        "bytes": len(b64(PNG + bytes(CAP))),
        "maxBytes": CAP,
        "setting": "IAC_CODE_MAX_IMAGE_BYTES",
    }
    assert "prompt[1]" in error.message


async def test_a_png_labelled_jpeg_is_refused_naming_what_its_bytes_are() -> None:
    error = await refused(image("image/jpeg", PNG))
    assert error.data is not None
    assert (error.data["index"], error.data["mimeType"], error.data["reason"]) == (
        0,
        "image/jpeg",
        "type_mismatch",
    )
    assert error.data["detected"] == "image/png"
    assert error.data["maxBytes"] == CAP


async def test_an_unknown_image_type_is_refused() -> None:
    error = await refused(image("image/bmp", b"BM" + bytes(20)))
    assert error.data is not None
    assert error.data["reason"] == "unsupported_type"


async def test_a_file_link_to_an_image_is_read_and_goes_as_an_image(tmp_path: Path) -> None:
    (tmp_path / "shot one.png").write_bytes(PNG)
    uri = (tmp_path / "shot one.png").as_uri()  # file:///…/shot%20one.png
    content = await prompt_content([link(uri)], max_image_bytes=CAP)
    assert content == (ImageBlock(mime_type="image/png", data=b64(PNG), uri=uri),)


async def test_a_file_link_is_checked_like_an_inline_image(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(PNG + bytes(CAP))
    (tmp_path / "liar.png").write_bytes(JPEG)
    big = await refused(TEXT, link((tmp_path / "big.png").as_uri()))
    liar = await refused(link((tmp_path / "liar.png").as_uri()))
    assert big.data is not None and liar.data is not None
    assert (big.data["index"], big.data["type"], big.data["reason"]) == (
        1,
        "resource_link",
        "too_large",
    )
    assert big.data["uri"] == (tmp_path / "big.png").as_uri()
    assert (liar.data["reason"], liar.data["detected"]) == ("type_mismatch", "image/jpeg")


async def test_a_file_link_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    missing = await refused(link((tmp_path / "gone.png").as_uri()))
    directory = await refused(link(tmp_path.as_uri()))
    assert missing.data is not None and directory.data is not None
    assert missing.data["reason"] == directory.data["reason"] == "unreadable"
    assert directory.data["error"] == "not a regular file"


async def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    error = await refused(link(fifo.as_uri()))
    assert error.data is not None
    assert error.data["reason"] == "unreadable"


@pytest.mark.parametrize(
    "block",
    [
        link("https://example.com/a.png"),  # not a local file
        link("file://otherhost/a.png"),
        link("file:///p/a.svg", "image/svg+xml"),  # an image type the model cannot read
        link("file:///p/a.py", "text/x-python"),
        link("file:///p/a.png", None),
    ],
)
async def test_other_resource_links_stay_links(block: acp.ResourceContentBlock) -> None:
    content = await prompt_content([block], max_image_bytes=CAP)
    assert content == (ResourceLinkBlock(uri=block.uri, name="shot", mime_type=block.mime_type),)


async def test_an_embedded_image_resource_goes_as_an_image_and_is_checked() -> None:
    content = await prompt_content([blob(PNG, "image/png")], max_image_bytes=CAP)
    assert content == (ImageBlock(mime_type="image/png", data=b64(PNG), uri="file:///p/x.png"),)
    error = await refused(blob(JPEG, "image/png"))
    assert error.data is not None
    assert (error.data["type"], error.data["mimeType"], error.data["reason"]) == (
        "resource",
        "image/png",
        "type_mismatch",
    )


async def test_other_binary_resources_stay_binary_markers() -> None:
    content = await prompt_content([blob(b"%PDF-1.7", "application/pdf")], max_image_bytes=CAP)
    assert content == (
        EmbeddedResourceBlock(uri="file:///p/x.png", mime_type="application/pdf", is_binary=True),
    )


def test_an_image_goes_back_on_the_wire_with_its_data_and_an_old_one_as_its_marker() -> None:
    stored = ImageBlock(mime_type="image/png", data=b64(PNG), uri="file:///p/a.png")
    assert block_to_acp(stored) == acp.ImageContentBlock(
        type="image", data=b64(PNG), mime_type="image/png", uri="file:///p/a.png"
    )
    assert block_from_acp(block_to_acp(stored)) == stored
    old = ImageBlock(mime_type="image/png")
    assert block_to_acp(old) == acp.TextContentBlock(type="text", text="[image: image/png]")
