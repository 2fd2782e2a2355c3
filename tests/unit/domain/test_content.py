from domain.content import (
    AudioBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    as_model_text,
    plain_text,
)


def test_image_and_audio_degrade_to_markers() -> None:
    assert as_model_text(ImageBlock(mime_type="image/png")) == TextBlock(text="[image: image/png]")
    assert as_model_text(AudioBlock(mime_type="audio/wav")) == TextBlock(text="[audio: audio/wav]")


def test_resource_link_gives_the_model_its_name_and_uri() -> None:
    block = ResourceLinkBlock(uri="file:///p/test_x.py", name="test_x.py")
    assert as_model_text(block) == TextBlock(
        text="[resource link: test_x.py <file:///p/test_x.py>]"
    )


def test_resource_link_title_is_shown_when_it_adds_something() -> None:
    block = ResourceLinkBlock(uri="file:///p/a.py", name="a.py", title="Entry point")
    assert "a.py (Entry point)" in as_model_text(block).text  # type: ignore[union-attr]


def test_embedded_resource_text_goes_to_the_model_with_its_uri() -> None:
    block = EmbeddedResourceBlock(uri="file:///p/x.py", text="def f(): ...")
    text = as_model_text(block).text  # type: ignore[union-attr]
    assert text.startswith('<resource uri="file:///p/x.py">')
    assert "def f(): ..." in text


def test_binary_resource_is_named_not_dumped() -> None:
    block = EmbeddedResourceBlock(uri="file:///p/logo.png", mime_type="image/png", is_binary=True)
    assert as_model_text(block) == TextBlock(
        text="[binary resource: file:///p/logo.png (image/png)]"
    )


def test_plain_text_joins_what_a_person_reads() -> None:
    blocks = (TextBlock(text="look at"), ImageBlock(mime_type="image/jpeg"))
    assert plain_text(blocks) == "look at\n[image: image/jpeg]"
