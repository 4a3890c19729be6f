"""What the hill takes as a program: at most `max_bytes` of code that
parses and runs at least one instruction.  The writer checks it before a
change; the web's upload form and the bot check it before they record a
request, so a bad program uses nothing up."""

from __future__ import annotations

import re

from hill import engine
from hill.errors import HillError, NoInstruction

NO_INSTRUCTION = (
    "the program has no instruction: only + - < > . [ ] run "
    "(with ( ) { } * % to repeat them), everything else is a comment"
)


# what `(+)` means: a ')' with no '*' or '%' after it has count 0 (docs/rules.md)
COUNTLESS = re.compile(rb"\)(?!\s*[*%]\s*-?0*[1-9])")
REPEATS_NOTHING = (
    "; a repeat with no count, such as (+), or with count 0 runs its body 0 times: "
    "write (+)*5 to run + five times"
)


def check_program(code: bytes, max_bytes: int) -> engine.Program:
    """The compiled program; HillError if it is too large or malformed,
    NoInstruction if it would never run an instruction."""
    if len(code) > max_bytes:
        raise HillError(f"program too large: {len(code)} bytes, the limit is {max_bytes}")
    try:
        program = engine.compile_program(code)
    except engine.ParseError as error:
        raise HillError(f"parse error at {error}") from None
    if not runs_an_instruction(program):
        repeats_nothing = COUNTLESS.search(code) is not None
        raise NoInstruction(NO_INSTRUCTION + (REPEATS_NOTHING if repeats_nothing else ""))
    return program


def runs_an_instruction(program: engine.Program) -> bool:
    """Whether `program` runs any instruction at all.  Repeats take no
    cycle, so a program that has an instruction runs it in its first cycle:
    the engine's trace of that one cycle says, exactly as a battle would
    (`(+)*0` and `(abc)*5` run nothing, `(a{+}c)%0` runs its `+`)."""
    first = engine.trace(program, program, engine.MIN_TAPE, max_cycles=1)
    return bool(first.left_source[0] >= 0)
