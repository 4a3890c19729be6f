"""The BF Joust engine: compile programs once, joust them many times.

A thin typed layer over the native module `hill.engine._engine` (_engine.c,
typed by _engine.pyi), which does the hot work (parse, compile, joust,
trace, battle statistics) with the GIL released.  Beside it: `arena`,
jousts played once per pair of program contents on every core (or any
executor), and `varied`, varied programs for the benchmarks and the tests.

May import: numpy, hill.errors, hill.threads; nothing else of the hill.

    >>> left = compile_program("(>)*9([-]>)*21")
    >>> right = compile_program("[]")
    >>> print(joust(left, right))    # doctest: +SKIP
    <<<<<<<<<<<<<<<<<<<<< <<<<<<<<<<<<<<<<<<<<< 42
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, NamedTuple, TypeVar

import numpy as np

from hill.engine import _engine
from hill.errors import ParseError

# the rules' numbers, as the native engine plays them
MIN_TAPE: int = _engine.MIN_TAPE
MAX_TAPE: int = _engine.MAX_TAPE
BATTLES: int = _engine.BATTLES  # one joust: every tape length, both polarities
MAX_CYCLES: int = _engine.MAX_CYCLES
MAX_NEST: int = _engine.MAX_NEST
MAX_SOURCE: int = _engine.MAX_SOURCE  # the longest source, in bytes, the engine's offsets allow
TAPE_LENGTHS = range(MIN_TAPE, MAX_TAPE + 1)
Polarity = Literal["sieve", "kettle"]
POLARITIES: tuple[Polarity, ...] = ("sieve", "kettle")


def battle_index(tape_length: int, polarity: str) -> int:
    """Where a battle stands among a joust's 42: sieve 10..30, then kettle 10..30."""
    return POLARITIES.index(polarity) * len(TAPE_LENGTHS) + TAPE_LENGTHS.index(tape_length)


def battle_config(index: int) -> tuple[int, Polarity]:
    """The tape length and polarity of battle `index` (the inverse of battle_index)."""
    polarity, tape = divmod(index, len(TAPE_LENGTHS))
    return TAPE_LENGTHS[tape], POLARITIES[polarity]


# the message of each parse error the native engine names (_engine.PARSE_ERRORS)
ERROR_MESSAGES = {
    "unmatched_open_paren": "unmatched '(': no ')' closes it",
    "unmatched_close_paren": "unmatched ')': no '(' opens it",
    "brace_without_paren": "'{' outside any '(...)' that could own it",
    "second_brace": "second '{' in one '(...)' (the first is at {other})",
    "unmatched_close_brace": "unmatched '}': no '{' opens it",
    "unclosed_brace": "'{' has no '}' before the ')' at {other} closes its level",
    "unmatched_open_bracket": "unmatched '[': no ']' closes it",
    "unmatched_close_bracket": "unmatched ']': no '[' opens it",
    "bracket_crosses_out": "this closes a '(' or '{' level that the '[' at {other} is inside of; "
    "a loop cannot cross out of a repeat level",
    "bracket_crosses_in": "this ']' closes the loop inside the '(' or '{' level opened at "
    "{other}; a loop cannot cross into a repeat level",
    "paren_too_deep": f"'(' nested deeper than {MAX_NEST} levels",
    "bracket_too_deep": f"'[' nested deeper than {MAX_NEST} levels",
    "source_too_large": f"the program is longer than {MAX_SOURCE:,} bytes, "
    "the most the engine's offsets can hold",
}


def _as_bytes(source: str | bytes) -> bytes:
    return source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source


def line_column(source: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of a byte offset."""
    line = source.count(b"\n", 0, offset) + 1
    start = source.rfind(b"\n", 0, offset) + 1
    column = len(source[start:offset].decode("utf-8", "replace")) + 1
    return line, column


def _parse_error(source: bytes, name: str, offset: int, other: int) -> ParseError:
    line, column = line_column(source, offset)
    where = "line {}, column {}".format(*line_column(source, other)) if other >= 0 else ""
    return ParseError(ERROR_MESSAGES[name].replace("{other}", where), line, column, offset)


@dataclass(frozen=True, eq=False)
class Program:
    """A compiled program: compile once, joust many times (thread-safe)."""

    source: bytes
    native: _engine.Program


def compile_program(source: str | bytes) -> Program:
    """Compile program text; raise ParseError if it is malformed."""
    data = _as_bytes(source)
    try:
        native = _engine.compile(data)
    except _engine.ParseError as error:
        name, offset, other = error.args
        raise _parse_error(data, name, offset, other) from None
    return Program(data, native)


@dataclass(frozen=True)
class BattleStats:
    """One battle's statistics, as docs/analytics.md defines them (the established
    hill's own: its cranklance build prints them as CYCLES, TAPEABS,
    TAPEMAX and TAPEHEAT).  Cells are numbered as the left program sees the
    tape: 0 is its flag, tape - 1 the right program's.

    - `cycles`: the cycles played (a tie at the limit: the limit; a program
      falling off on the right ends the battle before its cycle counts);
    - `tape_end`: the cells at the end, signed (-128..127);
    - `heat[p][c]`: the cycles at whose end program p's pointer stood on
      cell c and the battle went on (p = 0 the left program, 1 the right);
    - `decoy[p][c]`: the largest absolute value (0..128) cell c held when
      program p's pointer moved away from it, 0 if it never did.
    """

    tape: int
    polarity: Polarity
    outcome: int
    cycles: int
    tape_end: tuple[int, ...]
    heat: tuple[tuple[int, ...], tuple[int, ...]]
    decoy: tuple[tuple[int, ...], tuple[int, ...]]

    def to_json(self) -> dict[str, object]:
        """The spec's JSON object (its field names, in its order)."""
        return {
            "tape": self.tape,
            "polarity": self.polarity,
            "outcome": self.outcome,
            "cycles": self.cycles,
            "tape_end": list(self.tape_end),
            "heat": [list(h) for h in self.heat],
            "decoy": [list(d) for d in self.decoy],
        }


# the native engine's record of one battle's statistics (BattleStats in _engine.c):
# JoustResult.records holds the 42 of a joust as they came, for storing them
STATS_RECORD = np.dtype(
    [
        ("cycles", "<i4"),
        ("heat", "<i4", (2, MAX_TAPE)),
        ("tape", "i1", (MAX_TAPE,)),
        ("decoy", "u1", (2, MAX_TAPE)),
        ("ended", "<i2"),  # how it ended: bits of END_BITS
    ]
)
assert STATS_RECORD.itemsize == _engine.STATS_SIZE

# the bits of a record's `ended` (BFJ_END_* in core/bfjoust.h)
END_BITS = {
    "left_flag": 1,  # the left program's flag was zero two cycles running
    "right_flag": 2,
    "left_fell": 4,  # the left program ran off the tape
    "right_fell": 8,
    "limit": 16,  # the cycle limit, or a tie proven early by a repeated state
}


def battle_stats(records: np.ndarray, outcomes: Sequence[int]) -> tuple[BattleStats, ...]:
    """The 42 battles' statistics from a joust's records (STATS_RECORD)."""
    battles = []
    for index, record in enumerate(records):
        length, polarity = battle_config(index)
        heat = record["heat"][:, :length].tolist()
        decoy = record["decoy"][:, :length].tolist()
        battles.append(
            BattleStats(
                tape=length,
                polarity=polarity,
                outcome=outcomes[index],
                cycles=int(record["cycles"]),
                tape_end=tuple(record["tape"][:length].tolist()),
                heat=(tuple(heat[0]), tuple(heat[1])),
                decoy=(tuple(decoy[0]), tuple(decoy[1])),
            )
        )
    return tuple(battles)


@dataclass(frozen=True)
class JoustResult:
    """The 42 outcomes of a joust, from the left program's side.

    outcomes[i] is +1 (left wins), 0 (tie) or -1 (right wins); sieve tape
    lengths 10..30 first, then kettle 10..30.  When the joust was asked for
    statistics, `records` holds the 42 battles' (STATS_RECORD, in the same
    order) and `battles` reads them.
    """

    outcomes: tuple[int, ...]
    # statistics: battle-cycles simulated (shared ones counted once, ties found
    # early cut short), and the cycles the 42 games lasted
    cycles: int = field(default=0, compare=False)
    game_cycles: int = field(default=0, compare=False)
    records: np.ndarray | None = field(default=None, compare=False, repr=False)

    @cached_property
    def battles(self) -> tuple[BattleStats, ...] | None:
        return None if self.records is None else battle_stats(self.records, self.outcomes)

    @property
    def score(self) -> int:
        return sum(self.outcomes)

    @property
    def sieve(self) -> tuple[int, ...]:
        return self.outcomes[: len(TAPE_LENGTHS)]

    @property
    def kettle(self) -> tuple[int, ...]:
        return self.outcomes[len(TAPE_LENGTHS) :]

    def __str__(self) -> str:
        return classic_line(self.outcomes)


def code_hash(code: bytes) -> str:
    """What a program is known by: the sha256 of its code, in hex (jousts
    are kept by it: hill.engine.arena)."""
    return hashlib.sha256(code).hexdigest()


Pair = tuple[str, str]  # (left hash, right hash), the left one the lower


class Played(NamedTuple):
    """A joust just played: its kept pair, and its result from the left's side."""

    pair: Pair
    result: JoustResult


_SYMBOLS = {1: "<", 0: "X", -1: ">"}


def classic_line(outcomes: Sequence[int]) -> str:
    """The classic text form: `<<>X... <<>X... 10` (sieve, kettle, sum)."""
    half = len(TAPE_LENGTHS)
    sieve = "".join(_SYMBOLS[o] for o in outcomes[:half])
    kettle = "".join(_SYMBOLS[o] for o in outcomes[half:])
    return f"{sieve} {kettle} {sum(outcomes)}"


def parse_classic_line(line: str) -> tuple[int, ...]:
    """Inverse of classic_line (the sum is checked)."""
    sieve, kettle, total = line.split()
    values = {"<": 1, "X": 0, ">": -1}
    outcomes = tuple(values[c] for c in sieve + kettle)
    if len(outcomes) != BATTLES or sum(outcomes) != int(total):
        raise ValueError(f"not a classic joust line: {line!r}")
    return outcomes


def joust(
    left: Program, right: Program, *, max_cycles: int = MAX_CYCLES, stats: bool = False
) -> JoustResult:
    """Play the 42 battles of left against right; with `stats`, count each
    battle's statistics too (`JoustResult.battles`): the same battles, a
    little slower."""
    if not stats:
        raw, cycles, game_cycles = _engine.joust(left.native, right.native, max_cycles)
        return JoustResult(tuple(np.frombuffer(raw, dtype=np.int8).tolist()), cycles, game_cycles)
    raw, cycles, game_cycles, records = _engine.joust(left.native, right.native, max_cycles, True)
    outcomes = tuple(np.frombuffer(raw, dtype=np.int8).tolist())
    return JoustResult(outcomes, cycles, game_cycles, np.frombuffer(records, dtype=STATS_RECORD))


def stats_json_lines(result: JoustResult) -> Iterator[str]:
    """The tool contract of `bfjoust joust LEFT RIGHT --stats`: one JSON
    object per battle, sieve 10..30 then kettle 10..30 (docs/analytics.md)."""
    if result.battles is None:
        raise ValueError("this joust was played without statistics (joust(..., stats=True))")
    for battle in result.battles:
        yield json.dumps(battle.to_json(), separators=(", ", ": "))


Item = TypeVar("Item")


def batches(items: Sequence[Item], count: int, largest: int) -> list[Sequence[Item]]:
    """`items` cut in order into about `count` batches of at most `largest`."""
    size = max(1, min(largest, -(-len(items) // max(count, 1))))
    return [items[i : i + size] for i in range(0, len(items), size)]


@dataclass(frozen=True)
class Trace:
    """Every cycle of one battle, for viewers.

    State k (0..cycles) is the state after k cycles; `tapes[k]` holds the cell
    values, `left_pointer[k]`/`right_pointer[k]` the absolute cell indices.
    `left_source[k]`/`right_source[k]` (k < cycles) give the source byte
    offset of the instruction each program executes in cycle k+1, or -1 once
    it has run past its end.
    """

    tape_length: int
    polarity: Polarity
    outcome: int
    cycles: int
    max_cycles: int
    left_source: np.ndarray
    right_source: np.ndarray
    left_pointer: np.ndarray
    right_pointer: np.ndarray
    tapes: np.ndarray

    @property
    def winner(self) -> str:
        return {1: "left", 0: "tie", -1: "right"}[self.outcome]

    @property
    def reason(self) -> str:
        """How the battle ended, in words."""
        final = self.tapes[-1]
        pointers = (("left", self.left_pointer[-1]), ("right", self.right_pointer[-1]))
        fell = [side for side, pointer in pointers if not 0 <= pointer < self.tape_length]
        if fell:
            return " and ".join(fell) + " ran off the tape"
        if self.outcome == 0 and self.cycles >= self.max_cycles:
            return f"no decision in {self.max_cycles} cycles"
        dead = [side for side, cell in (("left", final[0]), ("right", final[-1])) if cell == 0]
        flags = " and ".join(f"{side}'s flag" for side in dead)
        return f"{flags} stayed at zero for two cycles"

    def summary(self) -> str:
        result = "tie" if self.outcome == 0 else f"{self.winner} wins"
        return f"{result} after {self.cycles} cycles: {self.reason}"

    def to_json(self) -> dict[str, object]:
        """Plain data (lists), one entry per cycle or state, for viewers."""
        return {
            "tape_length": self.tape_length,
            "polarity": self.polarity,
            "outcome": self.outcome,
            "winner": self.winner,
            "reason": self.reason,
            "cycles": self.cycles,
            "left_source": self.left_source.tolist(),
            "right_source": self.right_source.tolist(),
            "left_pointer": self.left_pointer.tolist(),
            "right_pointer": self.right_pointer.tolist(),
            "tapes": self.tapes.tolist(),
        }


def trace(
    left: Program,
    right: Program,
    tape_length: int,
    polarity: Polarity = "sieve",
    *,
    max_cycles: int = MAX_CYCLES,
) -> Trace:
    """Run one battle and record every cycle."""
    if polarity not in POLARITIES:
        raise ValueError(f"polarity must be one of {POLARITIES}, not {polarity!r}")
    outcome, cycles, ip_a, ip_b, ptr_a, ptr_b, tapes = _engine.trace(
        left.native, right.native, tape_length, polarity == "kettle", max_cycles
    )
    return Trace(
        tape_length=tape_length,
        polarity=polarity,
        outcome=outcome,
        cycles=cycles,
        max_cycles=max_cycles,
        left_source=np.frombuffer(ip_a, dtype=np.int32),
        right_source=np.frombuffer(ip_b, dtype=np.int32),
        left_pointer=np.frombuffer(ptr_a, dtype=np.int8).astype(np.int16),
        right_pointer=np.frombuffer(ptr_b, dtype=np.int8).astype(np.int16),
        tapes=np.frombuffer(tapes, dtype=np.uint8).reshape(cycles + 1, tape_length),
    )
