"""The Lab (`/lab`): a page where players edit, joust, run against the hill
and tune a program in their browser, with the hill's engine compiled to
WebAssembly (static/lab/: the page's scripts; engine.js is the engine's
module).  The server plays no battle for it: it sends what it already has,
a state's programs and matrix (`/api/lab/state?event=N`, built once per
state, gzipped, with an ETag, cached by the browser), and ranks the
outcomes the browser played against that state's stored matrix with the
very code `bfjoust hill test` uses (`/api/lab/rank`: hill.rules.changes.
rank_arrival), so its figures are the test's to the last digit.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from aiohttp import web

from hill import engine
from hill.config import HillSettings
from hill.errors import BadRequest
from hill.rules import changes, names
from hill.rules.events import utcnow
from hill.rules.standings import Contestant, Standings, worst_opponents
from hill.store.queries import HillQueries
from hill.web.builds import BUILDS, IMMUTABLE, Built, json_bytes, packed, respond
from hill.web.params import snapshot, state_key
from hill.web.render import render
from hill.web.state import Snapshot, event

MAX_RUNS = 201  # outcome rows of one ranking request: a tuning's values
ROW = "+0-"  # a battle's outcome from the tested program's side: win, tie, loss
LAB_NAME = "lab.program"  # the tested program's name when none is given


@dataclass(frozen=True)
class LabSettings:
    """What the Lab takes from the hill's settings."""

    size: int  # programs the hill holds: a full hill loses its last to a newcomer
    max_program_bytes: int
    queries: HillQueries


LAB = web.AppKey("lab", LabSettings)


async def lab(request: web.Request) -> web.Response:
    """The page; its scripts fetch the state's data (lab-json) themselves."""
    snap = await snapshot(request)
    settings = request.app[LAB]
    data = {
        "event": event(snap.event),
        "size": snap.standings.size,
        "hill_size": settings.size,
        "max_bytes": settings.max_program_bytes,
        "max_runs": MAX_RUNS,
    }
    return render(request, "lab.html", data)


async def lab_state(request: web.Request) -> web.Response:
    """A hill state's programs (names, ranks, figures, sources) and its
    matrix, built once per state; a past state (?event=N) is cached for
    good, the current one revalidated (its ETag) at each visit."""
    snap = await snapshot(request)
    queries = request.app[LAB].queries
    key = ("lab", *state_key(snap))
    built = await request.app[BUILDS].get(key, partial(_state_bytes, snap, queries))
    response = respond(request, built)
    fixed = "event" in request.query and snap.event is not None
    response.headers["Cache-Control"] = IMMUTABLE if fixed else "no-cache"
    return response


def _state_bytes(snap: Snapshot, queries: HillQueries) -> Built:
    """The state's JSON, gzipped (in a worker thread)."""
    standings = snap.standings
    programs = []
    for e in standings.entries:
        code = queries.program_code(e.program.id)
        programs.append(
            {
                "name": e.program.full_name,
                "rank": e.rank,
                "points": e.points,
                "score": e.scores[standings.method],
                "hash": e.program.code_hash,
                "code": code.decode("utf-8", errors="replace"),
            }
        )
    outcomes = np.ascontiguousarray(standings.outcomes, dtype=np.int8)
    data = {
        "event": event(snap.event),
        "method": standings.method,
        "battles": engine.BATTLES,
        "programs": programs,
        # outcomes[a][b][i] (int8, row-major): battle i of program a against b, a's side
        "outcomes": base64.b64encode(outcomes.tobytes()).decode(),
    }
    return packed(json_bytes(data), "application/json; charset=utf-8")


async def lab_rank(request: web.Request) -> web.Response:
    """Rank outcomes the browser played against a state, as `-test` would:
    body {"name": "owner.name" (optional), "runs": [[ROW string per
    program of the state, in its order], ...]}; one answer a run."""
    snap = await snapshot(request)
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("the body must be JSON") from None
    name, runs = _parse_rank(body, snap.standings)
    size = request.app[LAB].size
    # a few ms a run: off the event loop, bounded as the pages' building is
    built = await request.app[BUILDS].once(partial(_ranked, snap, size, name, runs))
    return respond(request, built)


def _ranked(snap: Snapshot, size: int, name: str, runs: list[np.ndarray]) -> Built:
    """Every run ranked, as gzipped JSON (in a worker thread)."""
    answers = [_rank_run(snap.standings, size, name, run) for run in runs]
    data = {"event": event(snap.event), "results": answers}
    return packed(json_bytes(data), "application/json; charset=utf-8")


def _parse_rank(body: Any, standings: Standings) -> tuple[str, list[np.ndarray]]:
    """The name and the runs of a ranking request, checked strictly; each
    run as (N, 42) int8 outcomes."""
    if not isinstance(body, dict) or set(body) - {"name", "runs"}:
        raise BadRequest('the body must be {"name": ..., "runs": [...]}')
    name = body.get("name") or LAB_NAME
    if not isinstance(name, str) or not names.is_full_name(name):
        raise BadRequest("name must be a program's full name, owner.name")
    runs = body.get("runs")
    if not isinstance(runs, list) or not 1 <= len(runs) <= MAX_RUNS:
        raise BadRequest(f"runs must be a list of 1 to {MAX_RUNS} runs")
    n = standings.size
    if n == 0:
        raise BadRequest("the hill is empty in this state")
    parsed = []
    for run in runs:
        if not isinstance(run, list) or len(run) != n:
            raise BadRequest(f"each run must hold {n} rows, one per program of the state")
        if not all(isinstance(r, str) and len(r) == engine.BATTLES for r in run):
            raise BadRequest(f"each row must be {engine.BATTLES} characters of {ROW!r}")
        text = "".join(run)
        if text.strip(ROW):
            raise BadRequest(f"each row must be {engine.BATTLES} characters of {ROW!r}")
        codes = np.frombuffer(text.encode(), dtype=np.uint8)
        row = np.where(codes == ord("+"), 1, np.where(codes == ord("-"), -1, 0))
        parsed.append(row.astype(np.int8).reshape(n, engine.BATTLES))
    return name, parsed


def _rank_run(current: Standings, size: int, name: str, row: np.ndarray) -> dict[str, Any]:
    """Where a program with outcomes `row` against each program of
    `current` (its order) would rank: changes.arrival and rank_arrival, as
    the hill's `-test` (hill.writers.hill) ranks an arrival."""
    plan = changes.arrival(current, name, size, test_only=True)
    stay = [current.entries.index(e) for e in plan.stay]
    k = len(stay)
    outcomes = np.zeros((k + 1, k + 1, engine.BATTLES), dtype=np.int8)
    outcomes[:k, :k] = current.outcomes[np.ix_(stay, stay)]
    outcomes[k, :k] = row[stay]
    outcomes[:k, k] = -row[stay]
    owner, short = names.split(name)
    newcomer = Contestant(-1, owner, short, utcnow(), "lab")  # naive UTC, as the stored ones
    standings, summary = changes.rank_arrival(current.method, current, plan, outcomes, newcomer)
    index = next(i for i, e in enumerate(standings.entries) if e.program.id == -1)
    entry = standings.entries[index]
    score = entry.scores[standings.method]
    return {
        "rank": entry.rank,
        "size": standings.size,
        "points": entry.points,
        "score": score,
        "scores": dict(entry.scores),
        "method": standings.method,
        "summary": summary,
        # as the summary (and `bfjoust hill test`) prints them
        "printed": {"points": f"{entry.points:.2f}", "score": f"{score:.2f}"},
        "displaced": plan.displaced.program.full_name if plan.displaced else None,
        "worst": [
            {"name": n, "margin": m} for n, m in worst_opponents(standings, index, changes.WORST)
        ],
    }


def lab_settings(queries: HillQueries, hill: HillSettings) -> LabSettings:
    return LabSettings(hill.size, hill.max_program_bytes, queries)
