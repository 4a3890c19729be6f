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

Where the server offers IRCv3 `draft/multiline`, a client may instead send
a long or many-lined message as one batch (`BATCH +ref draft/multiline
TARGET`, its lines tagged `batch=ref`, `BATCH -ref`); `Multiline` puts a
batch's lines together, a line tagged `draft/multiline-concat` joined to
the one before as it is (a long line cut), any other after a line break.
Such a message is whole: the server relays all of it or nothing, so it is
never held as above.

May import: nothing of the bot or the hill (a message is any object with .text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

LINE_LIMIT = 512  # bytes of a line as the server relays it, CR LF included (RFC 1459)
NEAR = 64  # a line within this many bytes of the limit may have been cut (weechat cuts at spaces)
WINDOW = 3.0  # seconds a continuation may take (clients pace their lines: irssi 2.2 s, weechat 2 s)
MAX_PIECES = 40  # lines joined at most (about 18 KB): more is no program for IRC
OPENERS = (("(", ")"), ("[", "]"), ("{", "}"))
MULTILINE = "draft/multiline"  # the capability, and the type of its batches
CONCAT = "draft/multiline-concat"  # the tag of a line joined to the one before without a break
MAX_BATCH_BYTES = 1 << 20  # a batch longer than this is dropped (servers allow a few KB)
MAX_BATCHES = 64  # batches open at once (a server closes each at once)


def relayed_length(source: str, command: str, target: str, text: str) -> int:
    """The bytes of the line as the server relayed it to the bot."""
    return len(f":{source} {command} {target} :{text}\r\n".encode("utf-8", "surrogateescape"))


def open_brackets(code: str) -> bool:
    """Whether `code` opens more `(`, `[` or `{` than it closes (a paste's
    first lines usually do)."""
    return any(code.count(a) > code.count(b) for a, b in OPENERS)


Slot = tuple[str, str]  # (the sender, where they said it)


@dataclass
class _Held:
    message: Any  # the Incoming that brought the program's start
    text: str  # its text so far, the pieces joined
    lines: int  # how many pieces
    cut: bool  # the last piece reached the limit: more was surely meant to follow
    has_code: bool  # else the command line had a name alone: the code follows
    timer: asyncio.TimerHandle | None = None


class PasteJoiner:
    """Holds program lines that may continue (`offer`), joins what follows
    (`continues`), and hands the whole on (`deliver`) with a note to the
    player (`tell`), or refuses it (`refuse`, naming `prefix`-upload)."""

    def __init__(
        self,
        prefix: str,
        deliver: Callable[[Any], None],
        tell: Callable[[Any, str], None],
        refuse: Callable[[Any, str], None],
        window: float = WINDOW,
    ) -> None:
        self.prefix = prefix
        self.deliver = deliver
        self.tell = tell
        self.refuse = refuse
        self.window = window
        self._held: dict[Slot, _Held] = {}

    def holding(self, slot: Slot) -> bool:
        return slot in self._held

    def offer(self, message: Any, slot: Slot, code: str, length: int) -> bool:
        """A line that brings a program (`code`, as much as this line has):
        True when it is held for what may follow, False when it is whole."""
        cut = length >= LINE_LIMIT - NEAR
        if code and not (cut or open_brackets(code)):
            return False
        self.end(slot)  # a new command ends the one before
        self._held[slot] = held = _Held(message, message.text, 1, cut, bool(code))
        self._wait(slot, held)
        return True

    def continues(self, slot: Slot, text: str, length: int) -> None:
        """A line of the same sender to the same place, while one is held:
        joined as it is after a piece cut at the limit, else after a line
        break (a line of the paste), or a space after a name alone."""
        held = self._held[slot]
        held.text += ("" if held.cut else "\n" if held.has_code else " ") + text
        held.lines += 1
        held.cut, held.has_code = length >= LINE_LIMIT - NEAR, True
        if held.lines >= MAX_PIECES:
            self.end(slot)
        else:
            self._wait(slot, held)

    def _wait(self, slot: Slot, held: _Held) -> None:
        if held.timer is not None:
            held.timer.cancel()
        held.timer = asyncio.get_running_loop().call_later(self.window, self.end, slot)

    def end(self, slot: Slot) -> None:
        """No more comes (or another command of the sender's): what is held
        goes on whole, or is refused when its end is uncertain."""
        held = self._held.pop(slot, None)
        if held is None:
            return
        if held.timer is not None:
            held.timer.cancel()
        if held.cut:  # its last piece reached the limit and nothing followed: unsure
            words = held.message.text.split(maxsplit=2)
            name = words[1] if len(words) > 1 else "NAME"
            self.refuse(
                held.message,
                f"your line reached IRC's limit ({LINE_LIMIT} bytes)"
                + (f" after {held.lines} lines" if held.lines > 1 else "")
                + " and nothing followed: your client may have cut the program, so it is "
                f"not played; send a long program with {self.prefix}-upload {name} "
                "(a link to a form) or give its URL",
            )
            return
        self.deliver(replace(held.message, text=held.text))
        if held.lines > 1:
            self.tell(held.message, f"joined {held.lines} lines your client split")


@dataclass
class _Batch:
    target: str  # where it was said
    opening: Any  # what the opening `BATCH +ref` line carried (its tags, its source)
    lines: list[str]  # the text so far, a line a piece
    size: int = 0  # its bytes so far


class Multiline:
    """The `draft/multiline` batches open on one connection: `open()` one,
    `add()` its lines, `close()` it for the whole text."""

    def __init__(self) -> None:
        self._open: dict[str, _Batch] = {}

    def clear(self) -> None:
        """A new connection: the last one's batches will never close."""
        self._open.clear()

    def open(self, ref: str, target: str, opening: Any) -> None:
        if len(self._open) >= MAX_BATCHES:
            self._open.pop(next(iter(self._open)))  # the oldest: its end was lost
        self._open[ref] = _Batch(target, opening, [])

    def holds(self, ref: str | None) -> bool:
        """Whether a line tagged `batch=ref` belongs to an open multiline batch."""
        return ref is not None and ref in self._open

    def add(self, ref: str, text: str, concat: bool) -> None:
        """A line of batch `ref`: after a line break, or joined to the line
        before as it is when `concat` (it carried draft/multiline-concat)."""
        batch = self._open[ref]
        batch.size += len(text.encode("utf-8", "surrogateescape")) + 1
        if batch.size > MAX_BATCH_BYTES:
            return  # dropped at its close
        if concat and batch.lines:
            batch.lines[-1] += text
        else:
            batch.lines.append(text)

    def close(self, ref: str) -> tuple[str, Any, str] | None:
        """Batch `ref` ended: (where it was said, its opening, the whole
        text); None for no multiline batch, one without lines, or one too long."""
        batch = self._open.pop(ref, None)
        if batch is None or not batch.lines or batch.size > MAX_BATCH_BYTES:
            return None
        return batch.target, batch.opening, "\n".join(batch.lines)
