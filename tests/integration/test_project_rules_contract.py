"""Project rules: one contract for the repository on SQLite (a real file) and PostgreSQL (a
real server), both through the real migrations, and the in-memory fake the use-case tests
use. If one drifts, these fail."""

import asyncio
from collections.abc import Callable
from datetime import timedelta
from uuid import uuid4

import pytest
from sqlalchemy.ext.asyncio import async_sessionmaker

from adapters.persistence.engine import make_engine
from adapters.persistence.unit_of_work import SqlAlchemyUnitOfWork
from application.ports.unit_of_work import UnitOfWork
from domain.project_rules import CommandPattern, ProjectRule, rule_for
from tests.factories import T0
from tests.fakes.unit_of_work import FakeUnitOfWork, InMemoryProjectRules

pytestmark = [pytest.mark.integration, pytest.mark.backends("sqlite", "postgres", "memory")]

UowFactory = Callable[[], UnitOfWork]
HERE, THERE = "/work/project", "/work/other"


@pytest.fixture
def uow(backend: str, engine) -> UowFactory:  # type: ignore[no-untyped-def]
    if backend == "memory":
        shared = InMemoryProjectRules()
        return lambda: FakeUnitOfWork(rules=shared)
    factory = async_sessionmaker(engine, expire_on_commit=False)
    return lambda: SqlAlchemyUnitOfWork(factory)


def grant(
    tool: str = "write_file",
    command: str | None = None,
    *,
    cwd: str = HERE,
    minute: int = 0,
    session_id: str | None = "sess_1",
) -> ProjectRule:
    arguments = {} if command is None else {"command": command}
    rule = rule_for(
        cwd=cwd,
        tool_name=tool,
        arguments=arguments,
        at=T0 + timedelta(minutes=minute),
        session_id=session_id,
    )
    assert rule is not None
    return rule


async def add(uow: UowFactory, *rules: ProjectRule) -> list[ProjectRule]:
    async with uow() as u:
        stored = [await u.rules.add(r) for r in rules]
        await u.commit()
    return stored


async def project(uow: UowFactory, cwd: str = HERE) -> list[ProjectRule]:
    async with uow() as u:
        return await u.rules.for_project(cwd)


async def every(uow: UowFactory, cwd: str | None = None) -> list[ProjectRule]:
    async with uow() as u:
        return await u.rules.list(cwd)


def ids(rules: list[ProjectRule]) -> list[int | None]:
    return [r.id for r in rules]


async def test_added_rules_come_back_with_ids_and_everything_they_were_given(
    uow: UowFactory,
) -> None:
    write, fetch = await add(uow, grant(), grant("web_fetch", minute=1, session_id=None))
    assert write.id is not None and fetch.id is not None and write.id != fetch.id
    assert await project(uow) == [write, fetch]
    assert fetch.session_id is None
    assert write.created_at == T0 and write.command is None


async def test_the_same_grant_twice_is_stored_once_and_returns_the_first(
    uow: UowFactory,
) -> None:
    (first,) = await add(uow, grant("bash", "git status -s"))
    (again,) = await add(uow, grant("bash", "git status --short .", minute=5, session_id="s2"))
    assert again == first  # same program and subcommand: the same grant, the first kept
    async with uow() as u:  # twice in one transaction too
        twice = [await u.rules.add(grant(minute=1)), await u.rules.add(grant(minute=2))]
        await u.commit()
    assert twice[0] == twice[1]
    assert ids(await project(uow)) == [first.id, twice[0].id]


async def test_the_same_grant_from_sessions_at_once_is_stored_once(uow: UowFactory) -> None:
    async def one(minute: int) -> ProjectRule:
        async with uow() as u:
            rule = await u.rules.add(grant(minute=minute, session_id=f"sess_{minute}"))
            await u.commit()
        return rule

    results = await asyncio.gather(*(one(minute) for minute in range(5)))
    assert len({r.id for r in results}) == 1
    assert await project(uow) == [results[0]]


async def test_bash_exact_and_prefix_patterns_round_trip(uow: UowFactory) -> None:
    stored = await add(
        uow,
        grant("bash", "git status -s"),
        grant("bash", "ls -la", minute=1),
        grant("bash", "echo 'two words' \"é\"", minute=2),
        # the same words as a prefix and as an exact pattern are two different grants
        ProjectRule(
            cwd=HERE,
            tool_name="bash",
            command=CommandPattern(words=("git", "status"), exact=True),
            created_at=T0 + timedelta(minutes=3),
        ),
    )
    loaded = await project(uow)
    assert loaded == stored
    assert [r.command for r in loaded] == [
        CommandPattern(words=("git", "status"), exact=False),
        CommandPattern(words=("ls", "-la"), exact=True),
        CommandPattern(words=("echo", "two words", "é"), exact=True),
        CommandPattern(words=("git", "status"), exact=True),
    ]
    assert loaded[0].covers("bash", {"command": "git status ."})
    assert not loaded[1].covers("bash", {"command": "ls -la /"})


async def test_for_project_is_oldest_first_and_only_that_cwd(uow: UowFactory) -> None:
    late, other, early = await add(
        uow,
        grant("edit_file", minute=9),
        grant(cwd=THERE, minute=0),
        grant("agent", minute=1),
    )
    assert await project(uow) == [early, late]
    assert await project(uow, THERE) == [other]
    assert await project(uow, HERE + "/sub") == []  # exactly that directory


async def test_list_is_by_cwd_then_age_and_filters(uow: UowFactory) -> None:
    here_late, there, here_early = await add(
        uow, grant(minute=5), grant(cwd=THERE), grant("agent", minute=1)
    )
    assert await every(uow) == [there, here_early, here_late]  # "/work/other" sorts first
    assert await every(uow, THERE) == [there]
    assert await every(uow, "/nowhere") == []


async def test_revoke_removes_one_rule_and_returns_it(uow: UowFactory) -> None:
    keep, gone = await add(uow, grant(), grant("bash", "npm test", minute=1))
    async with uow() as u:
        revoked = await u.rules.revoke(gone.id)  # type: ignore[arg-type]
        missing = await u.rules.revoke(10_000)
        await u.commit()
    assert revoked == gone and missing is None
    assert await project(uow) == [keep]
    async with uow() as u:
        assert await u.rules.revoke(gone.id) is None  # type: ignore[arg-type]


async def test_clear_removes_the_project_rules_and_leaves_other_projects(
    uow: UowFactory,
) -> None:
    _, _, there = await add(uow, grant(), grant("agent", minute=1), grant(cwd=THERE))
    async with uow() as u:
        removed = await u.rules.clear(HERE)
        nothing = await u.rules.clear("/nowhere")
        await u.commit()
    assert (removed, nothing) == (2, 0)
    assert await every(uow) == [there]


async def test_ids_of_revoked_rules_are_not_given_again(uow: UowFactory) -> None:
    first, last = await add(uow, grant(), grant("agent", minute=1))
    async with uow() as u:
        await u.rules.revoke(last.id)  # type: ignore[arg-type]
        await u.commit()
    (new,) = await add(uow, grant("edit_file", minute=2))
    assert new.id not in (first.id, last.id)


async def test_rules_survive_a_new_engine(database_url: str, uow_factory) -> None:  # type: ignore[no-untyped-def]
    stored = await add(uow_factory, grant(), grant("bash", "git log -3", minute=1))
    restarted = make_engine(database_url)
    try:
        factory = async_sessionmaker(restarted, expire_on_commit=False)
        assert await project(lambda: SqlAlchemyUnitOfWork(factory)) == stored
    finally:
        await restarted.dispose()


async def test_a_grant_not_committed_is_not_remembered(uow_factory) -> None:  # type: ignore[no-untyped-def]
    async with uow_factory() as u:
        await u.rules.add(grant())
    assert await project(uow_factory) == []


async def test_a_long_command_and_a_deep_project_are_remembered(uow: UowFactory) -> None:
    # Linux paths reach 4096 bytes and a command line much more; an index entry on
    # PostgreSQL holds about 2.7 kB, so there the indexes hold their hashes.
    deep = "/" + "/".join(f"d{uuid4().hex}" for _ in range(110))  # ~3.6 kB
    words = " ".join(uuid4().hex for _ in range(120))  # ~4 kB, not compressible
    rule = grant("bash", f"echo {words}", cwd=deep)
    [stored] = await add(uow, rule)
    assert stored.same_grant(rule)
    assert [r.same_grant(rule) for r in await _rules(uow, deep)] == [True]
    [again] = await add(uow, grant("bash", f"echo {words}", cwd=deep, minute=1))
    assert again.id == stored.id


async def _rules(uow: UowFactory, cwd: str) -> list[ProjectRule]:
    async with uow() as u:
        return await u.rules.for_project(cwd)
