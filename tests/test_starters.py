"""The starter warriors that `bfjoust hill init --seed` puts on a new hill:
their prose is inert, so each plays exactly as its code alone."""

from __future__ import annotations

from importlib import resources

import pytest
from support.reference import warrior_path

from hill import engine

STARTERS = sorted(
    (p for p in (resources.files("hill") / "starters").iterdir() if p.name.endswith(".bfjoust")),
    key=lambda p: p.name,
)
# every character that is not a comment in BF Joust (docs/rules.md), digits included
CODE_CHARACTERS = set("+-<>.,[](){}*%0123456789")
OPPONENTS = [
    "wiki/poke.bfjoust",
    "wiki/wiggle_clear.bfjoust",
    "esohill-20131008/Lymia_flow.bfjoust",
]
IDLE = engine.compile_program("[]")  # waits on its own flag forever


def split(text: str) -> tuple[str, str]:
    """The prose (every line but the last) and the code (the last line)."""
    prose, _, code = text.rstrip("\n").rpartition("\n")
    return prose, code


@pytest.mark.parametrize("starter", STARTERS, ids=lambda p: p.name)
def test_a_starters_prose_has_no_instruction_characters(starter) -> None:
    prose, code = split(starter.read_text())
    assert prose and code
    assert set(prose) & CODE_CHARACTERS == set(), prose


@pytest.mark.parametrize("starter", STARTERS, ids=lambda p: p.name)
def test_a_starter_plays_exactly_as_its_code_alone(starter) -> None:
    whole = engine.compile_program(starter.read_bytes())
    alone = engine.compile_program(split(starter.read_text())[1])
    opponents = [engine.compile_program(warrior_path(name).read_bytes()) for name in OPPONENTS]
    opponents += [IDLE] + [engine.compile_program(p.read_bytes()) for p in STARTERS]
    for opponent in opponents:
        assert engine.joust(whole, opponent) == engine.joust(alone, opponent)
        assert engine.joust(opponent, whole) == engine.joust(opponent, alone)


def test_the_rush_beats_a_program_that_never_moves() -> None:
    rush = next(p for p in STARTERS if p.name == "rush.bfjoust")
    assert engine.joust(engine.compile_program(rush.read_bytes()), IDLE).score == engine.BATTLES
