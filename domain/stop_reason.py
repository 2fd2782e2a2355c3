from enum import StrEnum


class StopReason(StrEnum):
    """Why a prompt turn ended: exactly the values ACP clients understand."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    MAX_TURN_REQUESTS = "max_turn_requests"
    REFUSAL = "refusal"
    CANCELLED = "cancelled"


class ModelStop(StrEnum):
    """Why one model response ended. TOOL_USE and PAUSE continue the turn; the rest end it."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    REFUSAL = "refusal"
    TOOL_USE = "tool_use"
    PAUSE = "pause_turn"

    @property
    def continues_turn(self) -> bool:
        return self in (ModelStop.TOOL_USE, ModelStop.PAUSE)

    def as_stop_reason(self) -> StopReason:
        if self.continues_turn:
            raise ValueError(f"{self} does not end a turn")
        return StopReason(self.value)
