"""Types of the native engine `hill/engine/_engine.c` (hill/engine is its typed API)."""

from typing import Literal, final, overload

MIN_TAPE: int  # the shortest tape, 10
MAX_TAPE: int  # the longest tape, 30
BATTLES: int  # battles of one joust: every tape length, both polarities (42)
STATS_SIZE: int  # bytes of one battle's statistics record (hill/engine reads it)
MAX_CYCLES: int  # the cycle limit of a battle, 100000
MAX_NEST: int  # the deepest nesting of '(' or '[', 4096
MAX_SOURCE: int  # the longest source in bytes (int32 offsets)
PARSE_ERRORS: tuple[str, ...]  # the name of every parse error ParseError can carry

class ParseError(ValueError):
    """args: (name, offset, other_offset); name is one of PARSE_ERRORS, the
    offsets are byte offsets in the source (other_offset -1: none)."""

    args: tuple[str, int, int]

@final
class Program:
    """A compiled program (immutable; safe to share between threads)."""

    @property
    def instructions(self) -> int:
        """The compiled instruction count."""

def compile(source: bytes, /) -> Program:
    """Compile program text; raises ParseError."""

@overload
def joust(
    left: Program, right: Program, max_cycles: int = ..., stats: Literal[False] = ..., /
) -> tuple[bytes, int, int]: ...
@overload
def joust(
    left: Program, right: Program, max_cycles: int, stats: Literal[True], /
) -> tuple[bytes, int, int, bytes]:
    """The 42 outcomes as int8 bytes (+1 left wins, 0 tie, -1 right wins; sieve
    10..30, then kettle 10..30), the cycles simulated and the cycles the 42
    games lasted; with stats, the 42 battles' statistics records too
    (STATS_SIZE bytes each, in the same order)."""

def trace(
    left: Program,
    right: Program,
    tape_length: int,
    kettle: bool,
    max_cycles: int = ...,
    /,
) -> tuple[int, int, bytes, bytes, bytes, bytes, bytes]:
    """(outcome, cycles, left source offsets int32, right sources int32, left
    pointers int8, right pointers int8, tapes uint8 (cycles + 1) x tape_length)."""
