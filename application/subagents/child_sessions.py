"""A sub-agent run stored as a session of its own, written as it goes (its turn stores its
task, each of its model's replies and tool results, each finished tool call): a crash keeps
what it had completed; `session/load` of the child id shows it again like any session."""

from collections.abc import Callable
from datetime import datetime

from application.ports.tools import ToolContext
from application.ports.unit_of_work import UnitOfWork
from application.subagents.child_run import ChildRun
from domain.choices import Choices
from domain.session import Session
from domain.spawn import Spawn
from domain.workspace import Workspace


def child_session(run: ChildRun, context: ToolContext, now: datetime) -> Session:
    """The child's session: in its parent's directory, on its agent's model (else its
    parent's), naming where it came from."""
    agent = run.agent
    return Session.start(
        id=run.child_id,
        workspace=Workspace(cwd=context.cwd),
        choices=Choices(model=agent.model if agent is not None and agent.model else context.model),
        at=now,
        title=run.title,
        spawn=Spawn(parent_id=run.parent_id, tool_call_id=run.call_id, agent=run.name),
    )


class ChildSessions:
    """Opens each child's session, in a unit of work of its own: the child's session is
    written only by its run, so nothing else can conflict with it."""

    def __init__(self, *, uow: Callable[[], UnitOfWork]) -> None:
        self._uow = uow

    async def open(self, run: ChildRun, context: ToolContext, now: datetime) -> Session:
        child = child_session(run, context, now)
        async with self._uow() as uow:
            await uow.sessions.add(child)
            await uow.commit()
        return child
