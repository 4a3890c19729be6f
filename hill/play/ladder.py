"""The all-time ladder's jousts over files: a `Player` (hill.ladder.ladder)
that plays them through the arena (`bfjoust ladder run`; the hill's ladder
reads its stored jousts first: hill.writers.ladder)."""

from __future__ import annotations

from collections.abc import Sequence

from hill import engine
from hill.engine import JoustResult
from hill.engine.arena import Arena, oriented
from hill.ladder.ladder import Player


def arena_player(jousts: Arena, programs: Sequence[engine.Program]) -> Player:
    """A Player that plays through the arena (hill.engine.arena): each program
    compiled once, every pair of codes played once, results turned to the
    ladder's side.  Programs with the same code are one program there."""
    hashes = [jousts.add(program) for program in programs]
    code = dict(zip(hashes, (p.source for p in programs), strict=True))

    def play(pairs: Sequence[tuple[int, int]]) -> Sequence[JoustResult]:
        kept = [oriented(hashes[a], hashes[b]) for a, b in pairs]
        results = dict(jousts.play([pair for pair, _ in kept], code.__getitem__))
        return [_from_side(results[pair], sign) for pair, sign in kept]

    return play


def _from_side(result: JoustResult, sign: int) -> JoustResult:
    """The joust seen from the left (sign +1) or the right (-1) program's side."""
    if sign > 0:
        return result
    return JoustResult(tuple(-o for o in result.outcomes), result.cycles, result.game_cycles)
