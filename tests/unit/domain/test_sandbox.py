"""The sandbox's rules: levels up to the ceiling, the network a ceiling keeps, a stored
choice held to what is offered now, plan mode reading only, a machine that cannot confine."""

import pytest

from domain.config import Catalog, SessionConfig
from domain.errors import InvalidConfigValue
from domain.modes import MODES
from domain.sandbox import (
    UNCONFINED,
    NetworkLevel,
    SandboxLevel,
    SandboxPolicy,
    SandboxRules,
)

WRITE, READ, OFF = SandboxLevel.WORKSPACE_WRITE, SandboxLevel.READ_ONLY, SandboxLevel.OFF


def test_a_session_may_choose_every_level_up_to_the_ceiling() -> None:
    assert SandboxRules(ceiling=OFF).levels() == (READ, WRITE, OFF)
    assert SandboxRules(ceiling=WRITE).levels() == (READ, WRITE)
    assert SandboxRules(default=READ, ceiling=READ).levels() == (READ,)


def test_a_default_above_the_ceiling_is_refused() -> None:
    with pytest.raises(ValueError, match="above the ceiling"):
        SandboxRules(default=OFF, ceiling=WRITE)


def test_full_network_only_where_the_ceiling_allows_no_sandbox_or_it_is_the_default() -> None:
    assert SandboxRules(ceiling=OFF).networks() == (NetworkLevel.NONE, NetworkLevel.FULL)
    assert SandboxRules(ceiling=WRITE).networks() == (NetworkLevel.NONE,)
    full = SandboxRules(ceiling=WRITE, network=NetworkLevel.FULL)
    assert full.networks() == (NetworkLevel.NONE, NetworkLevel.FULL)


def test_allowlist_is_offered_where_hosts_are_listed_and_carries_them() -> None:
    rules = SandboxRules(ceiling=WRITE, allow=("pypi.org",))
    assert rules.networks() == (NetworkLevel.NONE, NetworkLevel.ALLOWLIST)
    policy = rules.policy({"network": "allowlist"}, "default")
    assert (policy.network, policy.allow) == (NetworkLevel.ALLOWLIST, ("pypi.org",))
    assert rules.policy({"network": "none"}, "default").allow == ()
    assert SandboxRules(ceiling=WRITE).network_of({"network": "allowlist"}) is NetworkLevel.NONE


def test_a_new_session_gets_the_default() -> None:
    rules = SandboxRules()
    assert rules.policy({}, "default") == SandboxPolicy(level=WRITE, network=NetworkLevel.NONE)


def test_a_stored_choice_above_a_lowered_ceiling_opens_at_what_is_offered() -> None:
    rules = SandboxRules(ceiling=WRITE)
    assert rules.level_of({"sandbox": "off"}) is WRITE
    assert rules.network_of({"network": "full"}) is NetworkLevel.NONE
    assert rules.level_of({"sandbox": "nonsense"}) is WRITE


def test_plan_mode_reads_only_whatever_the_session_chose() -> None:
    rules = SandboxRules()
    for chosen in ("workspace-write", "off", "read-only"):
        policy = rules.policy({"sandbox": chosen}, "plan")
        assert policy.level is READ and policy.confined and not policy.writes_workspace


def test_off_runs_unconfined_whatever_the_network() -> None:
    assert SandboxRules().policy({"sandbox": "off", "network": "none"}, "default") == UNCONFINED


def test_a_machine_that_cannot_confine_offers_only_off() -> None:
    rules = SandboxRules(default=OFF, available=False)
    assert rules.levels() == (OFF,)
    assert rules.policy({"sandbox": "workspace-write"}, "plan") == UNCONFINED


# --- as config options --------------------------------------------------------------------


def _catalog(rules: SandboxRules | None) -> Catalog:
    return Catalog(modes=tuple(MODES.values()), models=(), sandbox=rules)


def _config(**options: object) -> SessionConfig:
    return SessionConfig(mode_id="default", model="m", thought_level="off", options=options)


def test_the_options_show_what_a_session_may_choose_and_what_it_has() -> None:
    options = {o.id: o for o in _catalog(SandboxRules(ceiling=WRITE)).options_for(_config())}
    sandbox, network = options["sandbox"], options["network"]
    assert [c.value for c in sandbox.choices] == ["read-only", "workspace-write"]
    assert sandbox.current_value == "workspace-write"
    assert [c.value for c in network.choices] == ["none"]
    assert network.current_value == "none"


def test_a_value_above_the_ceiling_is_refused_naming_the_allowed_ones() -> None:
    catalog = _catalog(SandboxRules(ceiling=WRITE))
    with pytest.raises(InvalidConfigValue) as refused:
        catalog.check_option("sandbox", "off", _config())
    assert refused.value.details["allowed"] == ["read-only", "workspace-write"]
    assert catalog.check_option("sandbox", "read-only", _config()) == "read-only"


def test_a_catalogue_without_rules_offers_no_sandbox_and_runs_unconfined() -> None:
    catalog = _catalog(None)
    assert {o.id for o in catalog.options_for(_config())} == {"mode", "model", "thought_level"}
    assert catalog.sandbox_policy(_config(sandbox="read-only")) == UNCONFINED


def test_the_policy_follows_the_sessions_options_and_mode() -> None:
    catalog = _catalog(SandboxRules())
    assert catalog.sandbox_policy(_config(sandbox="read-only")).level is READ
    plan = SessionConfig(mode_id="plan", model="m", thought_level="off", options={})
    assert catalog.sandbox_policy(plan).level is READ
