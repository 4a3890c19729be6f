"""The hill's history read back: each commit of the branch as the change it
records, from what the writer put in it (hill.history.recorder).

A commit holds the hill's files after its change (`owner.name.bfjoust`
for each program on the hill, `report.txt`; a contest's publication adds
`contests/NAME/...`); its author is the change's actor, its author date the
change's time (to the second), its message the change's title
(hill.rules.changes.COMMIT_MESSAGES: its kind and the programs it names),
a blank line, the change's summary, a blank line and its trailers
(`Contest: NAME` for a contest's, then `Hill-Event: N`).
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hill.errors import CopyError
from hill.history.copies import git
from hill.history.repository import QUIET_GIT, TRAILER
from hill.rules import contests
from hill.rules.changes import COMMIT_MESSAGES
from hill.rules.events import EventKind

# each title template as a pattern: its {fields} as named groups (names hold no space)
TITLES = {
    kind: re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>\\S+)", re.escape(template)) + "$")
    for kind, template in COMMIT_MESSAGES.items()
}
TRAILER_LINE = re.compile(r"^([\w-]+): (.*)$")


@dataclass(frozen=True)
class Recorded:
    """One commit of the hill's history, as the change it records."""

    sha: str
    event: int
    kind: EventKind
    actor: str
    time: dt.datetime  # naive UTC, to the second
    summary: str
    program: str | None  # who arrived
    displaced: str | None  # who left
    contest: str | None
    # the files it wrote (path: content) and deleted
    written: dict[str, bytes] = field(repr=False)
    deleted: tuple[str, ...]


def parse_message(message: str) -> tuple[str, str, dict[str, str]]:
    """A commit message as (title, summary, trailers)."""
    paragraphs = message.strip("\n").split("\n\n")
    trailers = {}
    for line in paragraphs[-1].splitlines() if len(paragraphs) > 1 else []:
        found = TRAILER_LINE.match(line)
        if found:
            trailers[found[1]] = found[2]
    body = paragraphs[1:-1] if trailers else paragraphs[1:]
    return paragraphs[0], "\n\n".join(body), trailers


def parse_title(title: str) -> tuple[EventKind, dict[str, str]] | None:
    """A commit title's kind of change and the names it gives
    (`program`, `displaced`, `contest`); None for a title no change has."""
    for kind, pattern in TITLES.items():
        found = pattern.match(title)
        if found:
            return kind, found.groupdict()
    return None


class HistoryReader:
    """The commits of a repository's branch, oldest first, each read whole."""

    def __init__(self, git_dir: Path, branch: str) -> None:
        self.git_dir = git_dir
        self.branch = branch

    def shas(self) -> list[str]:
        try:
            return git(self.git_dir, "rev-list", "--reverse", f"refs/heads/{self.branch}").split()
        except CopyError:
            return []  # no commit

    def __iter__(self) -> Iterator[Recorded]:
        blobs = subprocess.Popen(
            ["git", *QUIET_GIT, "--git-dir", str(self.git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert blobs.stdin is not None and blobs.stdout is not None
        try:
            for sha in self.shas():
                yield self._read(sha, blobs)
        finally:
            blobs.stdin.close()
            blobs.wait()

    def _read(self, sha: str, blobs: subprocess.Popen[bytes]) -> Recorded:
        head = git(self.git_dir, "show", "-s", "--format=%an%x00%at%x00%B", sha)
        actor, seconds, message = head.split("\0", 2)
        title, summary, trailers = parse_message(message)
        parsed = parse_title(title)
        events = TRAILER.findall(message)  # as the writer reads its history
        if parsed is None or not events:
            raise CopyError(f"commit {sha} records no hill change: {title!r}")
        kind, named = parsed
        written, deleted = {}, []
        changed = git(
            self.git_dir, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--root", sha
        ).split("\0")
        for status_line, path in zip(changed[0::2], changed[1::2], strict=False):
            _, _, _, blob, status = status_line.lstrip(":").split()
            if status == "D":
                deleted.append(path)
            else:
                written[path] = _blob(blobs, blob)
        return Recorded(
            sha=sha,
            event=int(events[-1]),
            kind=kind,
            actor=actor,
            time=dt.datetime.fromtimestamp(int(seconds), dt.UTC).replace(tzinfo=None),
            summary=summary,
            program=named.get("program"),
            displaced=named.get("displaced"),
            contest=trailers.get(contests.TRAILER, named.get("contest")),
            written=written,
            deleted=tuple(deleted),
        )


def _blob(blobs: subprocess.Popen[bytes], sha: str) -> bytes:
    """A blob's content through `git cat-file --batch`."""
    assert blobs.stdin is not None and blobs.stdout is not None
    blobs.stdin.write(sha.encode() + b"\n")
    blobs.stdin.flush()
    header = blobs.stdout.readline().split()
    if len(header) != 3:
        raise CopyError(f"git cat-file: no object {sha}")
    data = blobs.stdout.read(int(header[2]))
    blobs.stdout.read(1)  # its newline
    return data
