"""The v1 face's QuestionWire: a permission request is `session/request_permission`, an
elicitation `elicitation/create`; their answers are read here into the application's
typed answers (application.ports.questions)."""

from typing import Any

from adapters.acp_v1 import elicitation, permissions
from adapters.protocol.question_wire import QuestionWire
from application.ports.questions import Answer, PermissionAnswer, PermissionQuestion, Question


class V1Questions(QuestionWire):
    def request(self, question: Question) -> tuple[str, dict[str, Any]]:
        if isinstance(question, PermissionQuestion):
            params = permissions.permission_request(question.session_id, question.request)
            return permissions.METHOD, params
        params = elicitation.elicitation_params(question.session_id, question.elicitation)
        return elicitation.METHOD, params

    def answer(self, question: Question, result: Any) -> Answer:
        if isinstance(question, PermissionQuestion):
            return PermissionAnswer(permissions.read_outcome(result, question.request))
        return elicitation.read_answer(result)


V1_QUESTIONS = V1Questions()
