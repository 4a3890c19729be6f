"""The data behind the hill's own pages (views.py), as plain JSON-ready dicts.

The JSON API serves these dicts as they are and the HTML templates render the
very same ones, so a page and its `/api/...` twin can never disagree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hill import engine
from hill.rules.events import EventKind, iso_utc
from hill.rules.reports import json_report
from hill.web.state import Snapshot, Timeline, event

TAPES = list(engine.TAPE_LENGTHS)


def standings(snap: Snapshot) -> dict[str, Any]:
    """hill.rules.reports.json_report, plus the state's event and each program's
    change of rank and age (challenges survived)."""
    report = json_report(snap.standings, snap.commit, snap.statistics)
    for program, entry in zip(report["programs"], snap.standings.entries, strict=True):
        program["change"] = entry.change
        program["age"] = snap.ages[entry.program.id]
    return {"event": event(snap.event), **report}


def matrix(snap: Snapshot) -> dict[str, Any]:
    """margins[a][b]: the joust score of the program ranked a+1 against the one ranked b+1."""
    return {
        "event": event(snap.event),
        "programs": [e.program.full_name for e in snap.standings.entries],
        "margins": snap.standings.margins().tolist(),
    }


def _battle(i: int) -> dict[str, Any]:
    """Battle i of a joust's 42 (sieve 10..30, then kettle 10..30)."""
    tape, polarity = engine.battle_config(i)
    return {"tape": tape, "polarity": polarity}


def _battles(outcomes: np.ndarray) -> list[dict[str, Any]]:
    return [{**_battle(i), "outcome": int(o)} for i, o in enumerate(outcomes)]


def _by_polarity(counts: np.ndarray) -> dict[str, list[int]]:
    """A (42,) array of counts as {"sieve": 21 counts, "kettle": 21 counts}."""
    rows = counts.reshape(len(engine.POLARITIES), len(TAPES))
    return {p: rows[i].tolist() for i, p in enumerate(engine.POLARITIES)}


def breakdown(snap: Snapshot, full_name: str) -> dict[str, Any]:
    """One program against every opponent, 42 outcomes each from its side
    (sieve 10..30, then kettle 10..30), and where it loses most."""
    a = snap.index(full_name)
    others = [b for b in range(snap.standings.size) if b != a]
    rows = snap.standings.outcomes[a, others].astype(np.int64)
    losses = (rows == -1).sum(axis=0)
    worst = sorted(range(engine.BATTLES), key=lambda i: (-losses[i], i))[:3]
    return {
        "event": event(snap.event),
        "program": full_name,
        "rank": a + 1,
        "stats": snap.statistics.as_json(a),
        "tapes": TAPES,
        "opponents": [
            {
                "program": snap.standings.entries[b].program.full_name,
                "rank": b + 1,
                "margin": snap.standings.margin(a, b),
                "outcomes": row.tolist(),
                "line": engine.classic_line(row.tolist()),
            }
            for b, row in zip(others, rows, strict=True)
        ],
        "wins": _by_polarity((rows == 1).sum(axis=0)),
        "ties": _by_polarity((rows == 0).sum(axis=0)),
        "losses": _by_polarity(losses),
        "worst": [{**_battle(i), "losses": int(losses[i])} for i in worst if losses[i] > 0],
    }


def departure(
    hist: Timeline, full_name: str, versions: list[dict[str, Any]], ladder: list[dict[str, Any]]
) -> dict[str, Any]:
    """When and why a program left the hill, by whom (the newcomer that
    pushed it off, or who took it off), its last state there, and where its
    versions stand on the all-time ladder."""
    gone = [c for c in hist.changes if c.displaced == full_name and c.kind != EventKind.UPDATE]
    leaving = gone[-1] if gone else None
    last = versions[-1]
    by = None
    if leaving is not None:
        by = leaving.program if leaving.kind == EventKind.CHALLENGE else leaving.actor
    return {
        "left": last["left"],
        "reason": last["left_reason"],
        "by": by,
        "event": event(leaving),
        "last_state": hist.series(full_name)[-1].event,
        "ladder": ladder,
    }


def pair(snap: Snapshot, left: str, right: str) -> dict[str, Any]:
    """The 42 battles of `left` (on the left) against `right`."""
    a, b = snap.index(left), snap.index(right)
    outcomes = snap.standings.outcomes[a, b]
    return {
        "event": event(snap.event),
        "left": left,
        "right": right,
        "left_rank": a + 1,
        "right_rank": b + 1,
        "margin": snap.standings.margin(a, b),
        "line": engine.classic_line(outcomes.tolist()),
        "battles": _battles(outcomes),
    }


def history(hist: Timeline) -> dict[str, Any]:
    """Every change of the hill, newest first."""
    return {"changes": [event(c) for c in reversed(hist.changes)]}


def series(hist: Timeline, full_name: str) -> dict[str, Any]:
    """A program's rank and score (by the ranking method of each state) over time."""
    return {
        "program": full_name,
        "points": [
            {
                "event": p.event,
                "time": iso_utc(p.time),
                "rank": p.rank,
                "size": p.size,
                "score": p.score,
                "points": p.points,
            }
            for p in hist.series(full_name)
        ],
    }


def source(snap: Snapshot, full_name: str, code: bytes) -> dict[str, Any]:
    return {
        "event": event(snap.event),
        "program": full_name,
        "bytes": len(code),
        "code": code.decode("utf-8", "replace"),
    }
