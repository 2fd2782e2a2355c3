"""Where a tool call's permission is asked for and every decision about it written down."""

import asyncio

from application.ports.clock import Clock
from application.ports.permissions import PermissionAsker, PermissionRequest
from application.ports.unit_of_work import UnitOfWork
from application.runtime.turn_control import TurnControl
from domain.permission import Decider, PermissionDecision, PermissionOption
from domain.project_rules import ProjectRule
from domain.session import Session
from domain.tool_call import ToolCallRecord


class PermissionDesk:
    """Asks the client about a call, for at most the permission timeout, and records each
    decision: the session learns it, the store keeps it, and an "always allow" answer
    stores the project rule it grants."""

    def __init__(
        self, *, asker: PermissionAsker, uow: UnitOfWork, clock: Clock, timeout: float
    ) -> None:
        self._asker = asker
        self._uow = uow
        self._clock = clock
        self.timeout = timeout  # seconds

    async def ask(
        self, session: Session, control: TurnControl, request: PermissionRequest
    ) -> PermissionOption | None:
        """The option chosen; None when the client cancelled the request. Raises
        TurnCancelled, TimeoutError or PermissionUnavailable."""
        ask = self._asker.ask(session.id, request)
        return await control.guard(asyncio.wait_for(ask, self.timeout))

    async def project_rules(self, session: Session) -> list[ProjectRule]:
        async with self._uow.reading() as uow:
            return await uow.rules.for_project(session.cwd)

    async def record(
        self,
        session: Session,
        call: ToolCallRecord,
        option: PermissionOption | None,
        decider: Decider,
        *,
        grant: ProjectRule | None = None,
    ) -> None:
        decision = PermissionDecision(
            tool_call_id=call.id,
            tool_name=call.name,
            arguments=dict(call.arguments),
            option=option,
            decided_by=decider,
            decided_at=self._clock.now(),
        )
        session.learn(decision)
        async with self._uow as uow:
            await uow.activity.record_permission(session.id, decision)
            if grant is not None and option is PermissionOption.ALLOW_ALWAYS:
                await uow.rules.add(grant)
            await uow.commit()
