"""Programs that a client cut into several IRC lines, joined again.

IRC carries a message in one line of at most 512 bytes, the sender's
prefix (`:nick!user@host PRIVMSG #channel :`) and CR LF included.  A client
given a longer line sends it as several, each as long as fits (irssi), or
cut at a space before the limit (weechat); a pasted program of several lines
comes as one message a line.  The bot used to play the first piece as if
it were the whole program.  So a line that brings a program (`!bfjoust
NAME CODE`, `-test`, `-enter`) and may not be whole, because it reached
the line limit, leaves a `(`, `[` or `{` open or has a name alone (the
paste's first line), is held: the same
sender's lines to the same place that follow within WINDOW seconds of the
last piece are its continuation (a line that reached the limit was cut
mid-text and is joined as it is; any other piece ended a line of the
paste, and a line break joins it).  Once no more comes, the whole is
played, and the player told how many lines were joined.  A piece that
itself reached the limit and had no continuation leaves the end uncertain:
the program is refused with the reason and the way to send a long one.

May import: nothing of the bot or the hill (a message is any object with .text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

LINE_LIMIT = 512  # bytes of a line as the server relays it, CR LF included (RFC 1459)
NEAR = 64  # a line within this many bytes of the limit may have been cut (weechat cuts at spaces)
WINDOW = 3.0  # seconds a continuation may take (clients pace their lines: irssi 2.2 s, weechat 2 s)
MAX_PIECES = 40  # lines joined at most (about 18 KB): more is no program for IRC
OPENERS = (("(", ")"), ("[", "]"), ("{", "}"))


def relayed_length(source: str, command: str, target: str, text: str) -> int:
    """The bytes of the line as the server relayed it to the bot."""
    return len(f":{source} {command} {target} :{text}\r\n".encode("utf-8", "surrogateescape"))


def open_brackets(code: str) -> bool:
    """Whether `code` opens more `(`, `[` or `{` than it closes (a paste's
    first lines usually do)."""
    return any(code.count(a) > code.count(b) for a, b in OPENERS)


@dataclass
class _Held:
    message: Any  # the Incoming that brought the program's start
    pieces: list[str]
    cut: bool  # the last piece reached the limit: more was surely meant to follow
    has_code: bool  # else the command line had a name alone: the code follows
    timer: asyncio.TimerHandle | None = None
    joined: list[str] = field(default_factory=list)  # the separators used


class PasteJoiner:
    """Holds program lines that may continue (`offer`), joins what follows
    (`continues`), and hands the whole on (`deliver`) with a note to the
    player (`tell`), or refuses it (`refuse`)."""

    def __init__(
        self,
        deliver: Callable[[Any], None],
        tell: Callable[[Any, str], None],
        refuse: Callable[[Any, str], None],
        window: float = WINDOW,
    ) -> None:
        self.deliver = deliver
        self.tell = tell
        self.refuse = refuse
        self.window = window
        self._held: dict[tuple[str, str], _Held] = {}  # (sender key, where) -> held

    def holding(self, key: str, where: str) -> bool:
        return (key, where) in self._held

    def end(self, key: str, where: str) -> None:
        """Another command of the sender's: what is held goes first, as it is."""
        self._flush((key, where))

    def offer(self, message: Any, key: str, where: str, code: str, length: int) -> bool:
        """A line that brings a program (`code`, as much as this line has):
        True when it is held for what may follow, False when it is whole."""
        cut = length >= LINE_LIMIT - NEAR
        if code and not (cut or open_brackets(code)):
            return False
        self._flush((key, where))  # a new command ends the one before
        held = _Held(message, [message.text], cut, bool(code))
        self._held[key, where] = held
        self._wait(key, where, held)
        return True

    def continues(self, key: str, where: str, text: str, length: int) -> None:
        """A line of the same sender to the same place, while one is held."""
        held = self._held[key, where]
        held.joined.append("" if held.cut else "\n" if held.has_code else " ")
        held.has_code = True
        held.pieces.append(text)
        held.cut = length >= LINE_LIMIT - NEAR
        if len(held.pieces) >= MAX_PIECES:
            self._flush((key, where))
        else:
            self._wait(key, where, held)

    def _wait(self, key: str, where: str, held: _Held) -> None:
        if held.timer is not None:
            held.timer.cancel()
        loop = asyncio.get_running_loop()
        held.timer = loop.call_later(self.window, self._flush, (key, where))

    def _flush(self, slot: tuple[str, str]) -> None:
        held = self._held.pop(slot, None)
        if held is None:
            return
        if held.timer is not None:
            held.timer.cancel()
        count = len(held.pieces)
        if held.cut:  # its last piece reached the limit and nothing followed: unsure
            word = held.message.text.split(maxsplit=2)
            name = word[1] if len(word) > 1 else "NAME"
            self.refuse(
                held.message,
                f"your line reached IRC's limit ({LINE_LIMIT} bytes)"
                + (f" after {count} lines" if count > 1 else "")
                + " and nothing followed: your client may have cut the program, so it is "
                f"not played; send a long program with {word[0].split('-')[0]}-upload {name} "
                "(a link to a form) or give its URL",
            )
            return
        rest = zip(held.joined, held.pieces[1:], strict=True)
        text = held.pieces[0] + "".join(joint + piece for joint, piece in rest)
        self.deliver(replace(held.message, text=text))
        if count > 1:
            self.tell(held.message, f"joined {count} lines your client split")
