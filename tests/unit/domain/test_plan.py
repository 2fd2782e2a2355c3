"""The plan tool's input, and the current plan read back from a history."""

from collections.abc import Mapping
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.content import TextBlock, ToolResultBlock, ToolUseBlock
from domain.ids import MessageId
from domain.message import Message, MessageKind, Role
from domain.plan import (
    TODO_WRITE,
    InvalidPlan,
    PlanEntry,
    PlanPriority,
    PlanStatus,
    current_plan,
    progress,
    read_plan,
    written_plan,
)
from domain.tool_call import ToolKind
from domain.tools import spec_for, title_for
from tests.factories import T0

P, DOING, C = PlanStatus.PENDING, PlanStatus.IN_PROGRESS, PlanStatus.COMPLETED


def test_a_valid_input_becomes_the_whole_plan_in_order() -> None:
    plan = read_plan(
        {
            "todos": [
                {"content": "Write the parser", "status": "completed", "priority": "high"},
                {"content": "  Test it  ", "status": "in_progress"},  # trimmed
                {"content": "Document it", "status": "pending", "priority": "low"},
                {"content": "Ship", "status": "pending", "priority": None, "id": "4"},
            ]
        }
    )
    assert plan == (
        PlanEntry(content="Write the parser", status=C, priority=PlanPriority.HIGH),
        PlanEntry(content="Test it", status=DOING, priority=PlanPriority.MEDIUM),
        PlanEntry(content="Document it", status=P, priority=PlanPriority.LOW),
        PlanEntry(content="Ship", status=P, priority=PlanPriority.MEDIUM),
    )


def test_an_empty_list_is_a_plan_that_clears_it() -> None:
    assert read_plan({"todos": []}) == ()


@pytest.mark.parametrize("arguments", [{}, {"todos": None}, {"todos": "1. a"}, {"todos": {}}])
def test_without_a_list_of_todos_the_error_says_what_is_needed(
    arguments: Mapping[str, object],
) -> None:
    with pytest.raises(InvalidPlan, match=r"needs `todos`: the complete list"):
        read_plan(arguments)


@pytest.mark.parametrize(
    ("todo", "problem"),
    [
        ("Write it", "todos[0] must be an object {content, status, priority?}"),
        ({"status": "pending"}, "todos[0].content must be a non-empty string"),
        ({"content": "  ", "status": "pending"}, "todos[0].content must be a non-empty string"),
        ({"content": 3, "status": "pending"}, "todos[0].content must be a non-empty string"),
        (
            {"content": "a"},
            "todos[0].status must be one of pending, in_progress, completed (missing)",
        ),
        (
            {"content": "a", "status": "done"},
            "todos[0].status must be one of pending, in_progress, completed (not 'done')",
        ),
        (
            {"content": "a", "status": "pending", "priority": "urgent"},
            "todos[0].priority must be one of high, medium, low (not 'urgent')",
        ),
        (
            {"content": "a", "status": "pending", "priority": 1},
            "todos[0].priority must be one of high, medium, low (not 1)",
        ),
    ],
)
def test_each_bad_entry_is_named_with_what_is_wrong(todo: object, problem: str) -> None:
    with pytest.raises(InvalidPlan) as error:
        read_plan({"todos": [todo]})
    assert str(error.value) == f"Invalid plan: {problem}."


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(InvalidPlan) as error:
        read_plan(
            {
                "todos": [
                    {"content": "fine", "status": "pending"},
                    {"content": "", "status": "pending"},
                    {"content": "b", "status": "started"},
                ]
            }
        )
    assert error.value.details["problems"] == [
        "todos[1].content must be a non-empty string",
        "todos[2].status must be one of pending, in_progress, completed (not 'started')",
    ]


todo_items = st.fixed_dictionaries(
    {
        "content": st.text(min_size=1).filter(str.strip),
        "status": st.sampled_from([s.value for s in PlanStatus]),
    },
    optional={"priority": st.sampled_from([p.value for p in PlanPriority])},
)


@given(st.lists(todo_items, max_size=20))
def test_any_valid_list_reads_back_entry_for_entry(todos: list[dict[str, str]]) -> None:
    plan = read_plan({"todos": todos})
    assert [(e.content, e.status.value, e.priority.value) for e in plan] == [
        (t["content"].strip(), t["status"], t.get("priority", "medium")) for t in todos
    ]


@given(st.dictionaries(st.text(max_size=10), st.none() | st.integers() | st.text(max_size=20)))
def test_any_other_input_is_a_clear_error_never_a_crash(arguments: dict[str, object]) -> None:
    with pytest.raises(InvalidPlan):
        read_plan(arguments)


def _fails_alone(todo: object) -> bool:
    try:
        read_plan({"todos": [todo]})
    except InvalidPlan:
        return True
    return False


entries = st.dictionaries(
    st.sampled_from(["content", "status", "priority", "id"]),
    st.none() | st.integers() | st.sampled_from(["", " ", "x", "pending", "completed", "high"]),
)


@given(st.lists(entries | todo_items, max_size=8))
def test_a_list_reads_as_its_entries_do_one_by_one(todos: list[dict[str, object]]) -> None:
    bad = {i for i, t in enumerate(todos) if _fails_alone(t)}
    if not bad:
        assert len(read_plan({"todos": todos})) == len(todos)
        return
    with pytest.raises(InvalidPlan) as error:
        read_plan({"todos": todos})
    named = {int(p[len("todos[") :].split("]")[0]) for p in error.value.details["problems"]}
    assert named == bad


# --- the current plan, read from a history ---------------------------------------------

_ids = iter(range(10_000))


def msg(role: Role, *blocks: object, kind: MessageKind = MessageKind.CHAT) -> Message:
    n = next(_ids)
    return Message(
        id=MessageId(f"msg_{n}"),
        role=role,
        content=blocks,  # type: ignore[arg-type]
        created_at=T0 + timedelta(seconds=n),
        kind=kind,
    )


def todo(call_id: str, *items: tuple[str, str]) -> ToolUseBlock:
    todos = [{"content": content, "status": status} for content, status in items]
    return ToolUseBlock(id=call_id, name=TODO_WRITE, input={"todos": todos})


def answered(*uses: ToolUseBlock, error: bool = False) -> list[Message]:
    results = [ToolResultBlock(tool_use_id=u.id, content="ok", is_error=error) for u in uses]
    return [msg(Role.ASSISTANT, *uses), msg(Role.USER, *results)]


def test_no_todo_write_means_no_plan() -> None:
    history = [msg(Role.USER, TextBlock(text="hi")), msg(Role.ASSISTANT, TextBlock(text="hey"))]
    assert current_plan(history) == ()


def test_the_last_successful_todo_write_is_the_plan() -> None:
    history = [
        msg(Role.USER, TextBlock(text="do it")),
        *answered(todo("t1", ("a", "in_progress"), ("b", "pending"))),
        *answered(todo("t2", ("a", "completed"), ("b", "in_progress"))),
        msg(Role.ASSISTANT, TextBlock(text="Working on b.")),
    ]
    assert current_plan(history) == (
        PlanEntry(content="a", status=C),
        PlanEntry(content="b", status=DOING),
    )


def test_two_writes_in_one_message_the_later_wins() -> None:
    history = answered(todo("t1", ("a", "pending")), todo("t2", ("a", "completed")))
    assert current_plan(history) == (PlanEntry(content="a", status=C),)


def test_a_write_answered_with_an_error_or_never_answered_sets_nothing() -> None:
    first = answered(todo("t1", ("a", "pending")))
    refused = answered(todo("t2", ("a", "completed")), error=True)
    unanswered = [msg(Role.ASSISTANT, todo("t3", ("z", "pending")))]
    assert current_plan([*first, *refused, *unanswered]) == (PlanEntry(content="a", status=P),)


def test_a_write_with_bad_input_sets_nothing() -> None:
    bad = ToolUseBlock(id="t2", name=TODO_WRITE, input={"todos": [{"content": "x"}]})
    history = [*answered(todo("t1", ("a", "pending"))), *answered(bad)]
    assert current_plan(history) == (PlanEntry(content="a", status=P),)


def test_another_tool_with_the_same_input_is_not_a_plan() -> None:
    other = ToolUseBlock(id="t1", name="bash", input={"todos": [{"content": "a", "status": "x"}]})
    assert current_plan(answered(other)) == ()
    assert written_plan(other, ToolResultBlock(tool_use_id="t1", content="ok")) is None


def test_clear_forgets_the_plan_until_the_next_write() -> None:
    before = answered(todo("t1", ("a", "pending")))
    clear = [
        msg(Role.USER, TextBlock(text="/clear"), kind=MessageKind.COMMAND),
        msg(Role.ASSISTANT, TextBlock(text="Cleared."), kind=MessageKind.CLEAR),
    ]
    assert current_plan([*before, *clear]) == ()
    after = answered(todo("t2", ("b", "pending")))
    assert current_plan([*before, *clear, *after]) == (PlanEntry(content="b", status=P),)


def test_compaction_keeps_the_plan() -> None:
    before = answered(todo("t1", ("a", "in_progress")))
    compaction = msg(Role.ASSISTANT, TextBlock(text="Summary"), kind=MessageKind.COMPACTION)
    assert current_plan([*before, compaction]) == (PlanEntry(content="a", status=DOING),)


def test_a_tool_use_in_a_marker_is_not_conversation() -> None:
    use = todo("t1", ("a", "pending"))
    marker = msg(Role.ASSISTANT, use, kind=MessageKind.COMMAND_OUTPUT)
    result = msg(Role.USER, ToolResultBlock(tool_use_id="t1", content="ok"))
    assert current_plan([marker, result]) == ()


@given(st.lists(st.lists(todo_items, max_size=5), min_size=1, max_size=6))
def test_the_plan_is_always_the_last_write(writes: list[list[dict[str, str]]]) -> None:
    history: list[Message] = []
    for n, todos in enumerate(writes):
        history += answered(ToolUseBlock(id=f"t{n}", name=TODO_WRITE, input={"todos": todos}))
    assert current_plan(history) == read_plan({"todos": writes[-1]})


# --- how a call and its progress read --------------------------------------------------


def test_todo_write_is_a_think_tool() -> None:
    assert spec_for(TODO_WRITE).kind is ToolKind.THINK


@pytest.mark.parametrize(
    ("arguments", "title"),
    [
        (
            {"todos": [{"status": "completed"}, {"status": "pending"}, "junk"]},
            "Update plan (1/3 done)",
        ),
        ({"todos": [{"content": "a", "status": "completed"}]}, "Update plan (1/1 done)"),
        ({"todos": []}, "Clear plan"),
        ({"todos": "not a list"}, "Update plan"),
        ({}, "Update plan"),
    ],
)
def test_titles_count_what_is_done(arguments: Mapping[str, object], title: str) -> None:
    assert title_for(TODO_WRITE, arguments) == title


def test_progress_counts_by_status() -> None:
    plan = [PlanEntry(content=x, status=s) for x, s in [("a", C), ("b", DOING), ("c", P), ("d", P)]]
    assert progress(plan) == "1 of 4 done (1 in progress, 2 pending)"
    assert progress([PlanEntry(content="a", status=C)]) == "1 of 1 done"
    assert progress([]) == "0 of 0 done"
