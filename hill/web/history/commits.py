"""The history pages' data: a commit of the hill, and every version of a program.

A commit page shows what git has (hill.web.history.git_reader: message, author,
time, the files changed) with what the database knows of it: the hill
event it records, the standings before and after, who moved.  Each program
it changed comes with a diff of its code (hill.web.history.code_diff).  Commits
never change, so a commit's page data is cached whole by its sha, and
diffs by the pair of contents they compare.  SHAs are resolved among the
hill's own commits (those the database noted), so anything else is a 404.

The pure parts, `resolve` and `standings_moves`, are plain functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from hill.engine import code_hash
from hill.errors import GitUnavailable, HillError, NotFound
from hill.rules import names
from hill.rules.events import iso_utc
from hill.store.queries import HillEvent, HillQueries, ProgramVersion
from hill.threads import LRU
from hill.web.history.code_diff import code_diff
from hill.web.history.git_reader import ChangedFile, GitCommit, GitReader
from hill.web.reader_thread import ThreadedReader
from hill.web.state import Timeline, event

log = structlog.get_logger(__name__)
SHA = re.compile(r"[0-9a-f]{7,40}")
CODE_HASH = re.compile(r"[0-9a-f]{64}")
SHORT = 10  # digits of a commit shown
COMMITS_KEPT = 64
DIFFS_KEPT = 512


def resolve(changes: Sequence[HillEvent], sha: str) -> HillEvent:
    """The hill change whose commit `sha` names: its full 40 digits, or at
    least 7 that begin no other commit of the hill's.  NotFound otherwise."""
    sha = sha.lower()
    if not SHA.fullmatch(sha):
        raise NotFound(f"{sha[:60]!r} is no commit id: give 7 to 40 hexadecimal digits")
    found = {c.commit: c for c in changes if c.commit and c.commit.startswith(sha)}
    if not found:
        raise NotFound(f"no commit {sha} in the hill's history")
    if len(found) > 1:
        raise NotFound(f"{sha} is ambiguous: {len(found)} commits begin with it; give more digits")
    return next(iter(found.values()))


def standings_moves(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each program's place before and after a change (stored standings
    records), in the new order, then those that left: `move` is "up",
    "down", "same", "new" or "left", `places` the places gained, and
    `updated` whether it is a new version of a program of that name."""
    old = {r["name"]: r for r in before}
    rows = []
    for record in after:
        was = old.get(record["name"])
        places = was["rank"] - record["rank"] if was else 0
        move = "new" if was is None else "up" if places > 0 else "down" if places < 0 else "same"
        rows.append(_move(record["name"], was, record, move, places))
    stayed = {r["name"] for r in after}
    rows += [_move(r["name"], r, None, "left", 0) for r in before if r["name"] not in stayed]
    return rows


def _move(
    name: str, was: dict[str, Any] | None, now: dict[str, Any] | None, move: str, places: int
) -> dict[str, Any]:
    return {
        "program": name,
        "before": was["rank"] if was else None,
        "after": now["rank"] if now else None,
        "points_before": was["points"] if was else None,
        "points_after": now["points"] if now else None,
        "move": move,
        "places": places,
        "updated": bool(was and now and was["id"] != now["id"]),
    }


class HistoryPages(ThreadedReader):
    """Commit pages and program versions, cached; the reads (SQLite, the
    diffs) run on threads of their own, git in subprocesses."""

    def __init__(self, queries: HillQueries, repository: Path) -> None:
        super().__init__(2, "web-history")
        self.queries = queries
        self.git = GitReader(repository)
        self._commits: LRU[str, dict[str, Any]] = LRU(COMMITS_KEPT)
        self._diffs: LRU[tuple[str, str], dict[str, Any]] = LRU(DIFFS_KEPT)

    async def commit(self, timeline: Timeline, sha: str) -> dict[str, Any]:
        """A commit page's data (see README: /api/commit/SHA)."""
        change = resolve(timeline.changes, sha)
        assert change.commit is not None
        cached = self._commits.get(change.commit)
        if cached is None:
            try:
                commit = await self.git.commit(change.commit)
            except GitUnavailable as error:
                log.warning(f"reading commit {change.commit}: {error}")
                raise web.HTTPServiceUnavailable(
                    reason="git could not read the history just now; try again shortly"
                ) from None
            if commit is None:
                raise NotFound(f"commit {change.commit} is not in the hill's repository")
            cached = self._commits.put(
                change.commit, await self._commit_data(timeline, change, commit)
            )
        return cached

    async def _commit_data(
        self, timeline: Timeline, change: HillEvent, commit: GitCommit
    ) -> dict[str, Any]:
        earlier = timeline.upto(change.id)
        before = earlier[-2] if len(earlier) > 1 else None
        # the hill's programs (a contest's files, in folders, are other files)
        programs = [f for f in commit.files if f.path.endswith(names.SUFFIX) and "/" not in f.path]
        return {
            "event": event(change),
            "commit": {
                "sha": commit.sha,
                "short": commit.sha[:SHORT],
                "parents": list(commit.parents),
                "author": commit.author,
                "email": commit.email,
                "time": iso_utc(commit.time),
                "title": commit.message.partition("\n")[0],
                "message": commit.message,
            },
            "programs": [await self._changed_program(f) for f in programs],
            "other_files": [
                {"path": f.path, "status": f.status} for f in commit.files if f not in programs
            ],
            "standings": {
                "before": before.id if before else None,
                "moves": standings_moves(before.entries if before else (), change.entries),
            },
        }

    async def _changed_program(self, file: ChangedFile) -> dict[str, Any]:
        old_hash = code_hash(file.old) if file.old is not None else None
        new_hash = code_hash(file.new) if file.new is not None else None
        return {
            "program": file.path.removesuffix(names.SUFFIX),
            "status": file.status,
            "old": _side(file.old, old_hash),
            "new": _side(file.new, new_hash),
            "diff": await self._diff(old_hash, new_hash, file.old, file.new),
        }

    async def _diff(
        self,
        old_hash: str | None,
        new_hash: str | None,
        old: bytes | Callable[[], bytes] | None,
        new: bytes | Callable[[], bytes] | None,
    ) -> dict[str, Any]:
        """The diff of two contents (None: no file), by their hashes; a
        callable content is read (in a thread) only when not cached."""
        key = (old_hash or "", new_hash or "")
        cached = self._diffs.get(key)
        if cached is None:
            cached = self._diffs.put(key, await self._run(_diff_of, old, new))
        return cached

    async def versions(self, full_name: str) -> list[dict[str, Any]]:
        """Every version of `full_name` ever submitted, oldest first, each
        with its arrival and the diff from the version before."""
        versions = await self._run(self.queries.versions, full_name)
        shown = []
        for previous, version in zip([None, *versions], versions, strict=False):
            diff = None
            if previous is not None:
                diff = await self._diff(
                    previous.code_hash,
                    version.code_hash,
                    self._code_reader(previous.code_hash),
                    self._code_reader(version.code_hash),
                )
            shown.append(_version(version, diff))
        return shown

    def _code_reader(self, code_hash: str) -> Callable[[], bytes]:
        return lambda: self.queries.code_of_hash(code_hash)

    async def code(self, code_hash: str) -> bytes:
        """The code whose hash is `code_hash` (hill.engine.code_hash); NotFound if none."""
        if not CODE_HASH.fullmatch(code_hash):
            raise NotFound(f"{code_hash[:70]!r} is no code hash: 64 hexadecimal digits")
        try:
            return await self._run(self.queries.code_of_hash, code_hash)
        except HillError:
            raise NotFound(f"no program with code {code_hash}") from None


def _diff_of(
    old: bytes | Callable[[], bytes] | None, new: bytes | Callable[[], bytes] | None
) -> dict[str, Any]:
    """In a thread: read what needs reading, decode and diff."""

    def text(code: bytes | Callable[[], bytes] | None) -> str:
        if callable(code):
            code = code()
        return "" if code is None else code.decode("utf-8", "replace")

    return code_diff(text(old), text(new)).to_json()


def _side(code: bytes | None, hash_: str | None) -> dict[str, Any] | None:
    return None if code is None else {"bytes": len(code), "hash": hash_}


def _version(version: ProgramVersion, diff: dict[str, Any] | None) -> dict[str, Any]:
    arrival = version.arrival
    record = next((r for r in arrival.entries if r["id"] == version.id), None) if arrival else None
    return {
        "number": version.number,
        "id": version.id,
        "submitted": iso_utc(version.submitted),
        "bytes": version.size,
        "hash": version.code_hash,
        "status": version.status.value,
        "left": iso_utc(version.left_at) if version.left_at else None,
        "left_reason": version.left_reason.value if version.left_reason else None,
        "event": event(arrival),
        "rank": record["rank"] if record else None,
        "diff": diff,
    }


HISTORY = web.AppKey("history", HistoryPages)
