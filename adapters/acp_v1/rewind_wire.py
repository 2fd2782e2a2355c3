"""The answers of a rewind and of its undo (no SDK model has them)."""

from typing import Any

from application.checkpoints.restoring import FilesRestored
from application.rewind.rewind import Rewound, Undone


def rewound_result(rewound: Rewound) -> dict[str, Any]:
    """`{messageCount, undoToken}`, and `files` when the rewind restored files."""
    result: dict[str, Any] = {
        "messageCount": rewound.message_count,
        "undoToken": rewound.undo_token,
    }
    if rewound.files is not None:
        result["files"] = files_result(rewound.files)
    return result


def undone_result(undone: Undone) -> dict[str, Any]:
    """`{messageCount}`, and `files` when the undo put files back."""
    result: dict[str, Any] = {"messageCount": undone.message_count}
    if undone.files is not None:
        result["files"] = files_result(undone.files)
    return result


def files_result(files: FilesRestored) -> dict[str, Any]:
    """The paths put back, those left as the user changed them (`skip`), and those whose
    prior content was not kept or may not be written (with why: too_large, binary,
    over_session_limit, dropped, outside_workspace, not_a_regular_file)."""
    return {
        "restored": list(files.restored),
        "skipped": list(files.skipped),
        "notRestorable": [
            {"path": path, "reason": reason.value} for path, reason in files.unrestorable
        ],
    }
