"""Which images may go to the model, checked before anything is stored.

The provider refuses an image of a type it does not read, one whose bytes are not of the
type it is labelled with, and one over its size limit. Such an image stored in a session's
history would make every later request of that session fail, so each image is checked
when it arrives and refused whole.

Sizes are counted on the base64 text, as the provider counts them (its 5 MB limit applies
to the encoded image, about 4/3 of the file): a limit on the file's size would let through
images the provider then refuses.
"""

import base64
import binascii
from dataclasses import replace
from enum import StrEnum

from domain.content import ImageBlock
from domain.errors import DomainError

DEFAULT_MAX_IMAGE_BYTES = 5 * 2**20

# The types the provider reads, each with the signatures its files start with.
_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # and "WEBP" at offset 8, see _sniff
}
IMAGE_TYPES = tuple(_SIGNATURES)
_ALIASES = {"image/jpg": "image/jpeg"}  # a common mislabel of the same format


class ImageProblem(StrEnum):
    UNSUPPORTED_TYPE = "unsupported_type"
    INVALID_BASE64 = "invalid_base64"
    TOO_LARGE = "too_large"
    TYPE_MISMATCH = "type_mismatch"


class InvalidImage(DomainError):
    default_message = "The image cannot be sent to the model."

    def __init__(self, message: str, *, reason: ImageProblem, **details: object) -> None:
        super().__init__(message, reason=reason.value, **details)
        self.reason = reason


def image_type(mime_type: str | None) -> str | None:
    """The supported type `mime_type` names (any case, parameters ignored), or None."""
    if not mime_type:
        return None
    name = mime_type.split(";", 1)[0].strip().lower()
    name = _ALIASES.get(name, name)
    return name if name in _SIGNATURES else None


def encoded_size(raw_bytes: int) -> int:
    """The length of `raw_bytes` bytes in padded base64."""
    return 4 * -(-raw_bytes // 3)


def sniff(data: bytes) -> str | None:
    """The supported type these bytes are, judged by their first bytes, or None."""
    for mime, signatures in _SIGNATURES.items():
        if data.startswith(signatures):
            if mime == "image/webp" and data[8:12] != b"WEBP":
                continue
            return mime
    return None


def check_size(mime_type: str, size: int, *, max_bytes: int) -> None:
    """Refuse an image of `size` base64 bytes over `max_bytes`."""
    if size > max_bytes:
        raise InvalidImage(
            f"The image is {size:,} bytes as base64, over the limit of {max_bytes:,}.",
            reason=ImageProblem.TOO_LARGE,
            mimeType=mime_type,
            bytes=size,
            maxBytes=max_bytes,
        )


def checked_image(block: ImageBlock, *, max_bytes: int) -> ImageBlock:
    """The image as it may be stored and sent: its type named the standard way, its data
    without whitespace. Raises InvalidImage saying what is wrong."""
    mime = image_type(block.mime_type)
    if mime is None:
        raise InvalidImage(
            f"Image type {block.mime_type!r} is not supported: use one of "
            f"{', '.join(IMAGE_TYPES)}.",
            reason=ImageProblem.UNSUPPORTED_TYPE,
            mimeType=block.mime_type,
            supported=list(IMAGE_TYPES),
        )
    data = "".join((block.data or "").split())  # line-wrapped base64 is still base64
    check_size(block.mime_type, len(data), max_bytes=max_bytes)
    raw = _decoded(block.mime_type, data)
    found = sniff(raw)
    if found != mime:
        raise InvalidImage(
            f"The image is labelled {block.mime_type} but its bytes are "
            f"{found or 'not an image of a supported type'}.",
            reason=ImageProblem.TYPE_MISMATCH,
            mimeType=block.mime_type,
            detected=found,
        )
    return replace(block, mime_type=mime, data=data)


def _decoded(mime_type: str, data: str) -> bytes:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidImage(
            f"The image data is not valid base64 ({exc}).",
            reason=ImageProblem.INVALID_BASE64,
            mimeType=mime_type,
        ) from None
    if not raw:
        raise InvalidImage(
            "The image has no data.", reason=ImageProblem.INVALID_BASE64, mimeType=mime_type
        )
    return raw


def image_from_bytes(mime_type: str, raw: bytes, *, uri: str | None, max_bytes: int) -> ImageBlock:
    """An image read from a file or a resource, checked like one sent inline."""
    check_size(mime_type, encoded_size(len(raw)), max_bytes=max_bytes)
    encoded = base64.b64encode(raw).decode("ascii")
    return checked_image(
        ImageBlock(mime_type=mime_type, data=encoded, uri=uri), max_bytes=max_bytes
    )
