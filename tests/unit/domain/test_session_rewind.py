import pytest

from domain.content import TextBlock
from domain.errors import UnknownMessage
from domain.message import MessageKind
from tests.factories import MessageFactory, SessionFactory


def test_a_rewind_point_is_a_prompt_the_user_sent() -> None:
    session = SessionFactory(
        messages=[
            MessageFactory(id="u1"),
            MessageFactory(id="a1", asking_tool=True),
            MessageFactory(id="r1", tool_answer=True),
            MessageFactory(id="c1", kind=MessageKind.COMMAND, content=(TextBlock(text="/usage"),)),
            MessageFactory(id="u2"),
        ]
    )
    assert session.prompt_position("u1") == 0
    assert session.prompt_position("u2") == 4
    for not_a_prompt in ("a1", "r1", "c1", "missing"):
        with pytest.raises(UnknownMessage) as refused:
            session.prompt_position(not_a_prompt)
        assert refused.value.details == {"messageId": not_a_prompt}


def test_a_cut_hands_back_what_it_dropped_and_records_no_change() -> None:
    messages = [MessageFactory(id=f"m{i}") for i in range(4)]
    session = SessionFactory(messages=list(messages))
    cut = session.cut_at(1)
    assert cut == tuple(messages[1:])
    assert session.messages == (messages[0],)
    assert session.changes == ()  # the store rewrites the history from the cut
    session.put_back(cut)
    assert session.messages == tuple(messages)
