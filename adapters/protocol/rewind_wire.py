"""The answer of a rewind (no SDK model has it)."""

from typing import Any

from application.use_cases.file_checkpoints import FilesRestored
from application.use_cases.rewind import Rewound


def rewound_result(rewound: Rewound) -> dict[str, Any]:
    """`{messageCount, undoToken}`, and `files` when the rewind restored files."""
    result: dict[str, Any] = {
        "messageCount": rewound.message_count,
        "undoToken": rewound.undo_token,
    }
    if rewound.files is not None:
        result["files"] = files_result(rewound.files)
    return result


def files_result(files: FilesRestored) -> dict[str, Any]:
    """The paths put back, those left as the user changed them (`skip`), and those whose
    prior content was not kept (with why: too_large, binary, over_session_limit, dropped)."""
    return {
        "restored": list(files.restored),
        "skipped": list(files.skipped),
        "notRestorable": [
            {"path": path, "reason": reason.value} for path, reason in files.unrestorable
        ],
    }
