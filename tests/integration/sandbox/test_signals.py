"""A command starts with the signals a shell expects, sandboxed or not: the launcher is a
Python program, which ignores SIGPIPE and SIGXFSZ, and what a process ignores stays ignored
across exec unless it is put back."""

import pytest

from adapters.workspace.local import LocalWorkspace
from domain.sandbox import UNCONFINED
from tests.integration.sandbox.conftest import WRITE, World, run_in

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("confined", [True, False], ids=["sandboxed", "unconfined"])
async def test_a_pipe_closed_early_ends_its_writer_quietly(world: World, confined: bool) -> None:
    local = LocalWorkspace(world.confinement())
    workspace = local.under(WRITE if confined else UNCONFINED, (str(world.work),))
    ran = await run_in(
        workspace,
        "yes | head -n 2; echo pipe=${PIPESTATUS[0]}",
        world.work,
        seconds=30,
        output_limit=5_000,
    )
    assert ran.output == "y\ny\npipe=141\n"  # 128 + SIGPIPE, and no "Broken pipe" said
