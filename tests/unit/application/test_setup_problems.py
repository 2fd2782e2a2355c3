"""What of a session's stored setup this server no longer serves: found as the session
opens (the announce), told as warning notices with no agent text (nothing was said of it
before notices)."""

from application.sessions.new_session import NewSessionRequest
from domain.config import Catalog, SessionConfig
from domain.events import NoticeSeverity, SessionNotice
from domain.modes import offered_modes
from domain.setup_problems import setup_problems
from tests.unit.application.world import CATALOG, World

WITHOUT_BYPASS = Catalog(modes=offered_modes(allow_bypass=False), models=CATALOG.models)


def test_a_setup_the_server_serves_has_no_problem() -> None:
    config = SessionConfig(mode_id="bypass", model="m1", thought_level="off")
    assert setup_problems(CATALOG, config) == ()


def test_a_withdrawn_mode_and_an_unoffered_model_are_problems() -> None:
    config = SessionConfig(mode_id="bypass", model="gone-1", thought_level="off")
    mode, model = setup_problems(WITHOUT_BYPASS, config)
    assert (mode.setting, mode.stored) == ("mode", "bypass")
    assert mode.title == "Mode 'bypass' is not offered here: the session runs in 'default'"
    assert (model.setting, model.stored) == ("model", "gone-1")
    assert "Offered: m1, m2." in model.description


async def test_opening_a_session_the_server_no_longer_serves_tells_a_notice(
    world: World,
) -> None:
    state = await world.new_session().execute(NewSessionRequest(cwd="/home/dev/p"))
    sid = state.session_id
    session = world.registry.require(sid).session
    session.set_mode("bypass", at=world.clock.now())
    await world.announce().execute(sid)
    assert world.sink.of_type(SessionNotice) == []  # this server offers it

    world.catalog = WITHOUT_BYPASS  # the operator withdrew "don't ask" since
    await world.announce().execute(sid)

    [notice] = world.sink.of_type(SessionNotice)
    assert isinstance(notice, SessionNotice)
    assert notice.severity is NoticeSeverity.WARNING
    assert notice.title.startswith("Mode 'bypass' is not offered here")
    assert notice.meta == {"setupProblem": {"setting": "mode", "stored": "bypass"}}
    assert notice.fallback is None
    # told after what the announce always sends
    kinds = [type(e).__name__ for _, e in world.sink.events][-3:]
    assert kinds == ["CommandsAvailable", "UsageUpdated", "SessionNotice"]
