"""The home of jousts (hill/arena.py): the orientation rule, the matrices,
playing on every core, and keeping results in a real SQLite file."""

from __future__ import annotations

from pathlib import Path

from hill import engine
from hill.engine import arena
from hill.rules import scoring
from hill.store.database import Database
from hill.store.jousts import load_jousts, store_jousts
from hill.store.tables import Joust

RUSH, IDLE, DECOY = b"(>)*9([-]>)*21", b"[]", b">(+)*30>(-)*30(>)*7([-]>)*21"


def result(*outcomes: int) -> engine.JoustResult:
    return engine.JoustResult(outcomes + (0,) * (engine.BATTLES - len(outcomes)))


def test_the_lower_hash_sits_on_the_left() -> None:
    assert arena.oriented("a", "b") == (("a", "b"), 1)
    assert arena.oriented("b", "a") == (("a", "b"), -1)
    assert arena.oriented("a", "a") == (("a", "a"), 1)
    # each pair once; a program given twice meets itself
    assert arena.pairs_among(["c", "a", "b", "a"]) == [
        ("a", "a"), ("a", "b"), ("a", "c"), ("b", "c"),
    ]  # fmt: skip


def test_results_read_from_either_side() -> None:
    results = arena.Results()
    # "a" (left) wins the first two battles against "b" and loses the third
    results.add([engine.Played(("a", "b"), result(1, 1, -1))])
    assert results.between("a", "b")[:4].tolist() == [1, 1, -1, 0]
    assert results.between("b", "a")[:4].tolist() == [-1, -1, 1, 0]
    assert results.missing(["a", "b", "c"]) == [("a", "c"), ("b", "c")]
    results.add([engine.Played(("a", "c"), result(-1)), engine.Played(("b", "c"), result())])
    matrix = results.matrix(["b", "c", "a"])
    assert matrix.shape == (3, 3, 42)
    assert matrix.sum(axis=2).tolist() == [[0, 0, -1], [0, 0, 1], [1, -1, 0]]
    # the battles won, without the (N, N, 42) array, agree with it
    wins = results.wins(["b", "c", "a"])
    assert wins.tolist() == [[0, 0, 1], [0, 0, 1], [2, 0, 0]]
    assert (wins == scoring.battle_wins(matrix)).all()


def test_the_arena_plays_each_pair_once_from_its_kept_side() -> None:
    jousts = arena.Arena(jobs=2)
    codes = {jousts.compile(code): code for code in (RUSH, IDLE, DECOY)}
    hashes = list(codes)
    results = arena.Results()
    played = jousts.complete(results, [*hashes, hashes[0]], codes.__getitem__)
    assert sorted(p.pair for p in played) == arena.pairs_among([*hashes, hashes[0]])
    assert results.missing(hashes) == []
    for a in hashes:
        for b in hashes:
            if a != b:
                direct = engine.joust(*(engine.compile_program(codes[h]) for h in (a, b)))
                assert results.between(a, b).tolist() == list(direct.outcomes)
    assert jousts.complete(results, hashes, codes.__getitem__) == []  # nothing left to play


def test_jousts_are_kept_once_with_their_cost(tmp_path: Path) -> None:
    database = Database(tmp_path / "hill.sqlite3")
    database.upgrade()
    jousts = arena.Arena(jobs=1)
    codes = {jousts.compile(code): code for code in (RUSH, IDLE)}
    played = list(jousts.play(arena.pairs_among(codes), codes.__getitem__))
    with database.transaction() as session:
        store_jousts(session, played)
        store_jousts(session, played)  # again: still one row
    with database.session() as session:
        rows = session.query(Joust).all()
        assert len(rows) == 1 and rows[0].game_cycles == played[0].result.game_cycles > 0
        loaded = load_jousts(session, codes)
    (rush_hash,) = (h for h, c in codes.items() if c == RUSH)
    (idle_hash,) = (h for h, c in codes.items() if c == IDLE)
    assert loaded.between(rush_hash, idle_hash).tolist() == [1] * 42
    assert loaded.matrix([idle_hash, rush_hash]).sum(axis=2).tolist() == [[0, -42], [42, 0]]
    database.close()
