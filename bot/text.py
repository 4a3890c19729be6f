"""Fitting replies into IRC lines, and making echoed text plain.

A line the server relays is at most 512 bytes with its CR LF, and the server
puts `:nick!user@host PRIVMSG target :` in front of our text, so the text
gets what is left.  Splits fall on spaces where possible and never inside a
UTF-8 character.

Replies echo what players typed (names, nicks, URLs, parse errors), so
everything the bot says is made plain first: IRC formatting codes and
Unicode bidirectional controls are removed, so that no echo can colour the
channel or turn the rest of a line around (U+202E).
"""

from __future__ import annotations

import re

LINE_BYTES = 512  # RFC 1459, CR LF included
HOST_BYTES = 63  # the longest hostname, when the server has not told us ours


# IRC formatting (https://modern.ircdocs.horse/formatting): colour \x03 with
# up to two digits (and a background), hex colour \x04 with six hex digits
# (and a background), bold, italics, underline, strike-through, monospace,
# reverse and reset; \x01 would start a CTCP.  Then the bidi controls:
# embeddings and overrides, isolates, and the LRM, RLM and ALM marks.
UNSAFE = re.compile(
    r"\x03(?:[0-9]{1,2}(?:,[0-9]{1,2})?)?"
    r"|\x04(?:[0-9A-Fa-f]{6}(?:,[0-9A-Fa-f]{6})?)?"
    r"|[\x01\x02\x0f\x11\x16\x1d\x1e\x1f]"
    r"|[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"
)


def plain(text: str) -> str:
    """`text` without IRC formatting codes and bidi controls."""
    return UNSAFE.sub("", text)


def text_budget(source: str, command: str, target: str) -> int:
    """Bytes of text that fit in `:source COMMAND target :text\\r\\n`."""
    overhead = len(f":{source} {command} {target} :\r\n".encode())
    return LINE_BYTES - overhead


def fallback_source(nick: str, user: str) -> str:
    """The longest `nick!user@host` the server could put before our lines."""
    return f"{nick}!~{user[:10]}@{'h' * HOST_BYTES}"


def clean(text: str) -> str:
    """One line: control characters that would end or break it become spaces."""
    return "".join(" " if ch in "\r\n\0" else ch for ch in text)


def split_text(text: str, budget: int) -> list[str]:
    """Pieces of `text` of at most `budget` UTF-8 bytes each, cut at the
    last space that fits (else at a character boundary)."""
    if budget < 4:
        raise ValueError(f"no room for text: {budget} bytes")
    pieces = []
    rest = clean(text)
    while len(rest.encode()) > budget:
        cut = _fit(rest, budget)
        space = rest.rfind(" ", 0, cut + 1)
        if space > 0:
            pieces.append(rest[:space])
            rest = rest[space + 1 :]
        else:
            pieces.append(rest[:cut])
            rest = rest[cut:]
    if rest or not pieces:
        pieces.append(rest)
    return pieces


def _fit(text: str, budget: int) -> int:
    """How many characters of `text` fit in `budget` UTF-8 bytes."""
    encoded = text.encode()[:budget]
    return len(encoded.decode(errors="ignore"))
