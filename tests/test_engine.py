"""The native engine against the reference results, its own plain path, and the rules.

The tests of the rules run against both the native engine and the reference
interpreter of the tests (tests/support/refinterp.py, written straight from docs/rules.md),
as markupsafe runs its tests against its native and its speedups modules: the
fixture `backend` is one or the other.  Tests that the reference interpreter
cannot run say why and use the native engine alone.
"""

from __future__ import annotations

import json
import random
from types import ModuleType

import pytest
from support.reference import warrior_path
from support.refinterp import ReferenceEngine

from hill import engine
from hill.engine import _engine, arena, compile_program, joust
from hill.errors import ParseError

Backend = ModuleType | type[ReferenceEngine]


@pytest.fixture(params=[engine, ReferenceEngine], ids=["native", "reference"])
def backend(request: pytest.FixtureRequest) -> Backend:
    return request.param


@pytest.fixture(scope="session")
def reference_programs(reference_names: list[str]) -> list[engine.Program]:
    return [compile_program(warrior_path(name).read_bytes()) for name in reference_names]


def test_every_reference_joust_matches(
    reference_programs: list[engine.Program], reference_results: list[str]
) -> None:
    n = len(reference_programs)
    assert n == 98 and len(reference_results) == n * n
    pairs = [(a, b) for a in reference_programs for b in reference_programs]
    results = arena.joust_pairs(pairs)
    mismatches = [
        (k // n, k % n, str(result), expected)
        for k, (result, expected) in enumerate(zip(results, reference_results, strict=True))
        if str(result) != expected
    ]
    assert mismatches == []


def test_trace_agrees_with_joust(reference_programs: list[engine.Program]) -> None:
    """A trace runs each battle on its own from cycle 0 with no shortcuts
    (no shared prefix, no repetition check): it must reach the same outcomes."""
    rng = random.Random(7)
    for _ in range(12):
        left, right = rng.sample(reference_programs, 2)
        outcomes = joust(left, right).outcomes
        for index, (polarity, length) in enumerate(
            (p, n) for p in engine.POLARITIES for n in engine.TAPE_LENGTHS
        ):
            assert engine.trace(left, right, length, polarity).outcome == outcomes[index]


# The tests above play the 98 reference programs (long battles, programs of
# up to 800 KB): the native engine alone, the reference interpreter would
# take hours.


def test_self_joust_is_all_ties(reference_programs: list[engine.Program]) -> None:
    for program in reference_programs[::7]:
        assert joust(program, program).outcomes == (0,) * engine.BATTLES


def test_threads_give_the_same_results(reference_programs: list[engine.Program]) -> None:
    left, opponents = reference_programs[0], reference_programs[:30]
    assert arena.joust_many(left, opponents, jobs=2) == arena.joust_many(left, opponents, jobs=1)


def test_classic_line_round_trip() -> None:
    line = "<<<>>>>>><<<<>><<<<<< <<<>>>>>><<<<>><<<<<< 10"
    assert engine.classic_line(engine.parse_classic_line(line)) == line


def test_the_rules_numbers_come_from_the_native_engine() -> None:
    assert (engine.MIN_TAPE, engine.MAX_TAPE, engine.BATTLES) == (10, 30, 42)
    assert engine.BATTLES == len(engine.TAPE_LENGTHS) * len(engine.POLARITIES) == _engine.BATTLES
    # every parse error the engine can name has its message
    assert set(engine.ERROR_MESSAGES) == set(_engine.PARSE_ERRORS)


# --- the rules, on small hand-made programs ---------------------------------

RUSH = "(>)*9([-]>)*21"  # clears every cell up to the enemy flag


def outcomes(backend: Backend, left: str, right: str, **kwargs: int) -> tuple[int, ...]:
    play = backend.joust(backend.compile_program(left), backend.compile_program(right), **kwargs)
    return play.outcomes


def test_rush_beats_an_idle_program(backend: Backend) -> None:
    assert outcomes(backend, RUSH, "") == (1,) * 42
    assert outcomes(backend, "", RUSH) == (-1,) * 42


def test_falling_off_the_own_end_loses(backend: Backend) -> None:
    assert outcomes(backend, "<", "") == (-1,) * 42
    assert outcomes(backend, "", "<") == (1,) * 42


def test_both_falling_off_in_one_cycle_is_a_tie(backend: Backend) -> None:
    assert outcomes(backend, "<", "<") == (0,) * 42


def test_a_fall_while_the_other_flag_dies_a_second_time_is_a_tie(backend: Backend) -> None:
    # Left zeroes its own flag at cycle 128 and keeps it there; right walks
    # off its end at cycle 129, the cycle left's flag is zero a second time.
    assert outcomes(backend, "(-)*128", "(.)*128<") == (0,) * 42
    # One cycle earlier the fall decides alone.
    assert outcomes(backend, "(-)*128", "(.)*127<") == (1,) * 42


def test_flag_zero_for_two_cycles_loses_and_both_at_once_tie(backend: Backend) -> None:
    assert outcomes(backend, "(-)*128", "") == (-1,) * 42
    assert outcomes(backend, "(-)*128", "(-)*128") == (0,) * 42
    # zero for one cycle only, then back: nothing happens (up to any limit;
    # 1000 cycles keep the reference interpreter quick)
    assert outcomes(backend, "(-)*128+", "", max_cycles=1000) == (0,) * 42


def test_kettle_inverts_the_right_program(backend: Backend) -> None:
    left, right = backend.compile_program(""), backend.compile_program(">+++")
    sieve = backend.trace(left, right, 12, "sieve", max_cycles=10)
    kettle = backend.trace(left, right, 12, "kettle", max_cycles=10)
    assert sieve.tapes[-1][10] == 3
    assert kettle.tapes[-1][10] == 256 - 3
    # the left program's + is never swapped
    swapped = backend.trace(backend.compile_program(">+++"), left, 12, "kettle", max_cycles=10)
    assert swapped.tapes[-1][1] == 3


def test_cycle_limit_and_a_decision_on_the_last_cycle(backend: Backend) -> None:
    # left's flag dies at the end of cycles 128 and 129
    assert outcomes(backend, "(-)*128", "", max_cycles=129) == (-1,) * 42
    assert outcomes(backend, "(-)*128", "", max_cycles=128) == (0,) * 42


def test_swapping_sides_negates(backend: Backend) -> None:
    a, b = "(>)*7(+)*5([-]>)*20", ">(+)*10<(-[+]>)*3"
    assert outcomes(backend, b, a) == tuple(-o for o in outcomes(backend, a, b))
    assert 0 < sum(outcomes(backend, a, b)) < 42  # a real contest: wins and ties


# The abbreviations are the reference interpreter's own definition (it
# expands them), and their battles against idle opponents last the full
# 100000 cycles, minutes for it: these tests use the native engine alone.


def test_abbreviations_expand_like_the_written_program() -> None:
    pairs = [
        ("(>)*9([-]>)*21", ">>>>>>>>>" + "[-]>" * 21),
        ("(>)%9(+{-}.)%3", ">>>>>>>>>" + "+++-..."),
        ("(-[{.}])%3", "-[-[-[.]]]"),
        ("((>)*2)*3(+)*0-", ">>>>>>-"),
        ("(>) * 4 (+)*", ">>>>"),  # no count after `*`: 0; spaces allowed before digits
        ("(>)*-1", ">" * 40),  # negative: 100000, effectively forever
        ("(>)*3 4", ">>>"),  # a stray digit is a comment
        ("(a(b{c{d}e}f)%2g)%3", ""),  # letters are comments
        # the second `{` belongs to the outer repeat (the inner one has one)
        ("(>(+{-{<}.}>)%2-)%2", ">++-" * 2 + "<" + ".>>-" * 2),
    ]
    opponents = [compile_program(p) for p in ("", RUSH, "(>)*8(-)*64<(+)*40", ">+[]<(-)*10")]
    for short, written in pairs:
        a, b = compile_program(short), compile_program(written)
        for opponent in opponents:
            assert joust(a, opponent) == joust(b, opponent), short
            assert joust(opponent, a) == joust(opponent, b), short


def test_count_parsing_details() -> None:
    same = [
        ("(>)*1000000", "(>)*100000"),  # capped
        ("(+)*-0>", ">"),  # minus zero is zero
        ("(+)*- 5>", ">"),  # digits must follow the minus directly; the 5 is a comment
        ("(+)*-+>", ">"),  # the lone `-` is eaten, not an instruction
        ("(+)\n*\n3>", "+++>"),  # comments between `)` `*` and the digits
        ("(+) , *3>", ">"),  # `,` ends the search for `*`
    ]
    opponent = compile_program("(>)*9([-]>)*5(+)*7[-]")
    for short, written in same:
        a, b = compile_program(short), compile_program(written)
        assert joust(a, opponent) == joust(b, opponent), short
        assert joust(opponent, a) == joust(opponent, b), short


# --- parse errors ---------------------------------------------------------------
# Both refuse every malformed program; only the native engine says where.

ERRORS = [
    ("+(\n+", 1, 2, "unmatched '('"),
    ("+\n +)", 2, 3, "unmatched ')'"),
    ("[", 1, 1, "unmatched '['"),
    ("+]", 1, 2, "unmatched ']'"),
    ("{}", 1, 1, "'{' outside any '(...)'"),
    ("(a{b}c{d}e)%2", 1, 7, "second '{'"),
    ("(+)%2}", 1, 6, "unmatched '}'"),
    ("(+{)%2", 1, 3, "'{' has no '}'"),
    ("(+[)*5]", 1, 4, "cannot cross out"),
    ("[(+]+)*2", 1, 4, "cannot cross into"),
    ("(" * 4097 + ")" * 4097, 1, 4097, "deeper than 4096"),
    ("[" * 4097 + "]" * 4097, 1, 4097, "deeper than 4096"),
]


# (the nesting limits are the native engine's: the reference interpreter
# recurses once per level, and Python's stack is shallower)
@pytest.mark.parametrize("source", [e[0] for e in ERRORS if "deeper than" not in e[3]])
def test_malformed_programs_are_refused(backend: Backend, source: str) -> None:
    with pytest.raises(backend.ParseError):
        backend.compile_program(source)


@pytest.mark.parametrize(("source", "line", "column", "message"), ERRORS)
def test_parse_errors_say_what_and_where(source: str, line: int, column: int, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        compile_program(source)
    error = caught.value
    assert (error.line, error.column) == (line, column)
    assert message in error.message
    assert str(error).startswith(f"line {line}, column {column}: ")


def test_columns_count_characters_not_bytes() -> None:
    with pytest.raises(ParseError) as caught:
        compile_program("é ü ]")
    assert (caught.value.line, caught.value.column) == (1, 5)


# The next tests use programs whose written-out form is astronomical: the
# native engine alone (the reference interpreter expands every repeat).


def test_deepest_allowed_nesting_compiles_and_runs() -> None:
    rush = compile_program(RUSH)
    # 2**4096 increments of the own flag: within the cycle limit, forever
    deep = compile_program("(" * 4096 + "+" + ")*2" * 4096)
    assert joust(deep, rush) == joust(compile_program("(+)*-1"), rush)
    # the innermost loop spins on the flag until it is zero
    brackets = compile_program("[" * 4096 + "]" * 4096)
    assert (
        joust(brackets, rush)
        == joust(compile_program("[]"), rush)
        == joust(compile_program(""), rush)
    )


def test_astronomical_expansion_is_bounded() -> None:
    program = compile_program("((((+)*100000)*100000)*100000)*100000")
    assert program.native.instructions < 20
    rush = compile_program(RUSH)
    assert joust(program, rush) == joust(compile_program("(+)*-1"), rush)


def test_empty_bodies_never_spin() -> None:
    # nested repeats with nothing real inside must not cost time per cycle
    program = compile_program("(((+)*0)*-1)*-1(((.)*-1)*-1)*-1")
    assert joust(program, program).outcomes == (0,) * 42


def test_largest_hill_program_compiles() -> None:
    source = warrior_path("esohill-20241026/Lymia.lugh.bfjoust").read_bytes()
    assert len(source) > 800_000
    program = compile_program(source)
    assert program.native.instructions > 0


def test_bad_arguments_are_rejected() -> None:
    a = compile_program("+")
    with pytest.raises(ValueError):
        joust(a, a, max_cycles=0)
    with pytest.raises(ValueError):
        engine.trace(a, a, 9)
    with pytest.raises(ValueError):
        engine.trace(a, a, 10, "sideways")  # type: ignore[arg-type]


def test_trace_records_every_cycle(backend: Backend) -> None:
    left, right = backend.compile_program("(>)*9[-]"), backend.compile_program("(-)*10")
    trace = backend.trace(left, right, 10, "sieve")
    assert trace.tapes.shape == (trace.cycles + 1, 10)
    assert trace.tapes[0].tolist() == [128] + [0] * 8 + [128]
    assert trace.left_pointer[0] == 0 and trace.right_pointer[0] == 9
    assert trace.left_pointer[9] == 9  # after nine `>`
    assert trace.left_source[0] == 1  # the first `>` is at byte 1
    assert trace.right_source[0] == 1
    assert trace.outcome == 1 and "right's flag" in trace.reason


# --- battle statistics (docs/analytics.md) ---------------------------------


def _battle(result: engine.JoustResult, length: int, polarity: str) -> engine.BattleStats:
    assert result.battles is not None
    return result.battles[engine.battle_index(length, polarity)]


def test_statistics_as_the_established_hill_counts_them() -> None:
    """Figures its cranklance build prints for these battles (CYCLES, TAPEABS,
    TAPEMAX, TAPEHEAT)."""
    rush, idle = compile_program("(>)*9([-]>)*21"), compile_program(">(+)*20<(.)*50")
    result = joust(rush, idle, stats=True)
    sieve10 = _battle(result, 10, "sieve")
    assert (sieve10.outcome, sieve10.cycles) == (1, 266)
    assert sieve10.tape_end == (-128, 0, 0, 0, 0, 0, 0, 0, 20, 0)
    assert sieve10.decoy == ((128, 0, 0, 0, 0, 0, 0, 0, 7, 0), (0, 0, 0, 0, 0, 0, 0, 0, 20, 128))
    assert sieve10.heat == ((0, 1, 1, 1, 1, 1, 1, 1, 1, 257), (0, 0, 0, 0, 0, 0, 0, 0, 21, 244))
    kettle12 = _battle(result, 12, "kettle")
    assert kettle12.cycles == 742
    assert kettle12.tape_end == (-128,) + (0,) * 11
    assert kettle12.decoy[1] == (0,) * 10 + (25, 128)
    assert kettle12.heat == (
        (0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 474, 257),
        (0,) * 10 + (21, 720),
    )
    # a fall on the right ends the battle before its cycle counts; on the left, after
    falls_right = _battle(joust(compile_program(""), compile_program("<"), stats=True), 10, "sieve")
    assert (falls_right.outcome, falls_right.cycles, falls_right.decoy[1][9]) == (1, 0, 128)
    falls_left = _battle(joust(compile_program("<"), compile_program(""), stats=True), 10, "sieve")
    assert (falls_left.outcome, falls_left.cycles, falls_left.decoy[0][0]) == (-1, 1, 128)
    assert falls_left.heat == ((0,) * 10, (0,) * 10)


def test_statistics_follow_the_tool_contract() -> None:
    left, right = compile_program(RUSH), compile_program("[]")
    assert joust(left, right).battles is None
    with pytest.raises(ValueError):
        list(engine.stats_json_lines(joust(left, right)))
    result = joust(left, right, stats=True)
    lines = [json.loads(line) for line in engine.stats_json_lines(result)]
    assert len(lines) == engine.BATTLES
    for index, line in enumerate(lines):
        length, polarity = engine.battle_config(index)
        assert list(line) == ["tape", "polarity", "outcome", "cycles", "tape_end", "heat", "decoy"]
        assert (line["tape"], line["polarity"], line["outcome"]) == (
            length,
            polarity,
            result.outcomes[index],
        )
        assert len(line["tape_end"]) == length
        assert [len(h) for h in line["heat"]] == [len(d) for d in line["decoy"]] == [length] * 2
        # every cycle after which the battle went on is somewhere on the tape,
        # for both programs (no program falls off here: the deciding cycle is out)
        went_on = line["cycles"] - (line["outcome"] != 0 or line["cycles"] < engine.MAX_CYCLES)
        assert sum(line["heat"][0]) == sum(line["heat"][1]) == went_on


def test_statistics_leave_the_outcomes_alone(
    reference_programs: list[engine.Program], reference_results: list[str]
) -> None:
    n = len(reference_programs)
    rng = random.Random(3)
    pairs = [tuple(rng.sample(range(n), 2)) for _ in range(40)]
    results = arena.joust_pairs(
        [(reference_programs[a], reference_programs[b]) for a, b in pairs], stats=True
    )
    for (a, b), result in zip(pairs, results, strict=True):
        assert str(result) == reference_results[a * n + b]
        assert result.battles is not None
        assert [battle.outcome for battle in result.battles] == list(result.outcomes)
