"""The elicitations a session's MCP servers make (McpElicitations), answered as scripted."""

from application.ports.elicitation import Elicitation, ElicitationAnswer
from application.ports.mcp import McpElicitations


class AnsweringElicitations(McpElicitations):
    def __init__(self, *answers: ElicitationAnswer) -> None:
        self.answers = list(answers)
        self.asked: list[Elicitation] = []
        self.completed: list[str] = []

    async def ask(self, elicitation: Elicitation) -> ElicitationAnswer:
        self.asked.append(elicitation)
        return self.answers.pop(0)

    async def complete(self, elicitation_id: str) -> None:
        self.completed.append(elicitation_id)
