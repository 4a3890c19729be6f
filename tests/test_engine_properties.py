"""The native engine against the plain reference interpreter (tests/support/refinterp.py,
written straight from docs/rules.md) on generated programs.

The generated programs use every abbreviation form (`(P)*N`, `(P)%N`,
`(A{B}C)%N` with loops crossing from A into C, nesting, comments between a
`)` and its count) and are short and small-numbered, so that battles end by
every rule: flags held at zero, falling off either end, both at once, and the
cycle limit (kept low so the plain interpreter can follow).
"""

from __future__ import annotations

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


TEST_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


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


@settings(max_examples=400, deadline=None)
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
