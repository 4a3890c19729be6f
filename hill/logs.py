"""Logging of the long-running commands (`bfjoust bot`, `bfjoust web`):
structured lines with UTC timestamps on stderr, for our records and the
libraries' (standard logging) records alike; `Trouble`, a lasting trouble
said once per interval rather than a traceback a try."""

from __future__ import annotations

import logging
import sys
import time

import structlog

# libraries that narrate routine work at INFO (alembic: every start)
QUIET = ("alembic",)


def configure_logging(level: int = logging.INFO) -> None:
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
    it is over; never a traceback a try."""

    def __init__(self, what: str, every: float = 600.0) -> None:
        self.what = what  # whose trouble: "the request runner", "git", ...
        self.every = every
        self.why: str | None = None  # while it lasts
        self.said = 0.0  # time.monotonic() of the last line
        self.since = 0.0  # time.monotonic() it began
        self.failed = 0  # tries failed since the last line

    def struck(self, why: str) -> None:
        """A try failed for `why` (e.g. hill.errors.DISK_FULL)."""
        self.failed += 1
        now = time.monotonic()
        if why == self.why and now - self.said < self.every:
            return
        _log.error(f"{self.what} waits: {why}", failed=self.failed)
        if why != self.why:
            self.since = now
        self.why, self.said, self.failed = why, now, 0

    def cleared(self) -> None:
        """A try went through: the trouble is over."""
        if self.why is not None:
            waited = time.monotonic() - self.since
            _log.info(f"{self.what} goes on after {waited:.0f} s: {self.why} no longer")
        self.why, self.failed = None, 0


_log = structlog.get_logger("hill.trouble")
