"""Logging of the long-running commands (`bfjoust bot`, `bfjoust web`):
structured lines with UTC timestamps on stderr, for our records and the
libraries' (standard logging) records alike."""

from __future__ import annotations

import logging
import sys

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
