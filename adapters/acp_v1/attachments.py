"""A prompt's blocks from the wire to the domain, with every image checked at intake.

Image blocks are checked (domain.images). A resource link to a local image file, and an
embedded resource holding an image, become images too, checked the same way. A refused
image refuses the whole prompt with -32602 naming the block, before anything is stored,
so that no image the provider would refuse ever enters a session's history.
"""

import asyncio
import errno
import os
import stat
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from acp import schema as acp

from adapters.acp_v1 import wire
from adapters.protocol.jsonrpc import INVALID_PARAMS, RpcError
from domain.content import ImageBlock, UserInputBlock
from domain.images import (
    DEFAULT_MAX_IMAGE_BYTES,
    InvalidImage,
    check_size,
    checked_image,
    encoded_size,
    image_from_bytes,
    image_type,
)

SETTING = "IAC_CODE_MAX_IMAGE_BYTES"


async def prompt_content(
    blocks: Sequence[wire.AcpPromptBlock], *, max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES
) -> tuple[UserInputBlock, ...]:
    content: list[UserInputBlock] = []
    for index, block in enumerate(blocks):
        try:
            content.append(await _intake(block, max_image_bytes))
        except InvalidImage as exc:
            raise _refused(index, block, str(exc), max_image_bytes, exc.details) from None
        except OSError as exc:  # a linked image file that cannot be read
            reason = {"reason": "unreadable", "error": exc.strerror or type(exc).__name__}
            message = f"The linked image file cannot be read ({reason['error']})."
            raise _refused(index, block, message, max_image_bytes, reason) from None
    return tuple(content)


async def _intake(block: wire.AcpPromptBlock, max_bytes: int) -> UserInputBlock:
    match block:
        case acp.ImageContentBlock(mime_type=mime, data=data, uri=uri):
            image = ImageBlock(mime_type=mime, data=data, uri=uri)
            return checked_image(image, max_bytes=max_bytes)
        case acp.ResourceContentBlock(uri=uri, mime_type=mime) if image_type(mime):
            path = _local_path(uri)
            if path is not None:
                raw = await asyncio.to_thread(_read_image_file, path, mime or "", max_bytes)
                return image_from_bytes(mime or "", raw, uri=uri, max_bytes=max_bytes)
        case acp.EmbeddedResourceContentBlock(
            resource=acp.BlobResourceContents(blob=blob, mime_type=mime, uri=uri)
        ) if image_type(mime):
            image = ImageBlock(mime_type=mime or "", data=blob, uri=uri)
            return checked_image(image, max_bytes=max_bytes)
    return wire.block_from_acp(block)


def _local_path(uri: str) -> str | None:
    """The absolute path a `file://` URI names on this machine, else None."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in ("", "localhost"):
        return None
    # urllib.request (with http.client, email) loads for the first file URI alone: ~3 ms
    # of every start otherwise.
    from urllib.request import url2pathname

    path = url2pathname(parts.path)
    return path if os.path.isabs(path) else None


def _read_image_file(path: str, mime_type: str, max_bytes: int) -> bytes:
    """The file's bytes, up to one byte more than an image within `max_bytes` can have.
    Opened without blocking, and only a regular file is read (a FIFO would never end)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        check_size(mime_type, encoded_size(info.st_size), max_bytes=max_bytes)  # before reading
        limit = max_bytes // 4 * 3 + 1
        chunks: list[bytes] = []
        while limit > 0 and (chunk := os.read(fd, min(limit, 2**20))):
            chunks.append(chunk)
            limit -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _refused(
    index: int, block: wire.AcpPromptBlock, message: str, cap: int, details: dict[str, Any]
) -> RpcError:
    data: dict[str, Any] = {
        "field": f"prompt[{index}]",
        "index": index,
        "type": block.type,
        "mimeType": _mime_of(block),
        "maxBytes": cap,
        "setting": SETTING,
        **details,
    }
    if isinstance(block, acp.ResourceContentBlock):
        data["uri"] = block.uri
    return RpcError(INVALID_PARAMS, f"Invalid params: prompt[{index}]: {message}", data)


def _mime_of(block: wire.AcpPromptBlock) -> str | None:
    if isinstance(block, acp.EmbeddedResourceContentBlock):
        return block.resource.mime_type
    return getattr(block, "mime_type", None)
