"""The JSON objects the cluster's replicas signal each other (routing.py, questions.py,
following.py, receiving.py), decoded in one way."""

import json
import logging
from typing import Any

log = logging.getLogger(__name__)


def decoded_signal(payload: str, kind: str, *required: str) -> dict[str, Any] | None:
    """The signal's object, holding every `required` key; None, logged, for anything else:
    a malformed signal from another replica is ignored, never raised into the listener."""
    try:
        message = json.loads(payload)
    except ValueError:
        message = None
    if isinstance(message, dict) and all(key in message for key in required):
        return message
    log.warning("ignoring a malformed %s signal %r", kind, payload[:200])
    return None
