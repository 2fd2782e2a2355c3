"""A session in a worktree of its own, with fake worktrees: made when asked (or by the
server's default) inside a repository, refused outside one when asked; a fork gets its own
from its source's; a list shows it; a delete takes it along, and asks first when it holds
unmerged work."""

import pytest

from application.errors import WorktreeRefused
from application.ports.worktrees import Unmerged
from application.sessions.listing import ListSessions
from application.sessions.new_session import NewSessionRequest
from domain.worktree import Isolation
from tests.unit.application.world import World

WORKTREE = Isolation.WORKTREE


async def new(world: World, cwd: str, isolation: Isolation | None = WORKTREE) -> str:
    request = NewSessionRequest(cwd=cwd, isolation=isolation)
    return (await world.new_session().execute(request)).session_id


async def cwd_of(world: World, sid: str) -> str:
    return world.registry.require(sid).session.cwd


async def test_a_session_asked_into_a_worktree_works_in_it_at_the_same_place(
    world: World,
) -> None:
    world.worktrees.repositories.add("/repo")
    state = await world.new_session().execute(
        NewSessionRequest(cwd="/repo/src", isolation=WORKTREE)
    )
    short = state.session_id.removeprefix("sess_")[:8]
    assert state.worktree is not None
    assert state.worktree.branch == f"iac-code/{short}"
    assert state.worktree.path == f"/worktrees/{short}"
    assert await cwd_of(world, state.session_id) == f"/worktrees/{short}/src"
    assert world.uow.sessions.stored[state.session_id].settings["cwd"] == f"/worktrees/{short}/src"


async def test_asked_outside_a_repository_it_is_refused_and_nothing_is_made(
    world: World,
) -> None:
    with pytest.raises(WorktreeRefused) as refused:
        await new(world, "/plain")
    assert refused.value.details == {"cwd": "/plain", "isolation": "worktree"}
    assert "not inside a git repository" in str(refused.value)
    assert world.uow.sessions.stored == {}


async def test_the_servers_default_makes_one_where_it_can_and_none_elsewhere(
    world: World,
) -> None:
    world.isolation = Isolation.WORKTREE
    world.worktrees.repositories.add("/repo")
    in_repo = await new(world, "/repo", isolation=None)
    elsewhere = await new(world, "/plain", isolation=None)
    assert (await cwd_of(world, in_repo)).startswith("/worktrees/")
    assert await cwd_of(world, elsewhere) == "/plain"


async def test_none_asked_overrides_the_servers_default(world: World) -> None:
    world.isolation = Isolation.WORKTREE
    world.worktrees.repositories.add("/repo")
    sid = await new(world, "/repo", isolation=Isolation.NONE)
    assert await cwd_of(world, sid) == "/repo"
    assert world.worktrees.made == {}


async def test_a_fork_gets_a_worktree_of_its_own_from_its_sources(world: World) -> None:
    world.worktrees.repositories.add("/repo")
    sid = await new(world, "/repo")
    source = await cwd_of(world, sid)
    fork = await world.fork().execute(sid, source)
    assert fork.worktree is not None and fork.worktree.path != source
    assert world.worktrees.forked == [(source, fork.worktree.path)]
    assert await cwd_of(world, fork.session_id) == fork.worktree.path


async def test_a_fork_of_a_plain_session_stays_where_it_is(world: World) -> None:
    sid = await new(world, "/plain", isolation=None)
    fork = await world.fork().execute(sid, "/plain")
    assert fork.worktree is None and await cwd_of(world, fork.session_id) == "/plain"


async def test_a_list_shows_each_sessions_worktree(world: World) -> None:
    world.worktrees.repositories.add("/repo")
    isolated = await new(world, "/repo")
    plain = await new(world, "/plain", isolation=None)
    page = await ListSessions(uow=world.uow, worktrees=world.worktrees).execute(None, None)
    shown = {s.session_id: s.worktree for s in page.sessions}
    assert shown[plain] is None
    isolated_worktree = shown[isolated]
    assert isolated_worktree is not None and isolated_worktree.branch.startswith("iac-code/")


async def test_deleting_takes_a_clean_worktree_along(world: World) -> None:
    world.worktrees.repositories.add("/repo")
    sid = await new(world, "/repo")
    path = await cwd_of(world, sid)
    assert await world.delete().execute(sid)
    assert world.worktrees.removed == [path]


async def test_deleting_asks_first_when_the_worktree_holds_unmerged_work(world: World) -> None:
    world.worktrees.repositories.add("/repo")
    sid = await new(world, "/repo")
    path = await cwd_of(world, sid)
    world.worktrees.unmerged_work[path] = Unmerged(changes=2, commits=1)
    with pytest.raises(WorktreeRefused) as refused:
        await world.delete().execute(sid)
    details = refused.value.details
    assert (details["uncommitted"], details["unmergedCommits"]) == (2, 1)
    assert details["confirm"] == "_meta.iac_code.discardWorktree"
    assert world.registry.find(sid) is not None and sid in world.uow.sessions.stored
    assert world.worktrees.removed == []
    assert await world.delete().execute(sid, discard_worktree=True)
    assert world.worktrees.removed == [path]
