"""The tournament rules of docs/tournaments.md, on small pools worked out by hand."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable, Iterator

import pytest

from hill.tournaments.criteria import median_buchholz, parse_criteria, swiss_standings
from hill.tournaments.formats import COMPLETE, Ended, Pairing
from hill.tournaments.match import MatchResult, Round, match_score
from hill.tournaments.round_robin import crosstable, reality_show, standings, total_wins
from hill.tournaments.swiss import BLOCK, SwissSettings, closest_pairs, next_round, planned_rounds


def test_match_score_and_sides() -> None:
    assert (match_score(3), match_score(0), match_score(-1)) == (1.0, 0.5, 0.0)
    match = MatchResult("a", "b", 5)
    assert (match.margin_of("a"), match.margin_of("b")) == (5, -5)
    assert (match.score_of("a"), match.score_of("b")) == (1.0, 0.0)
    with pytest.raises(ValueError):
        match.margin_of("c")


# W-X +10, W-Y 0, W-Z -6, X-Y +4, X-Z +2, Y-Z 0
ROUND_ROBIN = [
    MatchResult("W", "X", 10),
    MatchResult("W", "Y", 0),
    MatchResult("W", "Z", -6),
    MatchResult("X", "Y", 4),
    MatchResult("X", "Z", 2),
    MatchResult("Y", "Z", 0),
]


def test_round_robin_standings_by_hand() -> None:
    """W: beats X, draws Y, loses to Z: 1-1-1, score 1.5, margins 10+0-6 = 4.
    X: loses to W, beats Y and Z: 2-0-1, score 2, margins -10+4+2 = -4.
    Y: draws W and Z, loses to X: 0-2-1, score 1, margins 0-4+0 = -4.
    Z: beats W, loses to X, draws Y: 1-1-1, score 1.5, margins 6-2+0 = 4.
    Order: X (2), then W and Z (1.5, points 4/42 both: by name W, Z), then Y.
    Wins in all: 1 + 2 + 0 + 1 = 4, shares 25 %, 50 %, 0 %, 25 %."""
    rows = standings("WXYZ", ROUND_ROBIN)
    wins = total_wins(rows)
    assert wins == 4
    got = [row.to_json(wins) for row in rows]
    assert got == [
        {"rank": 1, "name": "X", "wins": 2, "draws": 0, "losses": 1, "score": 2.0,
         "points": -4 / 42, "win_share": 50.0},
        {"rank": 2, "name": "W", "wins": 1, "draws": 1, "losses": 1, "score": 1.5,
         "points": 4 / 42, "win_share": 25.0},
        {"rank": 3, "name": "Z", "wins": 1, "draws": 1, "losses": 1, "score": 1.5,
         "points": 4 / 42, "win_share": 25.0},
        {"rank": 4, "name": "Y", "wins": 0, "draws": 2, "losses": 1, "score": 1.0,
         "points": -4 / 42, "win_share": 0.0},
    ]  # fmt: skip


def test_points_break_a_score_tie_before_the_name() -> None:
    """b beats a by 1, a beats c by 1, c beats b by 3: one win each (score 1).
    Margins: a -1+1 = 0, b 1-3 = -2, c -1+3 = 2: c, a, b (by name: a, b, c)."""
    matches = [MatchResult("a", "b", -1), MatchResult("a", "c", 1), MatchResult("b", "c", -3)]
    rows = standings("abc", matches)
    assert [(row.name, row.score, row.margin_sum) for row in rows] == [
        ("c", 1.0, 2),
        ("a", 1.0, 0),
        ("b", 1.0, -2),
    ]


def test_all_draws_share_no_wins() -> None:
    rows = standings("ab", [MatchResult("a", "b", 0)])
    assert [row.to_json(total_wins(rows))["win_share"] for row in rows] == [0.0, 0.0]


def test_crosstable_is_antisymmetric_with_an_empty_diagonal() -> None:
    table = crosstable("WXYZ", ROUND_ROBIN)
    assert table[0] == [None, 10, 0, -6]
    assert table[3] == [6, -2, 0, None]
    assert all(table[i][j] == -table[j][i] for i in range(4) for j in range(4) if i != j)


def test_reality_show_stages_by_hand() -> None:
    """Stage 1: X, W, Z, Y (above). Y leaves: among W, X, Z each wins once
    (W>X, Z>W, X>Z), points W 10-6 = 4, Z 6-2 = 4, X -10+2 = -8: W, Z, X.
    X leaves: Z beats W: Z, W. W leaves: Z alone. X, first of all four, is
    the first to go once Y's points are gone."""
    assert reality_show("WXYZ", ROUND_ROBIN) == [
        ["X", "W", "Z", "Y"],
        ["W", "Z", "X"],
        ["Z", "W"],
        ["Z"],
    ]


def test_reality_show_is_each_stage_ranked_afresh() -> None:
    """The stages take each leaver's matches out of the tally; ranking every
    stage from scratch (the definition) gives the same, draws and ties of
    score included."""
    rng = random.Random(7)
    names = [f"p{i}" for i in range(40)]
    matches = [
        MatchResult(a, b, rng.choice([0, 0, 1, -1, rng.randint(-42, 42)]))
        for a, b in itertools.combinations(names, 2)
    ]
    remaining, expected = names, []
    while remaining:
        expected.append([row.name for row in standings(remaining, matches)])
        remaining = expected[-1][:-1]
    assert reality_show(names, matches) == expected


# Six entrants, four rounds, one rematch (B-E in rounds 3 and 4); margins from a's side.
SIX = "ABCDEF"


def round_of(number: int, *matches: tuple[str, str, int]) -> Round:
    return Round(number, None, tuple(MatchResult(a, b, margin) for a, b, margin in matches))


SIX_ROUNDS = [
    round_of(1, ("A", "B", 10), ("C", "D", 0), ("E", "F", -4)),
    round_of(2, ("A", "F", 0), ("C", "B", 3), ("D", "E", -5)),
    round_of(3, ("A", "C", -8), ("F", "D", 6), ("E", "B", -1)),
    round_of(4, ("C", "F", 0), ("A", "D", 7), ("B", "E", -2)),
]


def test_every_criterion_by_hand_on_six_entrants() -> None:
    """Results (opponent: W win, D draw, L loss), running score after each round:

    A: B W, F D, C L, D W   running 1, 1.5, 1.5, 2.5   score 2.5  cumulative 6.5
    B: A L, C L, E W, E L   running 0, 0, 1, 1         score 1    cumulative 2
    C: D D, B W, A W, F D   running .5, 1.5, 2.5, 3    score 3    cumulative 7.5
    D: C D, E L, F L, A L   running .5, .5, .5, .5     score .5   cumulative 2
    E: F L, D W, B L, B W   running 0, 1, 1, 2         score 2    cumulative 4
    F: E W, A D, D W, C D   running 1, 1.5, 2.5, 3     score 3    cumulative 8
    (scores sum to 12 = 4 rounds x 3 matches)

    Median Buchholz, 4 opponents each: drop the highest and the lowest.
    A: B 1, F 3, C 3, D .5  -> .5 1 3 3   -> 1 + 3    = 4
    B: A 2.5, C 3, E 2, E 2 -> 2 2 2.5 3  -> 2 + 2.5  = 4.5  (E twice: the rematch)
    C: D .5, B 1, A 2.5, F 3            -> 1 + 2.5  = 3.5
    D: C 3, E 2, F 3, A 2.5 -> 2 2.5 3 3  -> 2.5 + 3  = 5.5
    E: F 3, D .5, B 1, B 1  -> .5 1 1 3   -> 1 + 1    = 2
    F: E 2, A 2.5, D .5, C 3            -> 2 + 2.5  = 4.5

    Neustadtl: beaten opponents' scores + half the drawn ones'.
    A: B 1 + D .5 + F 3/2 = 3          B: E 2 = 2
    C: D .5/2 + B 1 + A 2.5 + F 3/2 = 5.25
    D: C 3/2 = 1.5                     E: D .5 + B 1 = 1.5
    F: E 2 + A 2.5/2 + D .5 + C 3/2 = 5.25

    Opponents' cumulative (A 6.5, B 2, C 7.5, D 2, E 4, F 8):
    A: 2 + 8 + 7.5 + 2 = 19.5    B: 6.5 + 7.5 + 4 + 4 = 22   C: 2 + 2 + 6.5 + 8 = 18.5
    D: 7.5 + 4 + 8 + 6.5 = 26    E: 8 + 2 + 2 + 2 = 14       F: 4 + 6.5 + 2 + 7.5 = 20

    Default order: score; C and F tie at 3, F's Buchholz 4.5 beats C's 3.5.
    """
    rows = swiss_standings(SIX, SIX_ROUNDS)
    assert [row.to_json() for row in rows] == [
        {"rank": 1, "name": "F", "score": 3.0, "buchholz": 4.5, "neustadtl": 5.25,
         "cumulative": 8.0, "opp_cumulative": 20.0, "wins": 2, "draws": 2, "losses": 0, "byes": 0},
        {"rank": 2, "name": "C", "score": 3.0, "buchholz": 3.5, "neustadtl": 5.25,
         "cumulative": 7.5, "opp_cumulative": 18.5, "wins": 2, "draws": 2, "losses": 0, "byes": 0},
        {"rank": 3, "name": "A", "score": 2.5, "buchholz": 4.0, "neustadtl": 3.0,
         "cumulative": 6.5, "opp_cumulative": 19.5, "wins": 2, "draws": 1, "losses": 1, "byes": 0},
        {"rank": 4, "name": "E", "score": 2.0, "buchholz": 2.0, "neustadtl": 1.5,
         "cumulative": 4.0, "opp_cumulative": 14.0, "wins": 2, "draws": 0, "losses": 2, "byes": 0},
        {"rank": 5, "name": "B", "score": 1.0, "buchholz": 4.5, "neustadtl": 2.0,
         "cumulative": 2.0, "opp_cumulative": 22.0, "wins": 1, "draws": 0, "losses": 3, "byes": 0},
        {"rank": 6, "name": "D", "score": 0.5, "buchholz": 5.5, "neustadtl": 1.5,
         "cumulative": 2.0, "opp_cumulative": 26.0, "wins": 0, "draws": 1, "losses": 3, "byes": 0},
    ]  # fmt: skip


def test_the_criteria_order_is_configurable_then_name() -> None:
    """opp_cumulative alone: D 26, B 22, F 20, A 19.5, C 18.5, E 14.
    wins, then neustadtl: A C E F have 2 wins; C and F tie at 5.25 (C by
    name), then A 3, E 1.5; then B (1 win), D (0)."""
    by_opp = swiss_standings(SIX, SIX_ROUNDS, ("opp_cumulative",))
    assert [row.name for row in by_opp] == list("DBFACE")
    by_wins = swiss_standings(SIX, SIX_ROUNDS, parse_criteria("wins,neustadtl"))
    assert [row.name for row in by_wins] == list("CFAEBD")


def test_bad_criteria_are_refused() -> None:
    for text in ("", "score,score", "score,elo"):
        with pytest.raises(ValueError, match="criteria"):
            parse_criteria(text)


def test_median_buchholz_cuts() -> None:
    # spec: 3 to 8 opponents lose the highest and the lowest, 9 or more two of each;
    # 1 or 2 opponents: the spec names no cut, nothing is left out
    assert median_buchholz([]) == 0
    assert median_buchholz([2.0]) == 2.0
    assert median_buchholz([2.0, 3.0]) == 5.0
    assert median_buchholz([1.0, 2.0, 3.0]) == 2.0
    assert median_buchholz([0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 4.0, 5.0]) == 13.0  # 1+1+2+2+3+4
    nine = [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert median_buchholz(nine) == 1.0 + 2.0 + 3.0 + 4.0 + 5.0  # two cut at each end


def test_a_bye_scores_one_is_no_win_and_has_no_opponent() -> None:
    """Three rounds of a, b, c: c, then b, then a sit out; the earlier name wins.
    a: beats b (r1), beats c (r2), bye (r3): score 3, 2 wins, 1 bye; running
    1, 2, 3: cumulative 6; opponents b and c only (the bye is none): their
    final scores b 2 (bye + beats c), c 1 (bye): Buchholz 3 (2 opponents, no
    cut), Neustadtl 2 + 1 = 3."""
    rounds = [
        Round(1, "c", (MatchResult("a", "b", 1),)),
        Round(2, "b", (MatchResult("a", "c", 1),)),
        Round(3, "a", (MatchResult("c", "b", -1),)),
    ]
    a = swiss_standings("abc", rounds)[0]
    assert a.to_json() == {
        "rank": 1, "name": "a", "score": 3.0, "buchholz": 3.0, "neustadtl": 3.0,
        "cumulative": 6.0, "opp_cumulative": 3.0 + 3.0, "wins": 2, "draws": 0, "losses": 0,
        "byes": 1,
    }  # fmt: skip
    # b: running 0, 1 (bye), 2: cumulative 3; c: 1 (bye), 1, 1: cumulative 3


def earlier_name_wins(pairing: Pairing) -> Round:
    """Play a pairing where the alphabetically earlier program always wins by 1."""
    matches = tuple(MatchResult(a, b, 1 if a < b else -1) for a, b in pairing.pairs)
    return Round(pairing.number, pairing.bye, matches)


def play(entrants: str | list[str], settings: SwissSettings, result=earlier_name_wins):
    rounds: list[Round] = []
    while not isinstance(decision := next_round(list(entrants), rounds, settings), Ended):
        rounds.append(result(decision))
    return rounds, decision.reason


def test_planned_rounds() -> None:
    assert [planned_rounds(n) for n in (2, 3, 4, 5, 8, 9, 2000)] == [1, 2, 2, 3, 3, 4, 11]
    assert planned_rounds(5, 2) == 5


def test_byes_go_to_the_lowest_placed_without_one_then_run_out() -> None:
    """Round 1: everyone is tied, the last by name (c) sits out; a beats b.
    After it: a 1 (win), c 1 (bye, fewer wins), b 0: b sits out; a meets c.
    After it: a 2, then b and c on 1 with equal Buchholz (a's 2) and
    Neustadtl (0), c's cumulative 1+1 beats b's 0+1: a, c, b. Only a has no
    bye: the leader sits out, c meets b. Round 4 has nobody left for the bye."""
    rounds, reason = play("abc", SwissSettings(seed=1, additional_rounds=2))
    assert [r.bye for r in rounds] == ["c", "b", "a"]
    # round 1 is in the seed's order; later rounds put the better placed first
    assert {rounds[0].matches[0].a, rounds[0].matches[0].b} == {"a", "b"}
    assert [(m.a, m.b) for r in rounds[1:] for m in r.matches] == [("a", "c"), ("c", "b")]
    assert reason.startswith("byes ran out") and "round 4" in reason
    # R = ceil(log2 3) + 1 = 3 rounds: the byes last exactly
    rounds, reason = play("abc", SwissSettings(seed=1, additional_rounds=1))
    assert (len(rounds), reason) == (3, COMPLETE)


def test_nobody_gets_two_byes() -> None:
    names = [f"p{i:02}" for i in range(9)]
    rng = random.Random(5)
    rounds, reason = play(
        names,
        SwissSettings(seed=3, additional_rounds=20),
        lambda p: Round(
            p.number, p.bye, tuple(MatchResult(a, b, rng.randint(-3, 3)) for a, b in p.pairs)
        ),
    )
    byes = [r.bye for r in rounds]
    assert len(set(byes)) == len(byes) <= 9
    if len(byes) == 9:
        assert "byes ran out" in reason


def test_rematch_deadlock_without_and_with_allow_repeat() -> None:
    """Two entrants: R = 1 + additional rounds. Round 2 can only repeat x-y."""
    rounds, reason = play("xy", SwissSettings(seed=0, additional_rounds=2))
    assert len(rounds) == 1 and reason.startswith("deadlock") and "allow_repeat is off" in reason
    rounds, reason = play("xy", SwissSettings(seed=0, additional_rounds=2, allow_repeat=True))
    # the rematch is allowed once: round 3 would be a third meeting
    assert len(rounds) == 2 and reason.startswith("deadlock") and "third time" in reason
    rounds, reason = play("xy", SwissSettings(seed=0, additional_rounds=1, allow_repeat=True))
    assert (len(rounds), reason) == (2, COMPLETE)


def test_four_entrants_deadlock_after_everyone_met() -> None:
    """Four entrants meet all three others in rounds 1-3 (K4 has three perfect
    matchings and no rematch is allowed); the earlier name wins, so the
    standings are a 3, b 2, c 1, d 0. Round 4 is a deadlock; with allow_repeat
    it pairs the closest standings again: a-b and c-d (squared distances
    1 + 1, against 4 + 4 for a-c b-d and 9 + 1 for a-d b-c)."""
    rounds, reason = play("abcd", SwissSettings(seed=2, additional_rounds=2))
    assert len(rounds) == 3 and reason.startswith("deadlock")
    met = {frozenset((m.a, m.b)) for r in rounds for m in r.matches}
    assert len(met) == 6
    rounds, reason = play("abcd", SwissSettings(seed=2, additional_rounds=2, allow_repeat=True))
    assert reason == COMPLETE
    assert [(m.a, m.b) for m in rounds[3].matches] == [("a", "b"), ("c", "d")]


def test_round_one_is_reproducible_from_the_seed_whatever_the_order_given() -> None:
    names = [f"n{i}" for i in range(16)]
    settings = SwissSettings(seed=42, additional_rounds=1)
    first = play(names, settings)
    assert play(list(reversed(names)), settings) == first
    others = {next_round(names, [], SwissSettings(seed=s)) for s in range(5)}
    assert len(others) > 1  # the seed decides round 1


def perfect_matchings(players: list[str]) -> Iterator[list[tuple[str, str]]]:
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for i, other in enumerate(rest):
        for matching in perfect_matchings(rest[:i] + rest[i + 1 :]):
            yield [(first, other), *matching]


def repeats(matching: Iterable[tuple[str, str]], rounds: list[Round]) -> bool:
    met = {frozenset((m.a, m.b)) for r in rounds for m in r.matches}
    return any(frozenset(pair) in met for pair in matching)


def squared_distances(matching: Iterable[tuple[str, str]], order: list[str]) -> int:
    return sum((order.index(a) - order.index(b)) ** 2 for a, b in matching)


def players_of(names: list[str], rounds: list[Round]) -> list[str]:
    """The next round's players in standing order, less the bye (by the spec's rule)."""
    order = [row.name for row in swiss_standings(names, rounds)]
    if len(order) % 2:
        had_bye = {r.bye for r in rounds}
        order.remove(next(name for name in reversed(order) if name not in had_bye))
    return order


@pytest.mark.parametrize("seed", range(12))
def test_no_rematch_when_a_round_without_one_exists(seed: int) -> None:
    """On random results, every pairing is checked against all perfect
    matchings of the round's players: no rematch when a rematch-free one
    exists, and the fewest squared standing distances among those; a
    deadlock only when every perfect matching repeats a pair."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(rng.choice([6, 7, 8]))]
    settings = SwissSettings(seed=seed, additional_rounds=3)
    rounds: list[Round] = []
    while not isinstance(pairing := next_round(names, rounds, settings), Ended):
        if rounds:
            order = players_of(names, rounds)
            fresh = [m for m in perfect_matchings(order) if not repeats(m, rounds)]
            assert fresh and not repeats(pairing.pairs, rounds)
            best = min(squared_distances(m, order) for m in fresh)
            assert squared_distances(pairing.pairs, order) == best
        margins = [rng.randint(-2, 2) for _ in pairing.pairs]
        played = zip(pairing.pairs, margins, strict=True)
        rounds.append(Round(pairing.number, pairing.bye, tuple(
            MatchResult(a, b, margin) for (a, b), margin in played)))  # fmt: skip
    if pairing.reason.startswith("deadlock"):
        players = players_of(names, rounds)
        assert all(repeats(m, rounds) for m in perfect_matchings(players))


def test_closest_pairs_prefers_fewer_rematches_then_closeness() -> None:
    order = list("abcdef")
    met = Counter({frozenset("ab"): 1})
    # without a-b: a-c b-d e-f (4 + 4 + 1 = 9) beats a-d b-c e-f (9 + 1 + 1 = 11)
    assert closest_pairs(order, met, max_meetings=1) == (("a", "c"), ("b", "d"), ("e", "f"))
    everyone = Counter({frozenset(p): 1 for p in itertools.combinations(order, 2)})
    assert closest_pairs(order, everyone, max_meetings=1) is None
    assert closest_pairs(order, everyone, max_meetings=2) == (("a", "b"), ("c", "d"), ("e", "f"))


def test_big_pools_pair_in_blocks_joined_when_one_cannot_pair_alone() -> None:
    """40 players: blocks of 32 places, then the last 8. Player 0 has met
    everyone else in its block, so its block joins the next one; when the
    last 8 have all met each other, the whole list is paired at once."""
    order = [f"q{i:02}" for i in range(40)]
    assert BLOCK == 32
    lonely = Counter({frozenset((order[0], order[i])): 1 for i in range(1, 32)})
    pairs = closest_pairs(order, lonely, max_meetings=1)
    assert pairs is not None and sorted(n for pair in pairs for n in pair) == order
    opponent = next(b for a, b in pairs if a == order[0])
    assert order.index(opponent) >= 32 and not repeats_in(pairs, lonely)
    tail = Counter({frozenset(p): 1 for p in itertools.combinations(order[32:], 2)})
    pairs = closest_pairs(order, tail, max_meetings=1)
    assert pairs is not None and sorted(n for pair in pairs for n in pair) == order
    assert not repeats_in(pairs, tail)
    assert all(order.index(a) < 32 <= order.index(b) for a, b in pairs if b in order[32:])


def repeats_in(pairs: Iterable[tuple[str, str]], meetings: Counter[frozenset[str]]) -> bool:
    return any(meetings[frozenset(pair)] for pair in pairs)
