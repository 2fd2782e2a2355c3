from typing import NewType

SessionId = NewType("SessionId", str)
MessageId = NewType("MessageId", str)
ToolCallId = NewType("ToolCallId", str)
