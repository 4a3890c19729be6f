"""Logging of the long-running commands (`bfjoust bot`, `bfjoust web`):
structured lines with UTC timestamps on stderr, for our records and the
libraries' (standard logging) records alike; `Trouble`, a lasting trouble
said once per interval rather than a traceback a try."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

import structlog

# libraries that narrate routine work at INFO (alembic: every start)
QUIET = ("alembic",)


def configure_logging(level: int = logging.INFO) -> None:
    shared = [
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
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            # plain tracebacks: rich's (when installed) print every local
            # variable, page after page, secrets and all
            processor=structlog.dev.ConsoleRenderer(
                colors=False, exception_formatter=structlog.dev.plain_traceback
            ),
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


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
        self.every = every
        self.settle = settle
        self.clock = clock
        self.why: str | None = None  # while it lasts
        self.last: str | None = None  # the last trouble said, over or not
        self.said = -every  # clock() of the last line
        self.since = 0.0  # clock() it began
        self.failed = 0  # tries failed since the last line
        self.comebacks = 0  # times it came back since the last line
        self.flapping = False  # it came back after it seemed over: it must settle
        self.away_since: float | None = None  # seemed over, not said yet

    def struck(self, why: str) -> None:
        """A try failed for `why` (e.g. hill.errors.DISK_FULL)."""
        self.failed += 1
        now = self.clock()
        recent = now - self.said < self.every
        if why == self.why and recent:
            return
        back = self.why is None and why == self.last
        if back and recent:  # it came back soon after its last line: said already
            self.why, self.away_since = why, None
            self.comebacks += 1
            self.flapping = True
            return
        came_back = {"came_back": self.comebacks} if self.comebacks else {}
        _log.error(f"{self.what} waits: {why}", failed=self.failed, **came_back)
        if why != self.why and not (back and self.flapping):
            self.since = now
        self.why = self.last = why
        self.said, self.failed, self.comebacks, self.away_since = now, 0, 0, None

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
            self.said, self.away_since, self.comebacks, self.flapping = now, None, 0, False


_log = structlog.get_logger("hill.trouble")
