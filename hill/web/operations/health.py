"""`/healthz` and `/metrics`: the hill's health for a watchdog, and its
metrics for Prometheus (prometheus_client; docs/operations.md lists each
metric and what to alert on).

The bot's side is read from its status file (bot.status, rewritten every
few seconds: the IRC link, the request runner, its own metrics such as the
hill lock's waits); the request book and the jousts from the database
(hill.store.figures); the web's own requests and clones are counted here,
by a middleware, in a registry of this application's own.

`/healthz` answers JSON, 200 when the hill is healthy, 503 otherwise:
the writer (a status file rewritten within STALE_SECONDS, its runner
running, no storage trouble, git not behind), the IRC link (connected and
registered), the request book (no request open for more than `[web]
stuck_request_seconds`: the runner is stuck or far behind).  A web report
served without its bot (`bfjoust web` alone) has no writer, and says so
with a 503.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from hill.layout import DataFolder
from hill.rules.events import utcnow
from hill.store import figures
from hill.store.database import Database
from hill.threads import Threads

STALE_SECONDS = 30.0  # the bot rewrites its status every 5 s
ANSWER_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800)
CLONE_PATH = "/hill.git/info/refs"  # a clone's or a fetch's first request


class Health:
    """The hill's health and metrics, read from the database `db` and the
    bot's status file `status_path`."""

    def __init__(self, db: Database, status_path: Path, stuck_seconds: float) -> None:
        self.db = db
        self.status_path = status_path
        self.stuck_seconds = stuck_seconds
        self.registry = CollectorRegistry()  # collected at scrapes only, never at start
        self.responses = Counter(
            "bfjoust_web_requests",
            "Web requests answered, by HTTP status",
            ["status"],
            registry=self.registry,
        )
        self.clones = Counter(
            "bfjoust_clones_served",
            "Clones and fetches of the hill's history begun (/hill.git/info/refs answered)",
            registry=self.registry,
        )
        self.registry.register(_HillCollector(self))

    def bot_status(self) -> dict[str, Any] | None:
        """The bot's status file, None if there is none or it is unreadable."""
        try:
            status = json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return None
        return status if isinstance(status, dict) else None

    def report(self) -> dict[str, Any]:
        """`/healthz`'s body: each part with its `ok`, and `healthy`."""
        status = self.bot_status()
        age = None if status is None else _age(status)
        alive = _alive(status)
        writer = dict(status.get("writer", {})) if status else {}
        writer.update(
            seen_seconds_ago=None if age is None else round(age, 1),
            stopped=bool(status and status.get("stopped")),
        )
        writer["ok"] = bool(
            alive and writer.get("running") and not writer.get("trouble")
            and not writer.get("git_behind")
        )  # fmt: skip
        irc = dict(status.get("irc", {})) if status else {}
        irc["ok"] = bool(alive and irc.get("connected") and irc.get("registered"))
        book = figures.book(self.db)
        oldest = None if book.oldest is None else (utcnow() - book.oldest).total_seconds()
        requests = {
            "open": book.open,
            "oldest_open_seconds": None if oldest is None else round(oldest, 1),
            "limit_seconds": self.stuck_seconds,
            "ok": oldest is None or oldest <= self.stuck_seconds,
        }
        healthy = writer["ok"] and irc["ok"] and requests["ok"]
        return {"healthy": healthy, "writer": writer, "irc": irc, "requests": requests}

    def exposition(self) -> bytes:
        """`/metrics`'s body: the web's and the database's, then the bot's own."""
        text = generate_latest(self.registry)
        status = self.bot_status()
        if status is not None and _alive(status):
            text += str(status.get("metrics", "")).encode()
        return text

    @web.middleware
    async def count(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Count every answer by status (the outermost middleware: error pages too)."""
        try:
            response = await handler(request)
        except web.HTTPException as error:
            self.responses.labels(str(error.status)).inc()
            raise
        self.responses.labels(str(response.status)).inc()
        if request.path == CLONE_PATH and response.status == 200:
            self.clones.inc()
        return response


class _HillCollector(Collector):
    """What is read at each scrape: the request book, the jousts, the bot's status."""

    def __init__(self, health: Health) -> None:
        self.health = health
        self.answers = _Answers(health.db)

    def collect(self) -> Iterator[Metric]:
        db = self.health.db
        book = figures.book(db)
        yield GaugeMetricFamily(
            "bfjoust_requests_waiting", "Requests open in the request book", value=book.open
        )
        oldest = 0.0 if book.oldest is None else (utcnow() - book.oldest).total_seconds()
        yield GaugeMetricFamily(
            "bfjoust_oldest_request_age_seconds",
            "How long the oldest open request has waited (0: none open)",
            value=oldest,
        )
        answers = HistogramMetricFamily(
            "bfjoust_answer_seconds",
            "Requests answered, heard to played, by command (the whole request book)",
            labels=["command"],
        )
        for command, took in sorted(self.answers.read().items()):
            buckets = [(str(b), c) for b, c in zip(took.buckets, took.counts, strict=True)]
            answers.add_metric([command], [*buckets, ("+Inf", took.count)], took.total or 0.0)
        yield answers
        yield CounterMetricFamily(
            "bfjoust_jousts_stored",
            "Jousts played and stored (rate(): jousts a second)",
            value=figures.jousts_stored(db),
        )
        status = self.health.bot_status() or {}
        alive = _alive(status)
        irc = status.get("irc", {}) if alive else {}
        running = alive and bool(status.get("writer", {}).get("running"))
        registered = irc.get("registered")
        for name, help, value in (
            ("bfjoust_bot_up", "1 while the bot rewrites its status file", alive),
            ("bfjoust_writer_running", "1 while the bot's request runner runs", running),
            ("bfjoust_irc_registered", "1 while the bot is registered on IRC", registered),
        ):
            yield GaugeMetricFamily(name, help, value=1.0 if value else 0.0)


class _Answers:
    """The answered requests' latencies, read once each: those up to the
    last settled request (every one before it finished) are kept here, and
    only the later ones are read at each scrape."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.settled = 0
        self.kept: dict[str, figures.Latencies] = {}
        self.lock = threading.Lock()  # scrapes may come at once, each in a thread

    def read(self) -> dict[str, figures.Latencies]:
        with self.lock:
            settled = figures.settled(self.db)
            if settled > self.settled:
                new = figures.latencies(self.db, ANSWER_BUCKETS, self.settled, settled)
                self.kept = _merged(self.kept, new)
                self.settled = settled
            return _merged(self.kept, figures.latencies(self.db, ANSWER_BUCKETS, self.settled))


def _merged(
    one: dict[str, figures.Latencies], other: dict[str, figures.Latencies]
) -> dict[str, figures.Latencies]:
    both = dict(one)
    for command, took in other.items():
        both[command] = both[command] + took if command in both else took
    return both


def _age(status: dict[str, Any]) -> float:
    """Seconds since the bot wrote its status."""
    return max(0.0, time.time() - float(status.get("written", 0)))


def _alive(status: dict[str, Any] | None) -> bool:
    """Whether the bot runs: its status written lately, and not on its stop."""
    if not status:
        return False
    return not status.get("stopped") and _age(status) < STALE_SECONDS


HEALTH = web.AppKey("health", Health)
_THREAD = Threads(1, "web-health")  # the checks' reads (SQLite, the bot's status file)


async def healthz(request: web.Request) -> web.Response:
    report = await _THREAD.run(request.app[HEALTH].report)
    response = web.json_response(report, status=200 if report["healthy"] else 503)
    response.headers["Cache-Control"] = "no-store"
    return response


async def metrics(request: web.Request) -> web.Response:
    body = await _THREAD.run(request.app[HEALTH].exposition)
    response = web.Response(body=body)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    response.headers["Cache-Control"] = "no-store"
    return response


def setup(app: web.Application, db: Database, data_dir: Path, stuck_seconds: float) -> None:
    """What `/healthz` and `/metrics` read, on `app`, and its answers counted."""
    health = Health(db, DataFolder(data_dir).bot_status, stuck_seconds)
    app[HEALTH] = health
    app.middlewares.insert(0, health.count)
