"""The ownership rules, with plain strings for connections."""

import pytest

from application.attachments.ownership import NotAttached, Ownership, Role


def test_the_first_attached_controls_and_later_ones_observe() -> None:
    rules: Ownership[str] = Ownership()
    assert rules.attach("s", "a") is Role.CONTROLLER
    assert rules.attach("s", "b") is Role.OBSERVER
    assert rules.attach("s", "a") is Role.CONTROLLER  # attaching again changes nothing
    assert rules.peers_of("s") == ["a", "b"]
    assert rules.controller_of("s") == "a"
    assert rules.role_of("s", "b") is Role.OBSERVER
    assert rules.role_of("s", "c") is None
    assert rules.sessions_of("b") == ["s"]


def test_only_attached_peers_act_on_a_held_session_and_anyone_on_a_free_one() -> None:
    rules: Ownership[str] = Ownership()
    rules.check_may_act("free", "anyone")  # nobody holds it: no refusal
    assert rules.may_cancel("free", "anyone")
    rules.attach("s", "a")
    rules.attach("s", "b")
    rules.check_may_act("s", "b")
    assert rules.may_cancel("s", "b")  # an observer may cancel
    with pytest.raises(NotAttached):
        rules.check_may_act("s", "c")
    assert not rules.may_cancel("s", "c")


def test_a_prompt_makes_its_sender_the_controller_and_a_refused_one_gives_it_back() -> None:
    rules: Ownership[str] = Ownership()
    rules.attach("s", "a")
    rules.attach("s", "b")
    previous = rules.take_control("s", "b")
    assert previous == "a" and rules.controller_of("s") == "b"
    rules.give_back("s", "b", previous)
    assert rules.controller_of("s") == "a"
    rules.take_control("s", "b")
    rules.take_control("s", "a")
    rules.give_back("s", "b", "a")  # b is no longer the controller: nothing to undo
    assert rules.controller_of("s") == "a"


def test_detaching_hands_control_to_the_longest_attached_and_says_who_was_last() -> None:
    rules: Ownership[str] = Ownership()
    for peer in ("a", "b", "c"):
        rules.attach("s", peer)
    assert rules.detach("s", "a") is False
    assert rules.controller_of("s") == "b"
    assert rules.detach("s", "c") is False
    assert rules.controller_of("s") == "b"
    assert rules.detach("s", "x") is False  # never attached: not "the last"
    assert rules.detach("s", "b") is True
    assert rules.peers_of("s") == [] and rules.controller_of("s") is None
    assert rules.detach("s", "b") is False  # already gone


def test_a_deleted_session_forgets_its_peers() -> None:
    rules: Ownership[str] = Ownership()
    rules.attach("s", "a")
    rules.attach("t", "a")
    assert rules.forget("s") == ["a"]
    assert rules.sessions_of("a") == ["t"]
    rules.check_may_act("s", "b")
