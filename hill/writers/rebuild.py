"""A hill rebuilt from its public history alone (`bfjoust hill rebuild REPO`).

The history anyone clones holds every change of the hill in order, each a
commit (hill.history.reading): its event's id, kind, actor, time, summary,
the programs it names, the code of the program that arrived.  The new data
folder's repository is that history, fetched as it is (the same commit
ids); its database is made again change by change, as the writer made it:
the programs arrive, update, leave and are ranked by the same rules, their
jousts played again by the engine (stored once per pair of contents, with
their battle statistics), each event stored with its id, time and commit.
The hill's writer then opens the folder and finds its history in line.

What the history does not hold is not rebuilt: the `-test` trials (their
events are the gaps between the ids), the request book, the upload links,
the notices to owners, the tournaments and the ladder (played again from
the jousts), a contest's creation, title and closing time, an open
contest's entries (secret until it closes), the ids of the programs (tests
took ids too), the sub-second part of each time.  Each event's summary is
the commit's; a recomputed summary that differs is counted and logged.
The ranking method is read from the history too: the one whose scores
each commit's `report.txt` shows.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session
from tqdm import tqdm

from hill.config import HillSettings
from hill.engine.arena import Arena, code_hash
from hill.errors import HillError
from hill.history import copies
from hill.history.reading import HistoryReader, Recorded
from hill.history.recorder import REPORT
from hill.layout import DataFolder
from hill.rules import changes, contests, names, scoring
from hill.rules.events import ARRIVALS, CONTEST_PUBLICATIONS, EventKind, LeaveReason
from hill.rules.standings import Standings, rank
from hill.store.contests import view_of
from hill.store.database import Database
from hill.store.jousts import store_jousts
from hill.store.queries import HillQueries
from hill.store.tables import ContestEntryRow, ContestRow, ProgramRow
from hill.writers.backup import new_data_folder
from hill.writers.hill import Hill, _arrive, _code_of, _contestant, _leave, _rank_arrival
from hill.writers.report import add_event

log = structlog.get_logger(__name__)

RESCORED_BY = re.compile(r"^rescored \d+ programs by (\S+)")
# a line of report.txt's ranking: rank, change, score, points, program
REPORT_LINE = re.compile(r"^\s*\d+ +\S+ +(-?[\d.]+) +-?[\d.]+  (\S+)$")
Ranked = Callable[[str], tuple[Standings, str]]  # the standings after a change, by a method
DEPARTURES = {EventKind.WITHDRAW: LeaveReason.WITHDRAWN, EventKind.REMOVE: LeaveReason.REMOVED}


@dataclass(frozen=True)
class Rebuilt:
    """What a rebuild made: the changes, programs, jousts and contests, the
    events the history skips (tests), the summaries that came out otherwise."""

    path: Path
    changes: int
    programs: int
    jousts: int
    contests: int
    skipped: int
    differing: tuple[int, ...]
    seconds: float

    def describe(self) -> str:
        differing = (
            f"; {len(self.differing)} recomputed summaries differ from their commits' "
            f"(events {', '.join(map(str, self.differing[:10]))})"
            if self.differing
            else "; every recomputed summary is its commit's"
        )
        return (
            f"rebuilt {self.path} from its history: {self.changes} changes, {self.programs} "
            f"programs, {self.jousts} jousts played, {self.contests} contests, {self.skipped} "
            f"event ids skipped (tests) in {self.seconds:.1f} s{differing}"
        )


def rebuild(
    settings: HillSettings, source: str, *, jobs: int | None = None, quiet: bool = False
) -> Rebuilt:
    """Make the data folder of `settings` (missing or empty) from the
    history at `source` (a repository's path or a clone URL)."""
    started = time.monotonic()
    with new_data_folder(settings.data_dir, "rebuilt") as partial:
        folder = DataFolder(partial)
        copies.from_clone(source, folder.repository, settings.git_branch)
        reader = HistoryReader(folder.repository / ".git", settings.git_branch)
        total = len(reader.shas())
        if total == 0:
            found = copies.git(folder.repository / ".git", "branch", "--format=%(refname:short)")
            others = ", ".join(found.split()) or "none"
            raise HillError(
                f"{source} has no branch {settings.git_branch} with a hill's history (its "
                f"branches: {others}); [hill] git_branch names the hill's branch"
            )
        db = Database(folder.database)
        try:
            db.upgrade()
            replay = Replay(settings, db, jobs)
            with tqdm(total=total, unit="change", disable=quiet, desc="rebuilding") as progress:
                for recorded in reader:
                    replay.apply(recorded)
                    progress.update()
                    progress.set_postfix(jousts=replay.jousts, refresh=False)
        finally:
            db.close()
    Hill(settings, jobs=jobs).close()  # finds the history in line with the database
    return Rebuilt(
        settings.data_dir,
        total,
        replay.programs,
        replay.jousts,
        replay.contests,
        replay.last_event - total,
        tuple(replay.differing),
        time.monotonic() - started,
    )


class Replay:
    """Makes each recorded change again in the database, in order."""

    def __init__(self, settings: HillSettings, db: Database, jobs: int | None) -> None:
        self.db = db
        self.queries = HillQueries(db, settings.ranking)
        self.arena = Arena(jobs=jobs)
        self.method = settings.ranking  # until a rescore names another
        self.programs = self.jousts = self.contests = self.last_event = 0
        self.differing: list[int] = []

    def apply(self, recorded: Recorded) -> None:
        if recorded.event <= self.last_event:
            raise HillError(f"commit {recorded.sha} records event {recorded.event} out of order")
        with self.db.transaction() as session:
            ranked: Ranked
            program: int | None
            left: int | None
            if recorded.kind in ARRIVALS:
                ranked, program, left = self._arrival(session, recorded)
            elif recorded.kind in DEPARTURES:
                ranked, program, left = self._departure(session, recorded)
            elif recorded.kind == EventKind.RESCORE:
                ranked, program, left = self._rescore(session, recorded)
            else:  # a contest's publication: the hill as it was
                current = self.queries.current(session)[1]
                ranked, program, left = (lambda _: (current, recorded.summary)), None, None
            standings, summary = self._ranked(recorded, ranked)
            contest = self._contest(session, recorded) if recorded.contest else None
            if summary != recorded.summary:
                log.warning(
                    f"event {recorded.event}: the history says {recorded.summary!r}, "
                    f"the rebuilt hill {summary!r}"
                )
                self.differing.append(recorded.event)
            add_event(
                session,
                recorded.kind,
                recorded.actor,
                recorded.summary,
                standings,
                program,
                left,
                contest,
                recorded=(recorded.event, recorded.time, recorded.sha),
            )
        self.last_event = recorded.event

    def _ranked(self, recorded: Recorded, ranked: Ranked) -> tuple[Standings, str]:
        """The standings after a change by the hill's ranking method: the one
        its `report.txt` shows (its Score column) when the method so far
        does not (a hill ranked otherwise than the configuration says)."""
        standings, summary = ranked(self.method)
        reported = _report_scores(recorded.written.get(REPORT))
        if reported is None or _shows(standings, reported):
            return standings, summary
        for method in scoring.METHODS:
            if method != self.method:
                other, other_summary = ranked(method)
                if _shows(other, reported):
                    log.info(f"event {recorded.event}: the hill is ranked by {method}")
                    self.method = method
                    return other, other_summary
        return standings, summary  # none shows it: the summary will say so

    def _arrival(self, session: Session, recorded: Recorded) -> tuple[Ranked, int, int | None]:
        full_name = recorded.program
        assert full_name is not None
        owner, name = names.split(full_name)
        code = recorded.written.get(names.file_name(full_name))
        if code is None:  # the same code again: its file did not change
            old = self.queries.current(session)[1].find(full_name)
            if old is None:
                raise HillError(f"commit {recorded.sha} lacks the code of {full_name}")
            code = self.queries.code_of_hash(old.program.code_hash)
        program_hash = self.arena.compile(code)
        _, current, results = self.queries.current(session, [program_hash])
        # the hill was full when the history says someone was pushed off
        size = current.size if recorded.kind == EventKind.CHALLENGE else current.size + 1
        plan = changes.arrival(current, full_name, size, test_only=False)
        left = plan.displaced.program.full_name if plan.displaced else None
        said = full_name if recorded.kind == EventKind.UPDATE else recorded.displaced
        if plan.kind != recorded.kind or left != said:
            raise HillError(
                f"commit {recorded.sha} ({recorded.kind} of {full_name}, {recorded.displaced} "
                f"leaving) disagrees with the hill rebuilt so far ({plan.kind}, {left} leaving)"
            )
        hashes = [e.program.code_hash for e in plan.stay] + [program_hash]
        played = self.arena.complete(results, hashes, _code_of(session, {program_hash: code}))
        store_jousts(session, played)
        self.jousts += len(played)
        row = _arrive(session, plan, owner, name, code, program_hash)
        row.submitted_at = recorded.time
        if plan.leaving is not None:
            self._left_at(session, plan.leaving.program.id, recorded)
        self.programs += 1
        newcomer = _contestant(row)
        displaced = plan.displaced.program.id if plan.displaced else None

        def ranked(method: str) -> tuple[Standings, str]:
            return _rank_arrival(method, current, plan, results, newcomer)

        return ranked, row.id, displaced

    def _departure(self, session: Session, recorded: Recorded) -> tuple[Ranked, None, int]:
        _, current, _ = self.queries.current(session)
        leaving = current.find(recorded.displaced or "")
        if leaving is None:
            raise HillError(f"commit {recorded.sha}: there is no {recorded.displaced} to leave")
        _leave(session, leaving, DEPARTURES[recorded.kind])
        self._left_at(session, leaving.program.id, recorded)

        def ranked(method: str) -> tuple[Standings, str]:
            return changes.rank_departure(method, current, leaving, recorded.kind)

        return ranked, None, leaving.program.id

    def _rescore(self, session: Session, recorded: Recorded) -> tuple[Ranked, None, None]:
        named = RESCORED_BY.match(recorded.summary)
        if named:
            self.method = named[1]
        _, current, _ = self.queries.current(session)
        previous = {e.program.id: e.rank for e in current.entries}
        rejoust = "after replaying every joust" in recorded.summary

        def ranked(method: str) -> tuple[Standings, str]:
            programs = [e.program for e in current.entries]
            standings = rank(programs, current.outcomes, method, previous)
            return standings, changes.rescore_summary(standings, rejoust)

        return ranked, None, None

    def _left_at(self, session: Session, program_id: int, recorded: Recorded) -> None:
        row = session.get(ProgramRow, program_id)
        assert row is not None
        row.left_at = recorded.time

    def _contest(self, session: Session, recorded: Recorded) -> int:
        """The contest a publication names, made from what its files say."""
        name = recorded.contest
        assert name is not None and recorded.kind in CONTEST_PUBLICATIONS
        row = session.scalar(select(ContestRow).where(ContestRow.name == name))
        if row is None:
            row = ContestRow(
                name=name,
                title=name,  # its title, creator and closing time are not in the history
                format=contests.DEFAULT_FORMAT,
                closes=recorded.time,
                created_at=recorded.time,
                created_by=recorded.actor,
                state=contests.ContestState.CLOSED,
                closed_at=recorded.time,
                closed_by=recorded.actor,
                told=[str(news) for news in contests.News],  # old news: never told again
            )
            session.add(row)
            session.flush()
            self.contests += 1
        folder = contests.folder(name) + "/"
        if recorded.kind == EventKind.CONTEST_ENTRIES:
            for path, code in recorded.written.items():
                if path.startswith(folder) and path.endswith(names.SUFFIX):
                    entrant = path[len(folder) :].removesuffix(names.SUFFIX)
                    session.add(
                        ContestEntryRow(
                            contest_id=row.id,
                            entrant=entrant,
                            control=entrant.startswith(contests.CONTROL),
                            code=code,
                            code_hash=code_hash(code),
                            heard_at=recorded.time,
                        )
                    )
        else:
            result = json.loads(recorded.written[contests.results_path(name)])
            row.result, row.format = result, result.get("format", row.format)
            row.state = contests.ContestState.PLAYED
            session.flush()
            shown = replace(view_of(session, row), result=result).standings() or []
            first = contests.winners(shown)
            row.winner = first[0] if len(first) == 1 else None
        return row.id


def _report_scores(report: bytes | None) -> dict[str, float] | None:
    """Each program's score in a commit's `report.txt` (None: not in the commit)."""
    if report is None:
        return None
    scores = {}
    for line in report.decode(errors="replace").splitlines()[1:]:
        found = REPORT_LINE.match(line)
        if not found:
            break  # the matrix follows the ranking
        scores[found[2]] = float(found[1])
    return scores


def _shows(standings: Standings, reported: dict[str, float]) -> bool:
    """Whether a report (its scores to two decimals) shows these standings."""
    return len(reported) == standings.size and all(
        abs(e.scores[standings.method] - reported.get(e.program.full_name, -1e9)) <= 0.006
        for e in standings.entries
    )
