"""Attaches under way: sessions a load, resume or restore is attaching a client to (it has
not attached yet), and those of them the last attached client left meanwhile.

Such a session is not closed when its last client leaves: the arriving one would be given
a closed session. Whether it is closed is decided once no attach is under way any more.
"""

import collections


class Arrivals:
    def __init__(self) -> None:
        self._arriving: collections.Counter[str] = collections.Counter()
        # True: its last client closed it with session/close, which cancels a turn.
        self._left_meanwhile: dict[str, bool] = {}

    def begin(self, session_id: str) -> None:
        self._arriving[session_id] += 1

    def end(self, session_id: str) -> None:
        self._arriving[session_id] -= 1
        if not self._arriving[session_id]:
            del self._arriving[session_id]

    def under_way(self, session_id: str) -> bool:
        return bool(self._arriving[session_id])

    def left(self, session_id: str, *, closed: bool) -> None:
        """The last attached client left while an attach is under way; `closed`: with
        session/close (a later close by leaving does not undo that)."""
        if closed:
            self._left_meanwhile[session_id] = True
        else:
            self._left_meanwhile.setdefault(session_id, False)

    def settle(self, session_id: str) -> bool | None:
        """What the last client did meanwhile, forgotten now: None when it did not leave,
        True when it closed the session, False when it only went away."""
        return self._left_meanwhile.pop(session_id, None)
