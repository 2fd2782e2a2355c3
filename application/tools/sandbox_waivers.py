"""The calls the user let run once outside the sandbox ("Allow once, outside the sandbox"):
granted by the permission flow, taken (once) when the call's workspace is made."""


class SandboxWaivers:
    """In memory, for the process that runs the turn: the answer and the run are both its."""

    def __init__(self) -> None:
        self._granted: set[str] = set()

    def grant(self, call_id: str) -> None:
        self._granted.add(call_id)

    def take(self, call_id: str) -> bool:
        """Whether this call was let out of the sandbox; a second ask says no."""
        if call_id in self._granted:
            self._granted.discard(call_id)
            return True
        return False
