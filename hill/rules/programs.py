"""What the hill takes as a program: at most `max_bytes` of code that
parses.  The writer checks it before a change; the web's upload form checks
it before it records a request, so a bad upload uses nothing up."""

from __future__ import annotations

from hill import engine
from hill.errors import HillError


def check_program(code: bytes, max_bytes: int) -> engine.Program:
    """The compiled program; HillError if it is too large or malformed."""
    if len(code) > max_bytes:
        raise HillError(f"program too large: {len(code)} bytes, the limit is {max_bytes}")
    try:
        return engine.compile_program(code)
    except engine.ParseError as error:
        raise HillError(f"parse error at {error}") from None
