"""Logging, configured here alone: the project logs with structlog
(`structlog.get_logger(__name__)` in each module), and structlog writes
through the standard logging, as the libraries do (aiohttp, Dask, Alembic:
this module quiets them where they narrate), so one set of handlers takes
every line.

- Before `configure_logging` (a command line, a test), once this module is
  imported: structlog's lines go through the standard logging unadorned,
  so a warning reaches stderr as Python's own last-resort handler says it
  and nothing reaches stdout (a command's output, the web child's pipe).
- `configure_logging`, for the long-running commands (`bfjoust bot`,
  `bfjoust web`): structured lines with UTC timestamps on stderr, and in
  files of the data folder (logs/bot.log, logs/web.log, the web's requests
  apart in logs/access.log, written by aiohttp's access logger that
  hill.web.requestlog extends), rotated.
- `quiet`: a library's logger quieted once the library set its own up.
- `Throttle`, the one throttle for repeated lines (each kind once per
  interval, with the count of those left out), and `Trouble` on it: a
  lasting trouble said once per interval rather than a traceback a try."""

from __future__ import annotations

import logging
import logging.handlers
import sys
import time
from collections import Counter
from collections.abc import Callable, Hashable
from pathlib import Path

import structlog

# libraries that narrate routine work at INFO (alembic: every start)
QUIET = ("alembic",)
ACCESS = "aiohttp.access"  # the web's line per request (hill.web.requestlog)
LOG_BYTES = 10 << 20  # a log file is rotated at this size ...
LOG_FILES = 5  # ... and this many old ones are kept


class _LogFile(logging.handlers.RotatingFileHandler):
    """A rotated log file that never makes trouble of its own: a full disk
    loses its lines (the terminal still has them), with no traceback a line."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


# filters (logging takes plain functions): which records go where
def _is_access(record: logging.LogRecord) -> bool:
    return record.name == ACCESS


def _not_access(record: logging.LogRecord) -> bool:
    return record.name != ACCESS


def _not_routine_access(record: logging.LogRecord) -> bool:
    return record.name != ACCESS or record.levelno > logging.INFO


def configure_logging(
    level: int = logging.INFO, folder: Path | None = None, name: str = "bot", create: bool = True
) -> None:
    """Lines on stderr (on a terminal, the web's routine requests left out:
    they are in the access log), and with `folder` (the data folder) in
    `folder/logs/NAME.log` and, for the web, `folder/logs/access.log`; a
    reader (`create` false) makes no data folder that is not there."""
    shared: list[structlog.typing.Processor] = [
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        # plain tracebacks: rich's (when installed) print every local
        # variable, page after page, secrets and all
        processor=structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        ),
        foreign_pre_chain=shared,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    if sys.stderr.isatty():  # a person reads it: the requests' lines are in access.log
        handler.addFilter(_not_routine_access)
    handlers: list[logging.Handler] = [handler]
    if folder is not None and (create or Path(folder).is_dir()):
        logs = Path(folder) / "logs"
        try:
            logs.mkdir(parents=True, exist_ok=True)
            for file_name, accept in ((f"{name}.log", _not_access), ("access.log", _is_access)):
                log_file = _LogFile(logs / file_name, maxBytes=LOG_BYTES, backupCount=LOG_FILES)
                log_file.setFormatter(formatter)
                log_file.addFilter(accept)
                handlers.append(log_file)
        except OSError as error:  # a read-only or full disk: the terminal still has it all
            print(f"no log files in {logs}: {error}", file=sys.stderr)
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


def quiet(name: str, level: int = logging.CRITICAL) -> None:
    """The library logger `name` says only what is `level` or worse (called
    after the library set its logging up, which may reset it)."""
    logging.getLogger(name).setLevel(level)


def _through_standard_logging() -> None:
    """structlog's lines through the standard logging, each the event and
    its values on one line, until configure_logging says more."""
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, _one_line],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
    )


_ONE_LINE = structlog.dev.ConsoleRenderer(colors=False, pad_event_to=0)


def _one_line(logger: object, method: str, event: structlog.typing.EventDict) -> dict[str, object]:
    """The standard logging's arguments: the line, and the traceback left
    to the standard logging to print."""
    exc_info = event.pop("exc_info", None)
    return {"msg": _ONE_LINE(logger, method, event), "exc_info": exc_info}


class Throttle:
    """The one throttle for repeated log lines: each kind of line at most
    once per `every` seconds, with how many were left out meanwhile."""

    def __init__(self, every: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self.clock = clock
        self._said: dict[Hashable, float] = {}  # kind: clock() of its last line
        self._left_out: Counter[Hashable] = Counter()

    def due(self, kind: Hashable) -> int | None:
        """None while a line of `kind` was said within `every` (this one is
        left out, and counted); else how many were left out since the last,
        and this one is said now."""
        now = self.clock()
        if now - self._said.get(kind, now - self.every) < self.every:
            self._left_out[kind] += 1
            return None
        self._said[kind] = now
        return self._left_out.pop(kind, 0)

    def said(self, kind: Hashable) -> None:
        """A line of `kind` was said now, another way (which starts its interval)."""
        self._said[kind] = self.clock()


class Trouble:
    """A trouble that lasts (the disk full, say) and that a worker meets at
    every try: one log line when it begins, one at most every `every`
    seconds while it lasts (with how many tries it failed since), one when
    it is over; never a traceback a try.

    A trouble that comes back soon after it seemed over (a try that needed
    no disk went through, the next that did failed) is the same trouble
    still: it says nothing more within `every` of its last line, and says it
    is over once it has stayed away `settle` seconds (seen at a later try)."""

    def __init__(
        self,
        what: str,
        every: float = 600.0,
        settle: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what = what  # whose trouble: "the request runner", "git", ...
        self.settle = settle
        self.clock = clock
        self.lines = Throttle(every, clock)  # by trouble: its "waits" and "goes on"
        self.why: str | None = None  # while it lasts
        self.last: str | None = None  # the last trouble said, over or not
        self.since = 0.0  # clock() it began
        self.failed = 0  # tries failed since the last line
        self.comebacks = 0  # times it came back since the last line
        self.flapping = False  # it came back after it seemed over: it must settle
        self.away_since: float | None = None  # seemed over, not said yet

    def struck(self, why: str) -> None:
        """A try failed for `why` (e.g. hill.errors.DiskFull.trouble)."""
        self.failed += 1
        back = self.why is None and why == self.last
        if self.lines.due(why) is None:  # said within `every` already
            if back:  # it came back soon after it seemed over: the same trouble
                self.comebacks += 1
                self.flapping = True
            self.why, self.last, self.away_since = why, why, None
            return
        came_back = {"came_back": self.comebacks} if self.comebacks else {}
        _log.error(f"{self.what} waits: {why}", failed=self.failed, **came_back)
        if why != self.why and not (back and self.flapping):
            self.since = self.clock()
        self.why = self.last = why
        self.failed, self.comebacks, self.away_since = 0, 0, None

    def cleared(self) -> None:
        """A try went through: the trouble is over (said at once the first
        time, and once it has stayed away `settle` seconds after it came back)."""
        now = self.clock()
        if self.why is not None:
            self.why, self.failed, self.away_since = None, 0, now
        if self.away_since is not None and (
            not self.flapping or now - self.away_since >= self.settle
        ):
            waited = self.away_since - self.since
            _log.info(f"{self.what} goes on after {waited:.0f} s: {self.last} no longer")
            self.lines.said(self.last)
            self.away_since, self.comebacks, self.flapping = None, 0, False


_log = structlog.get_logger("hill.trouble")

if not structlog.is_configured():
    _through_standard_logging()
