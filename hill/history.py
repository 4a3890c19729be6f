"""The hill's git repository: one commit per hill change, so `git log` is
the hill's history.

The database is the truth; the repository is derived from it.  Each commit
carries a `Hill-Event: N` trailer naming the event it records, so after a
crash the missing commits can be made, and a lost or corrupted repository
can be rebuilt, history and all, from the events.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

import git

from hill.faults import crash_point

log = logging.getLogger(__name__)

TRAILER = re.compile(r"^Hill-Event: (\d+)$", re.MULTILINE)
COMMITTER = git.Actor("BF Joust hill", "hill@bfjoust.invalid")


class History:
    def __init__(self, path: Path, branch: str = "main", remote: str = "") -> None:
        self.path = path
        self.branch = branch
        self.remote = remote
        self.repo = self._open()

    def _open(self) -> git.Repo:
        """Open the repository, or start a new one (a broken one is kept aside)."""
        if self.path.exists():
            try:
                repo = git.Repo(self.path)
                if repo.head.is_valid():
                    repo.head.commit.tree  # noqa: B018 - reading it proves the objects are there
                return repo
            except (
                git.InvalidGitRepositoryError,
                git.NoSuchPathError,
                ValueError,
                git.GitCommandError,
                OSError,
            ) as error:
                aside = self.path.with_name(
                    f"{self.path.name}.broken-{dt.datetime.now():%Y%m%d-%H%M%S}"
                )
                log.warning(
                    "hill repository %s is unusable (%s); moved to %s and rebuilt",
                    self.path,
                    error,
                    aside,
                )
                shutil.move(self.path, aside)
        return git.Repo.init(self.path, initial_branch=self.branch)

    def recorded_event(self) -> int | None:
        """The id of the last event committed, or None for a new repository."""
        if not self.repo.head.is_valid():
            return None
        found = TRAILER.findall(str(self.repo.head.commit.message))
        return int(found[-1]) if found else None

    def start_over(self) -> None:
        """Drop the repository (kept aside) to rebuild it from the events."""
        aside = self.path.with_name(f"{self.path.name}.replaced-{dt.datetime.now():%Y%m%d-%H%M%S}")
        shutil.move(self.path, aside)
        self.repo = git.Repo.init(self.path, initial_branch=self.branch)

    def commit(
        self,
        files: Mapping[str, bytes],
        message: str,
        author: str,
        when: dt.datetime,
        event_id: int,
    ) -> str:
        """Make the work tree hold exactly `files` and commit it; returns the sha."""
        work = Path(self.repo.working_tree_dir or self.path)
        stale = [p.name for p in work.iterdir() if p.is_file() and p.name not in files]
        for name in stale:
            (work / name).unlink()
        for name, data in files.items():
            (work / name).write_bytes(data)
        index = self.repo.index
        tracked = {path for (path, _stage) in index.entries}
        removed = [name for name in tracked if name not in files]
        if removed:
            index.remove(removed)
        index.add(sorted(files))
        crash_point("files-written")
        # git's own date format: seconds since the epoch and the zone
        date = f"{int(when.replace(tzinfo=dt.UTC).timestamp())} +0000"
        commit = index.commit(
            f"{message}\n\nHill-Event: {event_id}\n",
            author=git.Actor(author, f"{author}@bfjoust.invalid"),
            committer=COMMITTER,
            author_date=date,
            commit_date=date,
        )
        return commit.hexsha

    def push(self) -> None:
        """Push to the configured remote; a failure is logged, never fatal."""
        if not self.remote:
            return
        try:
            self.repo.git.push(self.remote, f"HEAD:refs/heads/{self.branch}")
        except git.GitCommandError as error:
            log.error("pushing the hill repository to %s failed: %s", self.remote, error)

    def head(self) -> str | None:
        return self.repo.head.commit.hexsha if self.repo.head.is_valid() else None

    def log(self, limit: int | None = None) -> list[git.Commit]:
        if not self.repo.head.is_valid():
            return []
        return list(self.repo.iter_commits(max_count=limit))
