"""The Lab's engine, hill/web/static/lab/engine.js over engine.wasm (the
engine's core built to WebAssembly), run by Node: the same results as the
native engine and the reference interpreter (tests/support/refinterp.py),
the same traces as `bfjoust trace`, the debugger's repeat counters as the
written-out program has them, the same parse errors and words.

One Node process (tests/support/labnode.py) serves every test of the module.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import refinterp
from support.labnode import LabNode, encode
from support.reference import warrior_path
from test_engine_properties import ANY_TEXT, ATTACKERS, LOCKERS, SPINNERS, _reference, _settings

from hill import engine
from hill.engine import _engine
from hill.errors import ParseError


@pytest.fixture(scope="module")
def lab() -> Iterator[LabNode]:
    node = LabNode()
    yield node
    node.close()


def lab_joust(lab: LabNode, left: str | bytes, right: str | bytes, **options: Any) -> Any:
    max_cycles = options.get("max_cycles", engine.MAX_CYCLES)
    pair = [encode(left), encode(right), max_cycles, options.get("stats", False)]
    return lab.ask("jousts", pairs=[pair])[0]


def native_trace(
    left: str | bytes,
    right: str | bytes,
    tape: int,
    polarity: engine.Polarity,
    max_cycles: int,
) -> engine.Trace:
    """The native engine's trace of the same battle."""
    programs = engine.compile_program(left), engine.compile_program(right)
    return engine.trace(*programs, tape, polarity, max_cycles=max_cycles)


# --- the reference matrix ------------------------------------------------------


def test_every_reference_joust_matches(
    lab: LabNode, reference_names: list[str], reference_results: list[str]
) -> None:
    paths = [str(warrior_path(name)) for name in reference_names]
    lines = lab.ask("matrix", paths=paths)["lines"]
    n = len(paths)
    assert n == 98 and len(lines) == n * n
    mismatches = [
        (k // n, k % n, line, expected)
        for k, (line, expected) in enumerate(zip(lines, reference_results, strict=True))
        if line != expected
    ]
    assert mismatches == []


# --- the contract's numbers and words --------------------------------------------


def test_the_api_in_node() -> None:
    """tests/node/api.mjs: loading from a URL, bytes or a module; Programs
    compiled once and jousted many times; bad arguments; freed handles; no
    leak."""
    node = LabNode.node()
    script = Path(__file__).resolve().parent / "node" / "api.mjs"
    run = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-4000:]
    assert json.loads(run.stdout) == {"ok": True}


def test_numbers_and_error_words_are_the_native_engines(lab: LabNode) -> None:
    constants = lab.ask("constants")
    assert (constants["MIN_TAPE"], constants["MAX_TAPE"]) == (engine.MIN_TAPE, engine.MAX_TAPE)
    assert (constants["BATTLES"], constants["MAX_CYCLES"]) == (engine.BATTLES, engine.MAX_CYCLES)
    assert constants["MAX_NEST"] == engine.MAX_NEST
    assert constants["PARSE_ERRORS"] == list(_engine.PARSE_ERRORS)
    assert constants["ERROR_MESSAGES"] == engine.ERROR_MESSAGES


def test_joust_result_fields(lab: LabNode) -> None:
    left, right = "(>)*9([-]>)*21", ">(+)*20<(.)*50"
    native = engine.joust(engine.compile_program(left), engine.compile_program(right))
    result = lab_joust(lab, left, right)
    assert result["text"] == str(native)
    assert result["sum"] == native.score
    assert result["outcomes"] == list(native.outcomes)
    assert (result["cycles"], result["gameCycles"]) == (native.cycles, native.game_cycles)
    assert "battles" not in result


def assert_stats_equal(lab_result: Any, native: engine.JoustResult) -> None:
    assert native.battles is not None and native.records is not None
    assert len(lab_result["battles"]) == engine.BATTLES
    for battle, stats, record in zip(
        lab_result["battles"], native.battles, native.records, strict=True
    ):
        ended = {key: bool(record["ended"] & bit) for key, bit in END_BITS.items()}
        expected = {**stats.to_json(), "ended": ended}
        assert battle == expected


# the JS names of the bits of hill.engine.END_BITS
END_BITS = {"leftFlag": 1, "rightFlag": 2, "leftFell": 4, "rightFell": 8, "limit": 16}


def test_statistics_equal_the_native_engines(lab: LabNode) -> None:
    cases = [
        ("(>)*9([-]>)*21", ">(+)*20<(.)*50"),
        ("<", ""),
        ("", "<"),
        ("<", "<"),
        ("(-)*128", "(.)*128<"),
        ("(>)*8(+-)*-1", "(>)*8(-+)*-1"),
    ]
    for left, right in cases:
        native = engine.joust(
            engine.compile_program(left), engine.compile_program(right), stats=True
        )
        assert_stats_equal(lab_joust(lab, left, right, stats=True), native)
    # how the battles ended, worked by hand
    falls = lab_joust(lab, "", "<", stats=True)["battles"][0]["ended"]
    assert falls == {**dict.fromkeys(END_BITS, False), "rightFell": True}
    tie = lab_joust(lab, "[]", ">", stats=True)["battles"][41]["ended"]
    assert tie == {**dict.fromkeys(END_BITS, False), "limit": True}


# --- property tests: random programs of every syntax form -------------------------


@_settings(100)
@given(ATTACKERS, ATTACKERS, st.integers(1, 1500))
def test_jousts_match_native_and_reference(
    lab: LabNode, left: str, right: str, max_cycles: int
) -> None:
    expected = refinterp.run_joust(_reference(left), _reference(right), max_cycles)
    native = engine.joust(
        engine.compile_program(left), engine.compile_program(right), max_cycles=max_cycles
    )
    result = lab_joust(lab, left, right, max_cycles=max_cycles)
    assert result["outcomes"] == list(native.outcomes) == expected


@_settings(50)
@given(
    st.one_of(LOCKERS, SPINNERS), st.one_of(LOCKERS, SPINNERS, ATTACKERS), st.integers(200, 3000)
)
def test_shortcut_programs_match_native_and_reference(
    lab: LabNode, left: str, right: str, max_cycles: int
) -> None:
    """Programs that lock into loops and spin: the engine's shortcuts, with
    statistics."""
    expected = refinterp.run_joust(_reference(left), _reference(right), max_cycles)
    native = engine.joust(
        engine.compile_program(left),
        engine.compile_program(right),
        max_cycles=max_cycles,
        stats=True,
    )
    result = lab_joust(lab, left, right, max_cycles=max_cycles, stats=True)
    assert result["outcomes"] == list(native.outcomes) == expected
    assert_stats_equal(result, native)


@_settings(20)
@given(LOCKERS, st.one_of(LOCKERS, ATTACKERS))
def test_full_cycle_limit_matches_native(lab: LabNode, left: str, right: str) -> None:
    native = engine.joust(engine.compile_program(left), engine.compile_program(right))
    assert lab_joust(lab, left, right)["text"] == str(native)


def native_error(source: bytes) -> tuple[str, int, int] | None:
    try:
        _engine.compile(source)
    except _engine.ParseError as error:
        return error.args
    return None


def assert_same_verdict(lab: LabNode, source: bytes) -> None:
    """check() and compile() as the native engine and hill.engine say it."""
    [answer] = lab.ask("check", sources=[encode(source)])
    native = native_error(source)
    if native is None:
        assert answer["check"] is None
        assert answer["instructions"] == engine.compile_program(source).native.instructions
        return
    with pytest.raises(ParseError) as caught:
        engine.compile_program(source)
    error = caught.value
    kind, _, other = native
    checked = answer["check"]
    assert (checked["kind"], checked["offset"], checked["other"]) == native
    assert (checked["line"], checked["column"]) == (error.line, error.column)
    other_place = engine.line_column(source, other) if other >= 0 else (0, 0)
    assert (checked["otherLine"], checked["otherColumn"]) == other_place
    assert checked["message"] == error.message
    thrown = answer["error"]
    assert thrown == {**checked, "message": str(error)}
    assert kind in _engine.PARSE_ERRORS


@_settings(400)
@given(ANY_TEXT)
def test_malformed_programs_are_refused_like_the_native_engine(lab: LabNode, text: str) -> None:
    assert_same_verdict(lab, text.encode())


def test_parse_errors_by_hand(lab: LabNode) -> None:
    sources = [
        "+(\n+",
        "+\n +)",
        "(a{b}c{d}e)%2",
        "(+{)%2",
        "(+[)*5]",
        "[(+]+)*2",
        "(" * 4097 + ")" * 4097,
        "[" * 4097 + "]" * 4097,
        "(" * 4096 + "+" + ")*2" * 4096,
        "é ü ]",  # columns count characters, not bytes
        "ü\n(a{é}\n{",
    ]
    for source in sources:
        assert_same_verdict(lab, source.encode())
    assert_same_verdict(lab, b"\xff\xfe ]")  # not UTF-8: each bad byte one character
    refused = lab_joust(lab, "+", "+(\n+")
    assert refused["error"]["kind"] == "unmatched_open_paren"
    assert refused["error"]["message"] == "line 1, column 2: unmatched '(': no ')' closes it"


# --- traces: cycle for cycle as `bfjoust trace` -------------------------------


def assert_trace_equal(lab_trace: dict[str, Any], native: engine.Trace) -> None:
    expected = native.to_json()
    for key, value in expected.items():
        if key in ("left_source", "right_source", "left_pointer", "right_pointer", "tapes"):
            assert lab_trace[key].tolist() == value, key
        else:
            assert lab_trace[key] == value, key


TIE = ("(>)*9(+-)*-1", "(>)*9(-+)*-1")  # a steady dance: 100000 cycles, a tie
BATTLES = [
    (*TIE, 10, "sieve"),
    ("<", "", 10, "sieve"),  # falls off its own end
    ("", "<", 13, "kettle"),
    ("<", "<", 30, "sieve"),  # both at once
    ("(>)*30", "[]", 10, "kettle"),  # runs off the far end
    ("(-)*128", "(.)*128<", 21, "sieve"),  # a fall while a flag dies
    ("(>)*9([-]>)*21", ">(+)*20<(.)*50", 12, "kettle"),
]


def test_traces_equal_the_native_engines(lab: LabNode) -> None:
    for left, right, tape, polarity in BATTLES:
        native = native_trace(left, right, tape, polarity, engine.MAX_CYCLES)
        assert_trace_equal(lab.trace(left, right, tape, polarity), native)
    tie = lab.trace(*TIE, 10, "sieve")
    assert (tie["cycles"], tie["outcome"], tie["winner"]) == (engine.MAX_CYCLES, 0, "tie")
    assert tie["reason"] == "no decision in 100000 cycles"


def test_traces_of_reference_programs(lab: LabNode, reference_names: list[str]) -> None:
    rng = random.Random(11)
    for _ in range(6):
        left, right = (warrior_path(name).read_bytes() for name in rng.sample(reference_names, 2))
        tape, polarity = rng.choice(engine.TAPE_LENGTHS), rng.choice(engine.POLARITIES)
        native = native_trace(left, right, tape, polarity, engine.MAX_CYCLES)
        assert_trace_equal(lab.trace(left, right, tape, polarity), native)


def test_traces_equal_bfjoust_trace(lab: LabNode, tmp_path: Path) -> None:
    """The command's own output (--json), in a process of its own."""
    for k, (left, right, tape, polarity) in enumerate(BATTLES[1:]):
        files = [tmp_path / f"{k}-left.bf", tmp_path / f"{k}-right.bf"]
        for path, source in zip(files, (left, right), strict=True):
            path.write_text(source)
        command = [sys.executable, "-m", "hill", "trace", *map(str, files)]
        options = ["--tape", str(tape), "--polarity", polarity, "--json"]
        printed = subprocess.run(
            command + options, capture_output=True, text=True, check=True, timeout=120
        )
        expected = json.loads(printed.stdout)
        got = lab.trace(left, right, tape, polarity)
        for key, value in expected.items():
            arrays = not isinstance(got[key], int | str)
            assert (got[key].tolist() if arrays else got[key]) == value, key


@_settings(60)
@given(
    ATTACKERS,
    ATTACKERS,
    st.sampled_from(engine.TAPE_LENGTHS),
    st.sampled_from(engine.POLARITIES),
    st.integers(1, 600),
)
def test_random_traces_equal_the_native_engines(
    lab: LabNode, left: str, right: str, tape: int, polarity: engine.Polarity, max_cycles: int
) -> None:
    native = native_trace(left, right, tape, polarity, max_cycles)
    assert_trace_equal(lab.trace(left, right, tape, polarity, max_cycles), native)


# --- the debugger's repeat counters ------------------------------------------------


def expected_counters(
    left: str, right: str, tape: int, polarity: str, max_cycles: int
) -> list[list[list[int]]]:
    """The counters of every cycle of both sides, from the written-out programs
    (refinterp.repeat_counters) and the instructions the reference
    interpreter runs (the cycle after the last has no instruction to ask about)."""
    programs = (_reference(left), _reference(right))
    counters = [refinterp.repeat_counters(left), refinterp.repeat_counters(right)]
    _, executed = refinterp.battle_instructions(*programs, tape, polarity == "kettle", max_cycles)
    return [
        [list(counter) for counter in counters[side][ips[side]]]
        for ips in executed
        for side in (0, 1)
    ]


def lab_counters(
    lab: LabNode, left: str, right: str, tape: int, polarity: engine.Polarity, cycles: int
) -> Any:
    debug = lab.trace(left, right, tape, polarity, cycles, op="debug", at="all")
    assert_trace_equal(
        debug, native_trace(left, right, tape, polarity, cycles)
    )  # the debugger's trace is the trace
    return debug["counters"][: 2 * debug["cycles"]]


def test_counters_worked_by_hand(lab: LabNode) -> None:
    # (>(+)*5)*3: the `(` at 0 counts the copies left, 3 down to 1; the inner
    # `(` at 2 counts the +'s left of its copy
    counters = lab_counters(lab, "(>(+)*5)*3(-)*100", "[]", 12, "sieve", 40)[::2]
    assert counters[0] == [[0, 3]]  # before the first `>`
    assert counters[1] == [[0, 3], [2, 5]]  # before the first `+`
    assert counters[5] == [[0, 3], [2, 1]]  # before the last `+` of the copy
    assert counters[6] == [[0, 2]]  # the second copy's `>`
    assert counters[18] == [[10, 100]]  # the first `-`
    assert counters[30] == [[10, 88]]
    # (A{B}C)%N: A counts down at its `(`, C up at its `}`, B has none
    counters = lab_counters(lab, ">(+{.}-)%2", "[]", 10, "sieve", 10)[::2]
    assert counters[:8] == [[], [[1, 2]], [[1, 1]], [], [[5, 1]], [[5, 2]], [], []]


@_settings(60)
@given(
    st.one_of(ATTACKERS, LOCKERS, SPINNERS),
    st.one_of(ATTACKERS, LOCKERS, SPINNERS),
    st.sampled_from(engine.TAPE_LENGTHS),
    st.sampled_from(engine.POLARITIES),
    st.integers(1, 400),
)
def test_counters_equal_the_written_out_programs(
    lab: LabNode, left: str, right: str, tape: int, polarity: engine.Polarity, max_cycles: int
) -> None:
    expected = expected_counters(left, right, tape, polarity, max_cycles)
    assert lab_counters(lab, left, right, tape, polarity, max_cycles) == expected


def test_counters_far_into_a_long_battle(lab: LabNode) -> None:
    """Replays from the snapshots: cycles on and around their boundaries,
    late in a 100000-cycle battle."""
    left, right = "(>)*9((+)*25(-)*25)*2100", "(+-)*-1"
    cycles = [0, 1, 1023, 1024, 1025, 2047, 2048, 50_000, 99_998, 99_999]
    at = [[cycle, side] for cycle in cycles for side in (0, 1)]
    debug = lab.trace(left, right, 10, "sieve", op="debug", at=at)
    assert debug["cycles"] == engine.MAX_CYCLES
    counters = [refinterp.repeat_counters(left), refinterp.repeat_counters(right)]
    _, executed = refinterp.battle_instructions(
        _reference(left), _reference(right), 10, False, engine.MAX_CYCLES
    )
    for (cycle, side), got in zip(at, debug["counters"], strict=True):
        assert got == [list(c) for c in counters[side][executed[cycle][side]]], (cycle, side)
