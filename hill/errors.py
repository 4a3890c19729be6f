"""Every exception the project raises on purpose, in one place.

The tree (a class's other base, kept for the callers that catch it, in
brackets):

    Error                       anything raised on purpose
    ├── HillError               a request the hill refuses; the message is for the player
    │   ├── BadName             a program or owner name the hill does not accept
    │   ├── NoInstruction       a program that runs no instruction at all (a typo, most likely)
    │   ├── NotReady            a database readers cannot read yet (missing, older, newer)
    │   ├── CopyError           a copy of the history (backup, restore, rebuild) failed: git's words
    │   └── Kept                a request kept in memory until the storage takes it
    ├── ParseError [ValueError] a malformed program: what is wrong, and where
    ├── ConfigError [ValueError] a bad configuration: the file and the key
    ├── CommandError            a command-line refusal: one line on stderr, exit status 1
    ├── TournamentError         bad input to a tournament (pool, option, cluster)
    │   └── Cancelled           an admin cancelled the tournament: it stops where it is
    ├── LedgerError [RuntimeError] a change the tournament ledger does not allow (a bug)
    ├── QueueFull               as many requests wait as may
    ├── LinkRefused             an upload link that takes no upload (unknown, used, expired)
    ├── StorageError            the hill's storage failed, not the request; `trouble` says it
    │   ├── DiskFull            no room left (no byte or no inode)
    │   ├── DatabaseBusy        the database locked by another process longer than a write waits
    │   ├── DiskFailing         the disk cannot be written (an I/O error)
    │   └── HistoryUnavailable  git failed for another reason: the history cannot be written
    ├── web:
    │   ├── NotFound [LookupError] what a URL names does not exist
    │   ├── Busy                too much work under way: try again shortly (503)
    │   ├── BadRequest          a malformed request: a 4xx and why
    │   │   └── BadUpload       the upload form's content cannot be a program
    │   └── GitUnavailable      git failed or took too long
    └── bot:
        ├── FetchError          a URL gave no program
        ├── IrcdError [RuntimeError] the local IRC server cannot be started
        ├── Usage               a malformed command: how to use it
        ├── Quiet               a command refused without a word (the sender was told already)
        └── Stopped             the bot stops: a tournament pauses where it is

Every message but LedgerError's is meant to be read by whoever asked
(player, reader or operator), as it is.

Failures that are not the request's but the storage's (a full disk, a
database locked too long, an I/O error), which SQLite, git or the OS raise,
are translated once, where those are called: the store's engines
(hill.store.database.translate_errors, a SQLAlchemy event) and the
history's git and files (hill.history.repository) raise a StorageError in
their place (`as_storage_error` tells which one; the original is its
cause).  Everyone above catches StorageError alone and says `error.trouble`
(one line, for players and operators alike).
"""

from __future__ import annotations

import errno


class Error(Exception):
    """Anything the project raises on purpose."""


class HillError(Error):
    """A request the hill refuses or cannot answer; the message is meant for the player."""


class BadName(HillError):
    """A name the hill does not accept; the message says what a good one is."""


class NoInstruction(HillError):
    """A program that runs no instruction: all of it is comment (such as
    `allegro` in `!bfjoust rank allegro`, meant as `!bfjoust-rank allegro`)."""


class NotReady(HillError):
    """A database readers cannot read yet: missing, or of an older schema
    (the writer makes and upgrades it), or of a newer one (`upgradable` False)."""

    def __init__(self, message: str, *, upgradable: bool = True) -> None:
        super().__init__(message)
        self.upgradable = upgradable


class CopyError(HillError):
    """A git command of a copy of the history (a backup, a restore, a
    rebuild) failed, or what it read is not a hill's; the message is git's."""


class ParseError(Error, ValueError):
    """A malformed program: says what is wrong and where (1-based line and column)."""

    def __init__(self, message: str, line: int, column: int, offset: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.message = message
        self.line = line
        self.column = column
        self.offset = offset

    def located(self, path: str) -> str:
        """`path:line:column: message`, as compilers say it."""
        return f"{path}:{self.line}:{self.column}: {self.message}"


class ConfigError(Error, ValueError):
    """A bad configuration: the message names the file and the key."""


class CommandError(Error):
    """A problem to report on stderr with exit status 1 (no traceback)."""


class TournamentError(Error):
    """Bad input to a tournament (a bad pool, option or cluster): one clear message."""


class Cancelled(TournamentError):
    """An admin cancelled the tournament being played: it stops where it is,
    its result the matches committed so far."""


class LedgerError(Error, RuntimeError):
    """A change the model does not allow (a bug in the caller, never bad input)."""


class QueueFull(Error):
    """As many requests wait as may: try again later."""


class LinkRefused(Error):
    """A link that cannot take an upload; the message is meant for the player."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status that says it


class NotFound(Error, LookupError):
    """Something a URL names does not exist; the message is shown to the reader."""


class Busy(Error):
    """Too much work of one kind under way (`what`: "battles are being
    traced"); try again in `retry_after` seconds."""

    def __init__(self, retry_after: int, what: str = "battles are being traced") -> None:
        super().__init__(f"too many {what}; try again in {retry_after} s")
        self.retry_after = retry_after


class BadRequest(Error):
    """A malformed request (a body cut short, a bad form...): the message
    says why on one line, `status` is the 4xx that says it."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class BadUpload(BadRequest):
    """The form's content cannot be a program; the message says why."""


class GitUnavailable(Error):
    """git failed or took too long; the message says which."""


class FetchError(Error):
    """Why a URL gave no program; the message is meant for the player."""


class IrcdError(Error, RuntimeError):
    """The local IRC server cannot be started; the message says why."""


class Usage(Error):
    """A malformed command; the message says how to use it."""


class Quiet(Error):
    """A request refused without a word: the sender was told already."""


class Stopped(Error):
    """The bot stops: the tournament pauses where it is (nothing is lost)."""


class Kept(HillError):
    """A request heard but not recorded yet (the hill's storage cannot take
    it now): it is kept, and played once it can be; the message says so."""


class StorageError(Error):
    """The hill's storage failed, not the request (nothing of it was
    recorded, or what was stands): `trouble` says it in one line, the
    message adds the first line of what SQLite, git or the OS said
    (`detail`; the error they raised is the cause)."""

    trouble = "the hill's storage failed"

    def __init__(self, detail: str = "") -> None:
        said = _first_line(detail) if detail else ""
        told = f"{self.trouble} ({said})" if said and said not in self.trouble else self.trouble
        super().__init__(told)
        self.detail = detail


class DiskFull(StorageError):
    """No room left on the hill's disk (no byte, or no inode)."""

    trouble = "the hill's disk is full"


class DatabaseBusy(StorageError):
    """Another process held the database's lock longer than a write waits."""

    trouble = "the hill's database is busy"


class DiskFailing(StorageError):
    """The disk cannot be written (an I/O error)."""

    trouble = "the hill's disk cannot be written"


class HistoryUnavailable(StorageError):
    """git failed (not for room or the disk): the history cannot be written
    now; `trouble` names git's first line of complaint."""

    def __init__(self, detail: str) -> None:
        self.trouble = f"the hill's history cannot be written ({_first_line(detail)})"
        super().__init__(detail)


def as_storage_error(error: BaseException) -> StorageError | None:
    """The StorageError that `error`, raised by SQLite, git or the OS, is
    (a full disk, a database busy, a failing disk), or None if it is none
    of those.  Only the store and the history call this, where they call
    SQLite, git and the OS; it looks through the chain of causes
    (SQLAlchemy wraps sqlite3's error; git says it on stderr)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, StorageError):
            return cause
        name = str(getattr(cause, "sqlite_errorname", ""))
        told = f"{cause} {getattr(cause, 'stderr', '') or ''}"
        if (
            (isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT))
            or name == "SQLITE_FULL"
            or "No space left on device" in told
            or "database or disk is full" in told
        ):
            return DiskFull(_first_line(str(cause)))
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in told:
            return DatabaseBusy(_first_line(str(cause)))
        if (
            (isinstance(cause, OSError) and cause.errno == errno.EIO)
            or name.startswith("SQLITE_IOERR")
            or "disk I/O error" in told
        ):
            return DiskFailing(_first_line(str(cause)))
        cause = getattr(cause, "orig", None) or cause.__cause__ or cause.__context__
    return None


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:200] if lines else "no reason given"
