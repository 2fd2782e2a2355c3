"""A sub-agent waiting for permission, on the wire: its `subagent_update` says
`requires_action` (still cancellable), and the request asked of its parent's clients names
the child and its agent in `_meta.iac_code`; both checked against the unstable schema."""

from adapters.acp_v1.permissions import permission_request
from adapters.acp_v1.wire import notification_for
from application.ports.permissions import PermissionRequest
from domain.events import SubagentChanged, SubagentState
from domain.ids import SessionId, ToolCallId
from domain.tool_call import ToolKind
from tests.support.schema_file import problems_with

WAITING = SubagentChanged(
    child_id=SessionId("child"),
    state=SubagentState.WAITING,
    tool_call_id=ToolCallId("toolu_1"),
    cancellable=True,
)


def test_a_child_waiting_for_permission_requires_action() -> None:
    params = notification_for(SessionId("parent"), WAITING)
    assert problems_with("SessionNotification", params, "unstable") == []
    update = params["update"]
    assert update["state"] == {"state": "requires_action"}
    assert update["capabilities"] == {"cancel": {}}
    assert update["_meta"]["iac_code"]["status"] == "waiting"


def test_a_childs_request_names_the_child_and_its_agent() -> None:
    request = PermissionRequest(
        tool_call_id=ToolCallId("toolu_c"),
        tool_name="write_file",
        title="Write t.py",
        kind=ToolKind.EDIT,
        arguments={"path": "t.py", "content": "x"},
        locations=("/p/t.py",),
        preview=(),
        child_session_id="child",
        agent="tester",
    )
    params = permission_request("parent", request)
    assert problems_with("RequestPermissionRequest", params, "unstable") == []
    assert params["sessionId"] == "parent"
    assert params["_meta"] == {"iac_code": {"childSessionId": "child", "agent": "tester"}}


def test_a_parents_own_request_has_no_child() -> None:
    request = PermissionRequest(
        tool_call_id=ToolCallId("toolu_p"),
        tool_name="bash",
        title="Run ls",
        kind=ToolKind.EXECUTE,
        arguments={"command": "ls"},
        locations=(),
        preview=(),
    )
    assert "_meta" not in permission_request("parent", request)
