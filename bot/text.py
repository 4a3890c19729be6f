"""Fitting replies into IRC lines, and making echoed text plain.

A line the server relays is at most 512 bytes with its CR LF, and the server
puts `:nick!user@host PRIVMSG target :` in front of our text, so the text
gets what is left.  Splits fall on spaces where possible and never inside a
UTF-8 character.

Replies echo what players typed (names, nicks, URLs, parse errors), so
everything the bot says is made plain first: IRC formatting codes, Unicode
bidirectional controls and every other invisible character are removed,
so that no echo can colour the channel, turn the rest of a line around
(U+202E) or hide text in zero-width characters (U+200B, U+FEFF).
"""

from __future__ import annotations

import re
import unicodedata

LINE_BYTES = 512  # RFC 1459, CR LF included
HOST_BYTES = 63  # the longest hostname, when the server has not told us ours


# IRC formatting (https://modern.ircdocs.horse/formatting): colour \x03 with
# up to two digits (and a background), hex colour \x04 with six hex digits
# (and a background), bold, italics, underline, strike-through, monospace,
# reverse and reset; \x01 would start a CTCP.
UNSAFE = re.compile(
    r"\x03(?:[0-9]{1,2}(?:,[0-9]{1,2})?)?"
    r"|\x04(?:[0-9A-Fa-f]{6}(?:,[0-9A-Fa-f]{6})?)?"
    r"|[\x01\x02\x0f\x11\x16\x1d\x1e\x1f]"
)


# Invisible characters that are not of the format category (Cf) but show
# nothing either: the Hangul fillers, the combining grapheme joiner, the
# Khmer inherent vowels and the Mongolian variation selectors.
INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0")


def plain(text: str) -> str:
    """`text` without IRC formatting codes, and without invisible
    characters: Unicode's format characters (category Cf: the bidi
    controls, zero-width spaces and joiners U+200B-U+200D, the word joiner,
    the byte order mark U+FEFF, the tag characters...) and the few other
    characters that show nothing."""
    text = UNSAFE.sub("", text)
    if text.isascii():
        return text
    return "".join(ch for ch in text if ch not in INVISIBLE and unicodedata.category(ch) != "Cf")


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
