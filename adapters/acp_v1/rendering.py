"""v1's rendering of what the channels deliver (adapters.protocol.rendering): every event
as its `session/update` params (wire.py, most kinds built as plain dicts in updates.py),
shaped per client as it is sent (shaping.py)."""

from typing import Any

from adapters.acp_v1.shaping import for_client
from adapters.acp_v1.wire import notification_for
from adapters.protocol.rendering import UpdateRendering

UPDATE_METHOD = "session/update"


class V1Rendering(UpdateRendering):
    method = UPDATE_METHOD
    # The functions themselves (not methods wrapping them): called per streamed update.
    notification = staticmethod(notification_for)
    for_client = staticmethod(for_client)

    def state_only(self, session_id: str) -> dict[str, Any]:
        return {"sessionId": session_id, "update": {"sessionUpdate": "session_info_update"}}
