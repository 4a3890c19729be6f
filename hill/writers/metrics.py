"""The metrics a hill process keeps of itself (Prometheus, through
prometheus_client), in a registry of its own per process (`PROCESS`), never
the library's global one: the bot writes its registry into its status
file (bot.status) and the web report serves it at `/metrics` beside its own
(hill.web.operations.health), whichever process each runs in.

What is read from the database at each scrape (the request book, the
jousts) is not here: hill.web.operations.health collects it.  Imports nothing of the
hill.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Histogram

PROCESS = CollectorRegistry(auto_describe=True)

# the hill's lock (hill.writers.lock): how long a writer waited to take it
LOCK_WAIT = Histogram(
    "bfjoust_lock_wait_seconds",
    "Time a writer (a request, a tournament's piece, the ladder...) waited for the hill's lock",
    buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
    registry=PROCESS,
)
