"""The image rules: what may go to the model, and why the rest is refused."""

import base64

import pytest

from domain.content import ImageBlock
from domain.images import (
    DEFAULT_MAX_IMAGE_BYTES,
    IMAGE_TYPES,
    ImageProblem,
    InvalidImage,
    checked_image,
    encoded_size,
    image_from_bytes,
    image_type,
    sniff,
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(8)
GIF87 = b"GIF87a" + bytes(10)
GIF89 = b"GIF89a" + bytes(10)
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8 " + bytes(8)
WAVE = b"RIFF\x1a\x00\x00\x00WAVEfmt " + bytes(8)  # RIFF, but not an image

CAP = 1024


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def image(mime: str, raw: bytes) -> ImageBlock:
    return ImageBlock(mime_type=mime, data=b64(raw))


def refusal(block: ImageBlock, cap: int = CAP) -> InvalidImage:
    with pytest.raises(InvalidImage) as caught:
        checked_image(block, max_bytes=cap)
    return caught.value


@pytest.mark.parametrize(
    ("mime", "raw"),
    [
        ("image/png", PNG),
        ("image/jpeg", JPEG),
        ("image/gif", GIF87),
        ("image/gif", GIF89),
        ("image/webp", WEBP),
    ],
)
def test_every_supported_type_is_accepted_unchanged(mime: str, raw: bytes) -> None:
    block = image(mime, raw)
    assert checked_image(block, max_bytes=CAP) == block


def test_the_supported_types_are_the_four_the_provider_reads() -> None:
    assert set(IMAGE_TYPES) == {"image/png", "image/jpeg", "image/gif", "image/webp"}
    assert DEFAULT_MAX_IMAGE_BYTES == 5 * 2**20


def test_a_type_in_another_case_or_the_jpg_alias_is_named_the_standard_way() -> None:
    assert checked_image(image("IMAGE/PNG", PNG), max_bytes=CAP).mime_type == "image/png"
    assert checked_image(image("image/jpg", JPEG), max_bytes=CAP).mime_type == "image/jpeg"
    assert image_type("image/webp; q=1") == "image/webp"
    assert image_type(None) is None


@pytest.mark.parametrize("mime", ["image/bmp", "image/svg+xml", "image/tiff", "text/plain", ""])
def test_an_unsupported_type_is_refused(mime: str) -> None:
    problem = refusal(image(mime, PNG))
    assert problem.reason is ImageProblem.UNSUPPORTED_TYPE
    assert problem.details["mimeType"] == mime
    assert problem.details["supported"] == list(IMAGE_TYPES)


@pytest.mark.parametrize(
    "data",
    [
        "not base64!",
        b64(PNG)[:-1],  # padding cut off
        b64(PNG).replace("+", "-").replace("/", "_") + "-_",  # the URL-safe alphabet
        "iVBORw0KGgo=\u00e9",  # non-ASCII
        "",
        "====",
    ],
)
def test_bad_base64_is_refused(data: str) -> None:
    problem = refusal(ImageBlock(mime_type="image/png", data=data))
    assert problem.reason is ImageProblem.INVALID_BASE64
    assert problem.details["mimeType"] == "image/png"


def test_an_image_without_data_is_refused() -> None:
    assert refusal(ImageBlock(mime_type="image/png")).reason is ImageProblem.INVALID_BASE64


def test_base64_wrapped_over_lines_is_accepted_and_stored_unwrapped() -> None:
    data = b64(PNG)
    wrapped = "\n".join(data[i : i + 8] for i in range(0, len(data), 8)) + "\r\n"
    checked = checked_image(ImageBlock(mime_type="image/png", data=wrapped), max_bytes=CAP)
    assert checked.data == data


@pytest.mark.parametrize(
    ("mime", "raw", "detected"),
    [
        ("image/jpeg", PNG, "image/png"),  # a PNG labelled JPEG
        ("image/png", JPEG, "image/jpeg"),
        ("image/webp", GIF89, "image/gif"),
        ("image/gif", WEBP, "image/webp"),
        ("image/webp", WAVE, None),  # RIFF, but a sound
        ("image/png", b"%PDF-1.7 not an image", None),
        ("image/png", PNG[:7], None),  # a signature cut short
    ],
)
def test_bytes_of_another_type_than_the_label_are_refused(
    mime: str, raw: bytes, detected: str | None
) -> None:
    problem = refusal(image(mime, raw))
    assert problem.reason is ImageProblem.TYPE_MISMATCH
    assert (problem.details["mimeType"], problem.details["detected"]) == (mime, detected)
    assert sniff(raw) == detected


def test_an_image_exactly_at_the_cap_is_accepted_and_one_more_byte_is_refused() -> None:
    # Sizes count the base64 text, as the provider counts them.
    at_cap = PNG + bytes(CAP // 4 * 3 - len(PNG))
    assert len(b64(at_cap)) == CAP
    assert checked_image(image("image/png", at_cap), max_bytes=CAP).data == b64(at_cap)

    over = at_cap + b"\0"
    problem = refusal(image("image/png", over))
    assert problem.reason is ImageProblem.TOO_LARGE
    assert problem.details == {
        "reason": "too_large",
        "mimeType": "image/png",
        "bytes": CAP + 4,
        "maxBytes": CAP,
    }


def test_the_cap_is_checked_before_the_data_is_decoded() -> None:
    # Over the cap and not even base64: refused for its size, without decoding it.
    problem = refusal(ImageBlock(mime_type="image/png", data="!" * (CAP + 1)))
    assert problem.reason is ImageProblem.TOO_LARGE


def test_encoded_size_is_the_padded_base64_length() -> None:
    for n in range(0, 50):
        assert encoded_size(n) == len(b64(bytes(n)))


def test_an_image_from_a_file_is_encoded_and_checked_like_an_inline_one() -> None:
    block = image_from_bytes("image/jpg", JPEG, uri="file:///p/a.jpg", max_bytes=CAP)
    assert block == ImageBlock(mime_type="image/jpeg", data=b64(JPEG), uri="file:///p/a.jpg")
    with pytest.raises(InvalidImage) as caught:
        image_from_bytes("image/png", JPEG, uri=None, max_bytes=CAP)
    assert caught.value.reason is ImageProblem.TYPE_MISMATCH
    with pytest.raises(InvalidImage) as caught:
        image_from_bytes("image/png", PNG + bytes(CAP), uri=None, max_bytes=CAP)
    assert caught.value.reason is ImageProblem.TOO_LARGE


def test_the_image_data_stays_out_of_its_repr() -> None:
    # A 5 MiB image in a log line or an assertion message would drown it.
    assert "iVBOR" not in repr(image("image/png", PNG))
