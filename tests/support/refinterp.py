"""A reference BF Joust interpreter, written straight from docs/rules.md.

Deliberately naive and unlike the native engine: the program is expanded
into the fully written-out instruction list (the rules' own definition of the
abbreviations), brackets are matched in that list, and battles run cycle by
cycle with no shortcut.  Only for small test programs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from hill import engine

MAX_COUNT = 100_000
INSTRUCTIONS = "+-<>.[]"
COMMAND_CHARS = set("+-<>.,[](){}*%0123456789")
EXPANSION_LIMIT = 300_000


class RefParseError(ValueError):
    pass


class TooLarge(ValueError):
    """The written-out program would be too long for this interpreter."""


# --- tokens -------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    kind: str  # an instruction char, "(", ")", "{", "}"
    count: int = 0  # for ")"
    at: int = 0  # where it is in the text (a character index)


def _skip_comments(text: str, i: int) -> int:
    while i < len(text) and text[i] not in COMMAND_CHARS:
        i += 1
    return i


def _read_count(text: str, i: int) -> tuple[int, int]:
    """The count after a `)` at text[i:]; returns (count, next index)."""
    j = _skip_comments(text, i)
    if j >= len(text) or text[j] not in "*%":
        return 0, i  # no count: 0, and what follows is read normally
    j = _skip_comments(text, j + 1)
    negative = j < len(text) and text[j] == "-"
    if negative:
        j += 1
    digits = ""
    while j < len(text) and text[j].isdigit() and text[j] in "0123456789":
        digits += text[j]
        j += 1
        if int(digits) > MAX_COUNT:
            break  # capped; the remaining digits are comments
    value = min(int(digits or "0"), MAX_COUNT)
    if negative and value > 0:
        value = MAX_COUNT
    return value, j


def tokenize(text: str) -> list[Token]:
    tokens, i = [], 0
    while i < len(text):
        c = text[i]
        i += 1
        if c in INSTRUCTIONS or c in "({}":
            tokens.append(Token(c, at=i - 1))
        elif c == ")":
            count, i = _read_count(text, i)
            tokens.append(Token(")", count))
    return tokens


# --- structure ----------------------------------------------------------------


@dataclass
class Repeat:
    a: list[object]
    b: list[object] | None  # None: a plain (P)*N, P = a
    c: list[object]
    count: int
    at: int = 0  # where its `(` is, and its `}` (-1: none), as character indices
    brace_at: int = -1


def _parse_sequence(tokens: list[Token], i: int, depth: int) -> tuple[list[object], int]:
    items: list[object] = []
    while i < len(tokens):
        t = tokens[i]
        if t.kind in ")}{":
            return items, i
        if t.kind == "(":
            if depth >= 4096:
                raise RefParseError("( nested too deep")
            repeat, i = _parse_repeat(tokens, i + 1, depth + 1)
            repeat.at = t.at
            items.append(repeat)
            continue
        items.append((t.kind, t.at))  # an instruction and where it is
        i += 1
    return items, i


def _parse_repeat(tokens: list[Token], i: int, depth: int) -> tuple[Repeat, int]:
    a, i = _parse_sequence(tokens, i, depth)
    if i >= len(tokens):
        raise RefParseError("unmatched (")
    if tokens[i].kind == "}":
        raise RefParseError("} without {")
    if tokens[i].kind == ")":
        return Repeat(a, None, [], tokens[i].count), i + 1
    b, i = _parse_sequence(tokens, i + 1, depth)  # after "{"
    if i >= len(tokens) or tokens[i].kind != "}":
        kind = tokens[i].kind if i < len(tokens) else "end"
        raise RefParseError("{ without }" if kind in (")", "end") else "second { (or crossing)")
    brace_at = tokens[i].at
    c, i = _parse_sequence(tokens, i + 1, depth)
    if i >= len(tokens):
        raise RefParseError("unmatched (")
    if tokens[i].kind != ")":
        raise RefParseError("second { on one level" if tokens[i].kind == "{" else "stray }")
    return Repeat(a, b, c, tokens[i].count, brace_at=brace_at), i + 1


def _check_loop_balance(tokens: list[Token]) -> None:
    """[ and ] pair up in the text, and the repeat markers between them balance."""
    stack: list[int] = []  # marker balance at each open [
    balance = 0
    for t in tokens:
        if t.kind == "[":
            stack.append(balance)
            if len(stack) > 4096:
                raise RefParseError("[ nested too deep")
        elif t.kind == "]":
            if not stack:
                raise RefParseError("unmatched ]")
            if balance != stack.pop():
                raise RefParseError("[ ] crosses into a level")
        elif t.kind in "({":
            balance += 1
        elif t.kind in ")}":
            balance -= 1
            if stack and balance < stack[-1]:
                raise RefParseError("[ ] crosses out of a level")
    if stack:
        raise RefParseError("unmatched [")


def _expand(items: list[object], out: list[tuple[str, int]]) -> None:
    for item in items:
        if isinstance(item, tuple):
            out.append(item)
        else:
            assert isinstance(item, Repeat)
            for _ in range(item.count):
                _expand(item.a, out)
                _guard(out)
            if item.b is not None:
                _expand(item.b, out)
                for _ in range(item.count):
                    _expand(item.c, out)
                    _guard(out)


def _guard(out: list[tuple[str, int]]) -> None:
    if len(out) > EXPANSION_LIMIT:
        raise TooLarge("expansion too long for the reference interpreter")


def repeat_counters(text: str) -> list[tuple[tuple[int, int], ...]]:
    """The repeat counters live at each instruction of the written-out program
    (and, last, past its end: none), outermost first, each as (byte offset of
    the repeat's mark, value), as the Lab's debugger shows them: in `(P)*N`
    and in the A of `(A{B}C)%N` the `(` with the copies left (N down to 1),
    in its C the `}` with the copy's number (1 up to N), in its B none."""
    tokens = tokenize(text)
    items, _ = _parse_sequence(tokens, 0, 0)
    byte_at = list(itertools.accumulate((len(c.encode()) for c in text), initial=0))
    out: list[tuple[tuple[int, int], ...]] = []

    def walk(items: list[object], live: tuple[tuple[int, int], ...]) -> None:
        for item in items:
            if isinstance(item, tuple):
                out.append(live)
                continue
            assert isinstance(item, Repeat)
            for copy in range(item.count):
                walk(item.a, (*live, (byte_at[item.at], item.count - copy)))
                if len(out) > EXPANSION_LIMIT:
                    raise TooLarge("expansion too long for the reference interpreter")
            if item.b is not None:
                walk(item.b, live)
                for copy in range(item.count):
                    walk(item.c, (*live, (byte_at[item.brace_at], copy + 1)))

    walk(items, ())
    out.append(())
    return out


@dataclass(frozen=True)
class RefProgram:
    ops: str
    jump: tuple[int, ...]  # for [ and ]: index of the partner
    sources: tuple[int, ...]  # the source byte offset of each op


def parse(text: str) -> RefProgram:
    tokens = tokenize(text)
    items, i = _parse_sequence(tokens, 0, 0)
    if i < len(tokens):
        raise RefParseError(f"unexpected {tokens[i].kind}")
    _check_loop_balance(tokens)
    out: list[tuple[str, int]] = []
    _expand(items, out)
    ops = "".join(op for op, _ in out)
    byte_at = list(itertools.accumulate((len(c.encode()) for c in text), initial=0))
    sources = tuple(byte_at[at] for _, at in out)
    jump = [0] * len(ops)
    stack = []
    for k, op in enumerate(ops):
        if op == "[":
            stack.append(k)
        elif op == "]":
            j = stack.pop()
            jump[j], jump[k] = k, j
    assert not stack
    return RefProgram(ops, tuple(jump), sources)


# --- battles ------------------------------------------------------------------


def run_battle(
    left: RefProgram, right: RefProgram, length: int, kettle: bool, max_cycles: int = 100_000
) -> int:
    """+1 left wins, 0 tie, -1 right wins."""
    return _battle(left, right, length, kettle, max_cycles, None, None)


@dataclass
class Stats:
    """A battle's statistics, counted straight from the words of docs/analytics.md."""

    length: int
    cycles: int = 0
    tape_end: list[int] | None = None
    heat: list[list[int]] | None = None
    decoy: list[list[int]] | None = None

    def __post_init__(self) -> None:
        self.heat = [[0] * self.length, [0] * self.length]
        self.decoy = [[0] * self.length, [0] * self.length]


def battle_stats(
    left: RefProgram, right: RefProgram, length: int, kettle: bool, max_cycles: int = 100_000
) -> tuple[int, Stats]:
    """The outcome and the statistics of one battle."""
    stats = Stats(length)
    return _battle(left, right, length, kettle, max_cycles, None, None, stats), stats


def trace_battle(
    left: RefProgram, right: RefProgram, length: int, kettle: bool, max_cycles: int = 100_000
) -> tuple[int, list[tuple[int, int, bytes]]]:
    """The outcome and, after each cycle: left pointer, right pointer, tape."""
    states: list[tuple[int, int, bytes]] = []
    return _battle(left, right, length, kettle, max_cycles, states, None), states


def _battle(
    left: RefProgram,
    right: RefProgram,
    length: int,
    kettle: bool,
    max_cycles: int,
    states: list[tuple[int, int, bytes]] | None,
    executed: list[tuple[int, int]] | None,  # each cycle's instruction indices
    stats: Stats | None = None,
) -> int:
    programs = (left, right)
    tape = [0] * length
    tape[0] = tape[-1] = 128
    pointer = [0, length - 1]
    forward = (1, -1)  # the right program's > goes to lower cells
    ip = [0, 0]
    zero_flags = [0, 0]
    outcome = 0
    for _cycle in range(max_cycles):
        start = list(tape)  # [ and ] test the tape as it was at the start
        fell = [False, False]
        if executed is not None:  # which instruction each side runs this cycle
            executed.append((ip[0], ip[1]))
        for side in (0, 1):
            program, k = programs[side], ip[side]
            if k >= len(program.ops):
                continue  # ran past its end: does nothing
            op = program.ops[k]
            ip[side] = k + 1
            if op in "+-":
                delta = 1 if op == "+" else -1
                if side == 1 and kettle:
                    delta = -delta
                tape[pointer[side]] = (tape[pointer[side]] + delta) % 256
            elif op in "<>":
                if stats is not None:  # a decoy: the cell's size as the pointer leaves it
                    value = tape[pointer[side]]
                    size = value if value < 128 else 256 - value
                    stats.decoy[side][pointer[side]] = max(stats.decoy[side][pointer[side]], size)
                pointer[side] += forward[side] * (1 if op == ">" else -1)
                fell[side] = not 0 <= pointer[side] < length
            elif op in "[]" and (start[pointer[side]] == 0) == (op == "["):
                # `[` jumps on a zero cell, `]` on a non-zero one
                ip[side] = program.jump[k] + 1
        if states is not None:
            states.append((pointer[0], pointer[1], bytes(tape)))
        for side, flag in ((0, 0), (1, length - 1)):
            zero_flags[side] = zero_flags[side] + 1 if tape[flag] == 0 else 0
        lost = [fell[s] or zero_flags[s] >= 2 for s in (0, 1)]
        if stats is not None:
            # the right program falling off ends the battle before its cycle counts
            stats.cycles += 0 if fell[1] else 1
            if not (lost[0] or lost[1]):  # heat: only cycles after which the battle went on
                stats.heat[0][pointer[0]] += 1
                stats.heat[1][pointer[1]] += 1
        if lost[0] or lost[1]:
            outcome = 0 if lost[0] and lost[1] else (-1 if lost[0] else 1)
            break
    if stats is not None:
        stats.tape_end = [v - 256 if v >= 128 else v for v in tape]
    return outcome


def battle_instructions(
    left: RefProgram, right: RefProgram, length: int, kettle: bool, max_cycles: int = 100_000
) -> tuple[int, list[tuple[int, int]]]:
    """The outcome and, for each cycle, the index (in the written-out program)
    of the instruction each side runs in it (past the end: len(ops))."""
    executed: list[tuple[int, int]] = []
    return _battle(left, right, length, kettle, max_cycles, None, executed), executed


def _source_at(program: RefProgram, k: int) -> int:
    """The source offset of op k (-1: past the end)."""
    return program.sources[k] if k < len(program.ops) else -1


def run_joust(left: RefProgram, right: RefProgram, max_cycles: int = 100_000) -> list[int]:
    """42 outcomes: sieve tape 10..30, then kettle 10..30."""
    return [
        run_battle(left, right, length, kettle, max_cycles)
        for kettle in (False, True)
        for length in range(10, 31)
    ]


class ReferenceEngine:
    """This interpreter behind hill.engine's API (compile_program, joust,
    trace, ParseError), so that the engine's tests run against both, as
    markupsafe's tests run against its native and its speedups modules."""

    ParseError = RefParseError

    @staticmethod
    def compile_program(source: str | bytes) -> RefProgram:
        return parse(source.decode() if isinstance(source, bytes) else source)

    @staticmethod
    def joust(
        left: RefProgram, right: RefProgram, *, max_cycles: int = engine.MAX_CYCLES
    ) -> engine.JoustResult:
        return engine.JoustResult(tuple(run_joust(left, right, max_cycles)))

    @staticmethod
    def trace(
        left: RefProgram,
        right: RefProgram,
        tape_length: int,
        polarity: engine.Polarity = "sieve",
        *,
        max_cycles: int = engine.MAX_CYCLES,
    ) -> engine.Trace:
        if tape_length not in engine.TAPE_LENGTHS or polarity not in engine.POLARITIES:
            raise ValueError(f"no battle on tape {tape_length} with polarity {polarity!r}")
        states: list[tuple[int, int, bytes]] = []
        executed: list[tuple[int, int]] = []
        kettle = polarity == "kettle"
        outcome = _battle(left, right, tape_length, kettle, max_cycles, states, executed)
        first = (0, tape_length - 1, bytes([128] + [0] * (tape_length - 2) + [128]))
        left_pointers, right_pointers, tapes = zip(first, *states, strict=True)
        sources = np.array(
            [(_source_at(left, a), _source_at(right, b)) for a, b in executed], dtype=np.int32
        ).reshape(len(executed), 2)
        return engine.Trace(
            tape_length=tape_length,
            polarity=polarity,
            outcome=outcome,
            cycles=len(states),
            max_cycles=max_cycles,
            left_source=sources[:, 0],
            right_source=sources[:, 1],
            left_pointer=np.array(left_pointers, dtype=np.int16),
            right_pointer=np.array(right_pointers, dtype=np.int16),
            tapes=np.frombuffer(b"".join(tapes), dtype=np.uint8).reshape(-1, tape_length),
        )
