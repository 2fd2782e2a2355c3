"""/memory: the instruction files and skills the next turn loads, and the subdirectory files
the session added, or where they are looked for when there are none."""

from application.commands.memory import MemoryCommand
from application.runtime.command_registry import CommandInput
from application.runtime.registry import SessionRegistry
from application.runtime.turn_control import TurnControl
from domain.ids import MessageId
from domain.knowledge import INSTRUCTION_CAP, InstructionFile, InstructionScope, Skill
from domain.session import Session
from domain.turn import Turn
from tests.factories import T0, SessionFactory
from tests.fakes.knowledge import FakeKnowledge

CWD = "/home/dev/project"
USER_FILE = InstructionFile(
    path="/home/dev/.config/iac-code/AGENTS.md", scope=InstructionScope.USER, text="Be brief."
)
BIG = InstructionFile(
    path=f"{CWD}/AGENTS.md",
    scope=InstructionScope.PROJECT,
    text="x" * INSTRUCTION_CAP + "\n[... 10 more characters of AGENTS.md not shown]",
    truncated=True,
)
RELEASE = Skill(name="release", description="Cut a release", path="/p/release/SKILL.md")


async def memory(
    knowledge: FakeKnowledge,
    *,
    nested: set[str] | None = None,
    open_session: bool = True,
    config_dir: str = "/home/dev/.iac-code",
) -> str:
    session: Session = SessionFactory(cwd=CWD)
    registry = SessionRegistry()
    if open_session:
        registry.open(session).nested_loaded.update(nested or set())
    command = MemoryCommand(knowledge=knowledge, registry=registry, config_dir=config_dir)
    return await command.run(
        CommandInput(
            session=session,
            control=TurnControl(),
            turn=Turn(started_at=T0, max_requests=1),
            argument="",
            reply_id=MessageId("msg_1"),
            offered=(),
        )
    )


def test_the_command_is_memory() -> None:
    assert MemoryCommand.spec.name == "memory"
    assert "instructions and skills" in MemoryCommand.spec.description


async def test_lists_files_with_scope_path_and_size_and_the_skills() -> None:
    knowledge = FakeKnowledge(files=(USER_FILE, BIG), skill_list=(RELEASE,))
    text = await memory(knowledge, nested={f"{CWD}/src/AGENTS.md", f"{CWD}/docs/AGENTS.md"})

    assert knowledge.asked == [CWD, CWD]  # read afresh for the session's cwd
    lines = text.splitlines()
    assert "- user: `/home/dev/.config/iac-code/AGENTS.md` (9 characters)" in lines
    assert f"- project: `{CWD}/AGENTS.md` (32,768 characters, cut at 32 KiB)" in lines
    assert lines.index(f"- `{CWD}/docs/AGENTS.md`") + 1 == lines.index(f"- `{CWD}/src/AGENTS.md`")
    assert "- `release`: Cut a release" in lines
    assert "none" not in text


async def test_says_there_are_none_and_where_files_are_looked_for() -> None:
    text = await memory(FakeKnowledge())

    assert "**Instructions:** none." in text
    assert f"AGENTS.md and IAC-CODE.md in `{CWD}` and each parent up to the repository root" in (
        text
    )
    assert "`/home/dev/.iac-code/AGENTS.md` ($IAC_CODE_CONFIG_DIR)" in text
    assert "**Subdirectory instructions:** none added yet." in text
    assert "**Skills:** none." in text
    assert (
        "`.iac-code/skills/`" in text
        and "`/home/dev/.iac-code/skills/` ($IAC_CODE_CONFIG_DIR)" in text
    )


async def test_shows_where_the_config_dir_is_when_known() -> None:
    text = await memory(FakeKnowledge(), config_dir="/home/dev/.config/iac-code")
    assert "`/home/dev/.config/iac-code/AGENTS.md` ($IAC_CODE_CONFIG_DIR)" in text
    assert "`/home/dev/.config/iac-code/skills/` ($IAC_CODE_CONFIG_DIR)" in text


async def test_a_skill_without_a_description_says_so() -> None:
    bare = Skill(name="bare", description="", path="/p/bare/SKILL.md")
    text = await memory(FakeKnowledge(skill_list=(bare,)))
    assert "- `bare`: (no description)" in text


async def test_a_session_not_open_has_added_no_subdirectory_files() -> None:
    text = await memory(FakeKnowledge(files=(USER_FILE,)), open_session=False)
    assert "**Subdirectory instructions:** none added yet." in text
