"""The native engine against the plain reference interpreter (tests/support/refinterp.py,
written straight from docs/rules.md) on generated programs.

The generated programs use every abbreviation form (`(P)*N`, `(P)%N`,
`(A{B}C)%N` with loops crossing from A into C, nesting, comments between a
`)` and its count) and are short and small-numbered, so that battles end by
every rule: flags held at zero, falling off either end, both at once, and the
cycle limit (kept low so the plain interpreter can follow).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from support import refinterp

from hill import engine

COUNTS = st.sampled_from(["*{}", "%{}", "* {}", "*x{}", "%\n{}"]).flatmap(
    lambda form: st.integers(0, 12).map(form.format)
)
OPS = st.sampled_from("+-<>.+-+-><")


@st.composite
def _loop(draw: st.DrawFn, body: st.SearchStrategy[str]) -> str:
    return "[" + draw(body) + "]"


@st.composite
def _repeat(draw: st.DrawFn, body: st.SearchStrategy[str]) -> str:
    # a missing count (a bare `)`) means 0
    count = draw(st.one_of(COUNTS, st.just("")))
    return "(" + draw(body) + ")" + count


@st.composite
def _brace_repeat(draw: st.DrawFn, body: st.SearchStrategy[str]) -> str:
    """(A{B}C)%N, sometimes with k loops opened in A and closed in C."""
    loops = draw(st.integers(0, 2))
    a, b, c = draw(body), draw(body), draw(body)
    count = draw(st.integers(0, 6))
    return f"({a}{'[' * loops}{{{b}}}{']' * loops}{c})%{count}"


def _sequence(items: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(items, max_size=8).map("".join)


PROGRAMS: st.SearchStrategy[str] = st.recursive(
    _sequence(OPS),
    lambda inner: _sequence(
        st.one_of(OPS, OPS, _loop(inner), _repeat(inner), _brace_repeat(inner))
    ),
    max_leaves=24,
)

# Programs that reach the enemy: a run of `>` first, then anything.
ATTACKERS = st.builds(lambda n, tail: ">" * n + tail, st.integers(0, 12), PROGRAMS)


def _reference(source: str) -> refinterp.RefProgram:
    try:
        return refinterp.parse(source)
    except refinterp.TooLarge:
        assume(False)
        raise


# ENGINE_EXAMPLES=N multiplies the examples of every test here (long runs by hand)
SCALE = int(os.environ.get("ENGINE_EXAMPLES", "1"))


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


TEST_SETTINGS = _settings(150)


@TEST_SETTINGS
@given(ATTACKERS, ATTACKERS, st.integers(1, 1500))
def test_jousts_match_the_reference_interpreter(left: str, right: str, max_cycles: int) -> None:
    expected = refinterp.run_joust(_reference(left), _reference(right), max_cycles)
    result = engine.joust(
        engine.compile_program(left), engine.compile_program(right), max_cycles=max_cycles
    )
    assert list(result.outcomes) == expected


@TEST_SETTINGS
@given(
    ATTACKERS,
    ATTACKERS,
    st.sampled_from(engine.TAPE_LENGTHS),
    st.sampled_from(engine.POLARITIES),
    st.integers(1, 600),
)
def test_traces_match_the_reference_interpreter(
    left: str, right: str, length: int, polarity: engine.Polarity, max_cycles: int
) -> None:
    outcome, states = refinterp.trace_battle(
        _reference(left), _reference(right), length, polarity == "kettle", max_cycles
    )
    trace = engine.trace(
        engine.compile_program(left),
        engine.compile_program(right),
        length,
        polarity,
        max_cycles=max_cycles,
    )
    assert trace.outcome == outcome
    assert trace.cycles == len(states)
    for cycle, (left_pointer, right_pointer, tape) in enumerate(states, start=1):
        assert trace.left_pointer[cycle] == left_pointer
        assert trace.right_pointer[cycle] == right_pointer
        assert bytes(trace.tapes[cycle]) == tape


# Text over the characters that matter to the parser, most of them structural.
ANY_TEXT = st.text(alphabet="+-<>.[](){}*%0123456789 x\n", max_size=40)


@_settings(400)
@given(ANY_TEXT)
def test_both_accept_and_reject_the_same_programs(source: str) -> None:
    try:
        reference = refinterp.parse(source)
    except refinterp.RefParseError:
        reference = None
    except refinterp.TooLarge:
        reference = "large"
    try:
        program = engine.compile_program(source)
    except engine.ParseError as error:
        assert reference is None, f"engine refused a valid program: {error}"
        assert error.line >= 1 and error.column >= 1
        return
    assert reference is not None, "engine accepted a malformed program"
    if isinstance(reference, refinterp.RefProgram):
        rush = engine.compile_program("(>)*9([-]>)*21")
        expected = refinterp.run_joust(reference, refinterp.parse("(>)*9([-]>)*21"), 300)
        assert list(engine.joust(program, rush, max_cycles=300).outcomes) == expected


def test_long_ties_are_exact_at_the_full_cycle_limit() -> None:
    """Ties the engine proves early by state repetition, and battles that are
    no tie only because a repeat runs out just before the cycle limit."""
    cases = [
        ("(>)*9(+-)*-1", "(>)*9(-+)*-1"),  # a steady dance
        ("[]", ">"),  # idle against idle
        ("(>)*9((+)*25(-)*25)*2100", "(+-)*-1"),
        # 49995 x 2 cycles of dancing, then an attack decided near the limit
        (".(+-)*49995(>)*9([-]>)*21", "(.)*-1"),
        (".(+-)*49999(>)*9([-]>)*21", "(.)*-1"),
    ]
    battles = [(10, "sieve"), (30, "kettle")]
    for left, right in cases:
        result = engine.joust(engine.compile_program(left), engine.compile_program(right))
        for length, polarity in battles:
            expected = refinterp.run_battle(
                refinterp.parse(left), refinterp.parse(right), length, polarity == "kettle"
            )
            index = engine.battle_index(length, polarity)
            assert result.outcomes[index] == expected, (left, right, length, polarity)


# --- programs that stress the engine's shortcuts -------------------------------
# Repeated states jump ahead by whole periods, and two programs both in
# one-instruction loops jump ahead together: these programs lock into loops
# (nested, (A{B}C) with crossing loops, one-op loops on flags and decoys) whose
# counters run out near the cycle limit, so that every jump ends just in time.

SMALL_BODY = st.lists(
    st.sampled_from(
        [
            "+",
            "-",
            ".",
            "+-",
            "-+",
            "+-+",
            "[-]",
            "[+]",
            "[]",
            "[.]",
            "(+)*3",
            "(-)*2",
            "(.)*5",
            "(+-)*2",
            "[-.]",
            "><",
            "<>",
            ">+<",
            "<->",
            ">",
            "<",
        ]
    ),
    min_size=1,
    max_size=4,
).map("".join)


@st.composite
def _lock(draw: st.DrawFn) -> str:
    body = draw(SMALL_BODY)
    count = draw(st.one_of(st.integers(1, 40), st.integers(40, 1200)))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return f"({body})*{count}"
    if kind == 1:
        inner = draw(st.integers(1, 40))
        return f"(({body})*{inner}{draw(SMALL_BODY)})*{count}"
    if kind == 2:
        a, b, c = draw(SMALL_BODY), draw(SMALL_BODY), draw(SMALL_BODY)
        loops = draw(st.integers(0, 2))
        return f"({a}{'[' * loops}{{{b}}}{']' * loops}{c})%{count}"
    op = draw(st.sampled_from("+-."))
    return f"({op})*{count}" if draw(st.booleans()) else f"[{op}]"


LEADS = st.sampled_from(
    [">", ">>", ">" * 9, ">(+)*5>(-)*7<", "(>)*8", ">(-)*127<", "(-)*127>", "(+)*128>>"]
)
LOCKERS = st.builds(
    lambda lead, locks, tail: lead + "".join(locks) + tail,
    LEADS,
    st.lists(_lock(), min_size=1, max_size=3),
    PROGRAMS,
)


@st.composite
def _spin(draw: st.DrawFn) -> str:
    op = draw(st.sampled_from("+-."))
    count = draw(st.one_of(st.integers(1, 10), st.integers(10, 300), st.just(-1)))
    return draw(st.sampled_from([f"({op})*{count}", f"[{op}]", "[]", f"({op}{{}})%{count}"]))


# One-op loops one after another, with moves and bits of anything between,
# after a run of `>`: for some tape lengths the two programs meet on one cell.
SPINNERS = st.builds(
    lambda lead, parts: f"(>)*{lead}" + "".join(parts),
    st.integers(0, 25),
    st.lists(
        st.one_of(_spin(), _spin(), st.sampled_from([">", "<", "+", "-", "(+-)*40", "[-.]"])),
        max_size=8,
    ),
)
LOCKERS = st.one_of(LOCKERS, SPINNERS)


@_settings(60)
@given(SPINNERS, SPINNERS, st.integers(200, 3000))
def test_spinning_programs_match_the_reference_interpreter(
    left: str, right: str, max_cycles: int
) -> None:
    expected = refinterp.run_joust(_reference(left), _reference(right), max_cycles)
    result = engine.joust(
        engine.compile_program(left), engine.compile_program(right), max_cycles=max_cycles
    )
    assert list(result.outcomes) == expected


@_settings(60)
@given(LOCKERS, st.one_of(LOCKERS, ATTACKERS), st.booleans(), st.integers(200, 3000))
def test_locking_programs_match_the_reference_interpreter(
    left: str, right: str, swap: bool, max_cycles: int
) -> None:
    if swap:
        left, right = right, left
    expected = refinterp.run_joust(_reference(left), _reference(right), max_cycles)
    result = engine.joust(
        engine.compile_program(left), engine.compile_program(right), max_cycles=max_cycles
    )
    assert list(result.outcomes) == expected


@_settings(12)
@given(
    LOCKERS,
    st.one_of(LOCKERS, ATTACKERS),
    st.sampled_from(engine.TAPE_LENGTHS),
    st.sampled_from(engine.POLARITIES),
)
def test_locks_at_the_full_cycle_limit(
    left: str, right: str, length: int, polarity: engine.Polarity
) -> None:
    """One battle each, played to the real limit of 100000 cycles."""
    expected = refinterp.run_battle(
        _reference(left), _reference(right), length, polarity == "kettle"
    )
    result = engine.joust(engine.compile_program(left), engine.compile_program(right))
    assert result.outcomes[engine.battle_index(length, polarity)] == expected


# --- battle statistics ---------------------------------------------------------
# Counted by the engine as an option of the same battles, through every
# shortcut (the shared prefix, ties found early, jumps ahead): each must
# equal the reference interpreter's count from the spec's words.


def _assert_stats_match(left: str, right: str, max_cycles: int, only: int | None = None) -> None:
    result = engine.joust(
        engine.compile_program(left),
        engine.compile_program(right),
        max_cycles=max_cycles,
        stats=True,
    )
    assert result.battles is not None
    assert [b.outcome for b in result.battles] == list(result.outcomes)
    reference_left, reference_right = _reference(left), _reference(right)
    for index, battle in enumerate(result.battles):
        if only is not None and index != only:
            continue
        outcome, expected = refinterp.battle_stats(
            reference_left, reference_right, battle.tape, battle.polarity == "kettle", max_cycles
        )
        assert (battle.tape, battle.polarity) == engine.battle_config(index)
        assert battle.outcome == outcome, (battle.tape, battle.polarity)
        assert battle.cycles == expected.cycles, (battle.tape, battle.polarity)
        assert list(battle.tape_end) == expected.tape_end, (battle.tape, battle.polarity)
        assert [list(h) for h in battle.heat] == expected.heat, (battle.tape, battle.polarity)
        assert [list(d) for d in battle.decoy] == expected.decoy, (battle.tape, battle.polarity)


@_settings(60)
@given(ATTACKERS, ATTACKERS, st.integers(1, 1500))
def test_statistics_match_the_reference_interpreter(left: str, right: str, max_cycles: int) -> None:
    _assert_stats_match(left, right, max_cycles)


@_settings(40)
@given(
    st.one_of(LOCKERS, SPINNERS), st.one_of(LOCKERS, SPINNERS, ATTACKERS), st.integers(200, 3000)
)
def test_statistics_through_the_shortcuts(left: str, right: str, max_cycles: int) -> None:
    _assert_stats_match(left, right, max_cycles)


@_settings(8)
@given(LOCKERS, st.one_of(LOCKERS, ATTACKERS), st.integers(0, engine.BATTLES - 1))
def test_statistics_at_the_full_cycle_limit(left: str, right: str, index: int) -> None:
    _assert_stats_match(left, right, engine.MAX_CYCLES, only=index)


def test_statistics_edge_cases() -> None:
    """Falls on either side (which cycle counts), both at once, a fall while a
    flag dies, flags at zero, decoys of -128 and off the tape, long ties."""
    cases = [
        ("<", ""),
        ("", "<"),
        ("<", "<"),
        ("(-)*128", "(.)*128<"),
        ("(-)*128", "(.)*127<"),
        ("(-)*128", "(-)*128"),
        ("(-)*128+", ""),
        ("(-)*128<", ""),
        ("(>)*9([-]>)*21", "[]"),
        ("(>)*9(-)*128>", ">(+)*128<[]"),
        ("(>)*8(+-)*-1", "(>)*8(-+)*-1"),
        (">(+)*128(>)*30", "(-)*127[]"),
    ]
    for left, right in cases:
        _assert_stats_match(left, right, 1000)
        _assert_stats_match(right, left, 1000)
