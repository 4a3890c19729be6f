"""The naming rules (hill/names.py), by hand-worked examples."""

from __future__ import annotations

import pytest

from hill.errors import HillError
from hill.rules import names


@pytest.mark.parametrize(
    ("owner", "name", "problem"),
    [
        ("alice", "rush", None),
        ("[x]`^{}|-_", "a-b_C9", None),
        ("al ice", "rush", "bad owner"),
        ("a.b", "rush", "bad owner"),  # the first '.' ends the owner
        ("x" * 33, "rush", "bad owner"),
        ("alice", "", "bad program name"),
        ("alice", "x" * 49, "bad program name"),
        ("alice", "../etc", "bad program name"),
        ("alice", "a.b", "bad program name"),
    ],
)
def test_check(owner: str, name: str, problem: str | None) -> None:
    if problem is None:
        names.check(owner, name)
        assert names.is_full_name(names.full_name(owner, name))
        assert names.split(names.full_name(owner, name)) == (owner, name)
        return
    with pytest.raises(HillError, match=problem):  # a HillError: told to the player
        names.check(owner, name)
    assert not names.is_full_name(f"{owner}.{name}")


def test_names_from_files() -> None:
    assert names.from_file("warriors/quintopia_poke.bfjoust") == "quintopia_poke"
    assert names.from_file("my rush!.bf") == "my_rush_"
    assert names.from_file("ais523.margins.bfjoust") == "ais523_margins"
    assert names.from_file("hill/ais523.margins.bfjoust", "ais523") == "margins"
    assert names.from_file("ais523.margins.bfjoust", "bob") == "ais523_margins"
    assert names.from_file(".bfjoust") == "program"
    assert len(names.from_file("x" * 100)) == 48
    assert names.file_name("alice.rush") == "alice.rush.bfjoust"


def test_lookup_prefers_the_players_own_program_and_ignores_case() -> None:
    hill = ["alice.rush", "bob.rush", "bob.defend", "Carol.Turtle"]
    assert names.lookup(hill, "BOB.RUSH", "alice") == [1]
    assert names.lookup(hill, "rush", "Bob") == [1]  # bob's own
    assert names.lookup(hill, "rush", "carol") == [0, 1]  # neither is carol's: which one?
    assert names.lookup(hill, "turtle", "dave") == [3]
    assert names.lookup(hill, "nothing", "alice") == []
    assert names.lookup(hill, "alice.defend", "alice") == []
