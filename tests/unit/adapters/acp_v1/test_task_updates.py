"""Issue 30's wire shapes: the tasks list in `session_info_update._meta.iac_code.tasks`,
checked against the newest ACP schema file."""

from adapters.acp_v1.wire import notification_for
from domain.events import TasksChanged
from domain.ids import ToolCallId
from domain.tasks import BackgroundTask
from tests.factories import T0
from tests.support.schema_file import problems_with


def test_the_tasks_list_is_a_session_info_update_with_our_meta() -> None:
    running = BackgroundTask(
        id="t1", command="npm run dev", tool_call_id=ToolCallId("toolu_1"), started_at=T0
    )
    running.output.add("compiling\nready on :5173\n")
    ended = BackgroundTask(
        id="t2", command="make", tool_call_id=ToolCallId("toolu_2"), started_at=T0
    )
    ended.exited(at=T0.replace(second=7), exit_code=2)
    params = notification_for("sess_1", TasksChanged(tasks=(running.summary(), ended.summary())))
    assert problems_with("SessionNotification", params) == []
    update = params["update"]
    assert update["sessionUpdate"] == "session_info_update"
    assert update["_meta"]["iac_code"]["tasks"] == [
        {
            "id": "t1",
            "command": "npm run dev",
            "toolCallId": "toolu_1",
            "state": "running",
            "status": "running",
            "exitCode": None,
            "startedAt": "2026-01-01T00:00:00Z",
            "lastLines": "compiling\nready on :5173",
        },
        {
            "id": "t2",
            "command": "make",
            "toolCallId": "toolu_2",
            "state": "exited",
            "status": "exited with code 2",
            "exitCode": 2,
            "startedAt": "2026-01-01T00:00:00Z",
            "lastLines": "",
            "endedAt": "2026-01-01T00:00:07Z",
        },
    ]
