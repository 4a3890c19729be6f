"""The hill's pools: which programs a hill tournament plays.

- `hill`: the hill now, in rank order;
- `hill@N`: the hill as it stood at event N (the number of `/?event=N`;
  a test event shows the hill in force then);
- `archive`: every `owner.name` ever submitted (a `-test` is a trial, not a
  submission), in its latest version; with every version, each distinct
  code of `owner.name` is an entrant `owner.name@V`, V the number of its
  first submission as the program page numbers them.

Pools join with `+`: `hill@12+hill` is the hill of event 12 against
today's. A program in both with the same code is one entrant; with another
code, the later pool's is named after its pool (`alice.rush@hill`).

Entrants are named by their full names, as players know them; their codes
are in the programs table, so every joust the hill has stored is reused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from hill.errors import TournamentError
from hill.rules import names, versions
from hill.store.queries import in_force
from hill.store.tables import SUBMITTED, ProgramRow

POOL_PATTERN = re.compile(r"(?P<kind>hill|archive)(?:@(?P<event>\d{1,9}))?")
MAX_JOINED = 4
POOLS_HELP = "hill, hill@EVENT (the hill at an event) or archive, or several joined by +"


@dataclass(frozen=True)
class Pool:
    label: str  # as stored with the tournament: "hill", "hill@12", "archive --all-versions"
    programs: dict[str, bytes]  # entrant name -> code, in the pool's order


def hill_pool(session: Session, spec: str, *, all_versions: bool = False) -> Pool:
    """The pool that `spec` names; TournamentError if there is none or it
    has fewer than two programs."""
    specs = spec.split("+")
    if len(specs) > MAX_JOINED:
        raise TournamentError(f"at most {MAX_JOINED} pools joined by +")
    if all_versions and not any(part.strip().lower() == "archive" for part in specs):
        raise TournamentError("every version (--all-versions) is a choice of the archive pool")
    parts = [_one_pool(session, part, all_versions) for part in specs]
    label = "+".join(part.label for part in parts)
    pool = Pool(label, join_pools([(part.label, part.programs) for part in parts]))
    if len(pool.programs) < 2:
        raise TournamentError(
            f"the pool {pool.label} has {len(pool.programs)} program"
            f"{'s' * (len(pool.programs) != 1)}: a tournament needs two or more"
        )
    return pool


def join_pools(pools: Sequence[tuple[str, dict[str, bytes]]]) -> dict[str, bytes]:
    """Pools (label, programs) as one: the same name and code once; a name
    met again with other code named after its pool (`name@label`)."""
    joined: dict[str, bytes] = {}
    for label, programs in pools:
        for name, code in programs.items():
            if joined.get(name, code) != code:
                name = f"{name}@{label}"
            joined.setdefault(name, code)
    return joined


def _one_pool(session: Session, spec: str, all_versions: bool) -> Pool:
    match = POOL_PATTERN.fullmatch(spec.strip().lower())
    if match is None or (match["kind"] == "archive" and match["event"]):
        raise TournamentError(f"unknown pool {spec[:40]!r}: the pools are {POOLS_HELP}")
    if match["kind"] == "archive":
        label = "archive --all-versions" if all_versions else "archive"
        return Pool(label, _archive(session, all_versions))
    event = None if match["event"] is None else int(match["event"])
    return Pool(match[0], _hill_at(session, event))


def _hill_at(session: Session, event_id: int | None) -> dict[str, bytes]:
    """The programs of the hill after the last change up to `event_id`
    (None: now), in rank order."""
    try:
        event = in_force(session, event_id)
    except LookupError:
        raise TournamentError(f"there is no event {event_id}: see the history page") from None
    if event is None:
        return {}
    ids = [entry["id"] for entry in event.standings["entries"]]
    rows = {
        row.id: row for row in session.scalars(select(ProgramRow).where(ProgramRow.id.in_(ids)))
    }
    return {rows[i].full_name: rows[i].code for i in ids}


def _archive(session: Session, all_versions: bool) -> dict[str, bytes]:
    query = (
        select(ProgramRow.owner, ProgramRow.name, ProgramRow.code_hash, ProgramRow.code)
        .where(SUBMITTED)
        .order_by(ProgramRow.id)
    )
    return archive_entrants(session.execute(query), all_versions)


def archive_entrants(
    submissions: Iterable[tuple[str, str, str, bytes]], all_versions: bool
) -> dict[str, bytes]:
    """From every submission (owner, name, code hash, code), oldest first:
    each owner.name's latest code, or each of its distinct codes as
    `owner.name@V` (V its first submission's number among owner.name's)."""
    submissions = list(submissions)
    latest: dict[str, bytes] = {}
    for owner, name, _, code in submissions:
        full = names.full_name(owner, name)
        latest.pop(full, None)  # a new submission moves the name to its latest place
        latest[full] = code
    if not all_versions:
        return latest
    numbers = versions.first_versions((names.full_name(o, n), h) for o, n, h, _ in submissions)
    every: dict[str, bytes] = {}
    for owner, name, code_hash, code in submissions:
        full = names.full_name(owner, name)
        every.setdefault(versions.label(full, numbers[full, code_hash]), code)
    return every
