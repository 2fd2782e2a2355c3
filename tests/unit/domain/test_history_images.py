"""Images in the provider view: real images for a model that reads them, markers otherwise."""

from domain.content import ImageBlock, TextBlock, ToolResultBlock, as_model_text, plain_text
from domain.history import MAX_IMAGE_BYTES_PER_REQUEST, MAX_IMAGES_PER_REQUEST, provider_view
from domain.message import Message, Role
from tests.factories import MessageFactory

PNG = ImageBlock(mime_type="image/png", data="iVBORw0KGgo=", uri="file:///p/shot.png")
OLD = ImageBlock(mime_type="image/jpeg", uri="file:///p/old.jpg")  # stored before images went


def test_a_model_that_reads_images_gets_the_image_with_its_data() -> None:
    prompt = MessageFactory(content=(TextBlock(text="what is this?"), PNG))
    view = provider_view([prompt])
    assert view[0].content == (TextBlock(text="what is this?"), PNG)
    assert provider_view([prompt], images=True) == view  # the default


def test_a_model_that_cannot_read_images_gets_the_marker() -> None:
    prompt = MessageFactory(content=(TextBlock(text="what is this?"), PNG))
    view = provider_view([prompt], images=False)
    assert view[0].content == (
        TextBlock(text="what is this?"),
        TextBlock(text="[image: image/png]"),
    )


def test_an_image_stored_without_its_data_is_a_marker_even_for_a_model_that_reads_images() -> None:
    view = provider_view([MessageFactory(content=(OLD,))], images=True)
    assert view[0].content == (TextBlock(text="[image: image/jpeg]"),)


def test_an_image_is_sent_only_in_a_user_message() -> None:
    # The provider takes images from the user only; an assistant image is shown as a marker.
    reply = MessageFactory(role=Role.ASSISTANT, content=(TextBlock(text="look"), PNG))
    view = provider_view([MessageFactory(), reply])
    assert view[1].content == (TextBlock(text="look"), TextBlock(text="[image: image/png]"))


def test_images_of_merged_prompts_follow_the_tool_results() -> None:
    # A prompt with an image right after a tool answer: one user message, results first.
    history = [
        MessageFactory(),
        MessageFactory(asking_tool=True),
        MessageFactory(tool_answer=True),
        MessageFactory(content=(PNG,)),
    ]
    last = provider_view(history)[-1]
    assert isinstance(last.content[0], ToolResultBlock)
    assert last.content[1:] == (PNG,)


def test_what_a_person_reads_of_an_image_is_its_marker() -> None:
    assert as_model_text(PNG) == TextBlock(text="[image: image/png]")
    assert as_model_text(PNG, images=True) == PNG
    assert plain_text((TextBlock(text="see"), PNG)) == "see\n[image: image/png]"


def sent_images(view: list[Message]) -> list[str | None]:
    return [b.data for m in view for b in m.content if isinstance(b, ImageBlock)]


def prompts_with_images(*datas: str) -> list[Message]:
    history: list[Message] = []
    for data in datas:
        history.append(MessageFactory(content=(ImageBlock(mime_type="image/png", data=data),)))
        history.append(MessageFactory(reply=True))
    return history


def test_only_the_newest_images_one_request_may_carry_are_sent_the_older_as_markers() -> None:
    datas = [f"img{n}" for n in range(MAX_IMAGES_PER_REQUEST + 3)]
    view = provider_view(prompts_with_images(*datas))
    assert sent_images(view) == datas[3:]
    assert view[0].content == (TextBlock(text="[image: image/png]"),)


def test_images_are_sent_up_to_the_bytes_one_request_may_carry() -> None:
    quarter = "A" * (MAX_IMAGE_BYTES_PER_REQUEST // 4)
    datas = [quarter + str(n) for n in range(5)]  # each a little over a quarter
    assert sent_images(provider_view(prompts_with_images(*datas))) == datas[2:]


def test_the_newest_image_is_sent_even_alone_over_the_request_budget() -> None:
    # An operator may raise the per-image cap past the budget: the image just sent still goes.
    huge = "A" * (MAX_IMAGE_BYTES_PER_REQUEST + 4)
    assert sent_images(provider_view(prompts_with_images("old", huge))) == [huge]
