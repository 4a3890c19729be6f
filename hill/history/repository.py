"""The hill's git repository: one commit per hill change, so `git log` is
the hill's history.

The database is the truth; the repository is derived from it.  Each commit
carries a `Hill-Event: N` trailer naming the event it records, so after a
crash the missing commits can be made, the commits the database did not get
to note can be found, and a lost or corrupted repository can be rebuilt,
history and all, from the events (hill.recorder does all that).

Only the hill's writer opens the repository, under the hill's lock: any git
lock file it finds was left by a process that was killed, and goes.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import git

from hill.faults import crash_point

log = logging.getLogger(__name__)

TRAILER = re.compile(r"^Hill-Event: (\d+)$", re.MULTILINE)
COMMITTER = ("BF Joust hill", "hill@bfjoust.invalid")
# no background work after a commit (gc, maintenance) that could hold locks
QUIET_GIT = ("-c", "gc.auto=0", "-c", "maintenance.auto=false")


class HillRepository:
    """The git repository in `path`: opened (repaired, or rebuilt when it
    cannot be) by the hill's writer, which alone commits to it."""

    def __init__(self, path: Path, branch: str = "main", remote: str = "") -> None:
        self.path = path
        self.branch = branch
        self.remote = remote
        self.repo = self._open()

    def _open(self) -> git.Repo:
        """Open the repository, or start a new one (a broken one is kept aside)."""
        if self.path.exists():
            try:
                return self._repaired(git.Repo(self.path))
            except (
                git.InvalidGitRepositoryError,
                git.NoSuchPathError,
                ValueError,
                git.GitCommandError,
                OSError,
            ) as error:
                aside = self._aside("broken")
                log.warning(
                    "hill repository %s is unusable (%s); moved to %s and rebuilt",
                    self.path,
                    error,
                    aside,
                )
        return git.Repo.init(self.path, initial_branch=self.branch)

    def _repaired(self, repo: git.Repo) -> git.Repo:
        """The repository as its last commit left it: the lock files of a
        killed git removed, the objects of HEAD read, the work tree reset."""
        for lock in _lock_files(Path(repo.git_dir)):
            log.warning("removing %s, left by a process that was killed", lock)
            lock.unlink()
        if repo.head.is_valid():
            repo.head.commit.tree  # noqa: B018 - reading it proves the objects are there
            repo.git.reset("--hard", "--quiet")
        repo.git.clean("-d", "--force", "--quiet")
        return repo

    def _aside(self, why: str) -> Path:
        aside = self.path.with_name(f"{self.path.name}.{why}-{dt.datetime.now():%Y%m%d-%H%M%S}")
        shutil.move(self.path, aside)
        return aside

    def recorded_event(self) -> int | None:
        """The id of the last event committed, or None for a new repository."""
        if not self.repo.head.is_valid():
            return None
        found = TRAILER.findall(str(self.repo.head.commit.message))
        return int(found[-1]) if found else None

    def event_commits(self) -> Iterator[tuple[int, str]]:
        """(event id, commit) of every commit, newest first."""
        if not self.repo.head.is_valid():
            return
        for commit in self.repo.iter_commits():
            for found in TRAILER.findall(str(commit.message)):
                yield int(found), commit.hexsha

    def start_over(self) -> None:
        """Drop the repository (kept aside) to rebuild it from the events."""
        self._aside("replaced")
        self.repo = git.Repo.init(self.path, initial_branch=self.branch)

    def files(self) -> set[str]:
        """The names of the files in the work tree."""
        return {p.name for p in self.path.iterdir() if p.is_file()}

    def commit(
        self,
        write: Mapping[str, bytes],
        delete: Iterable[str],
        message: str,
        author: str,
        when: dt.datetime,
        event_id: int,
        trailers: Mapping[str, str] | None = None,
    ) -> str:
        """Write and delete files in the work tree (paths may name folders)
        and commit all of it, with `trailers` and the event's; returns the
        commit's sha."""
        for name in delete:
            (self.path / name).unlink(missing_ok=True)
        for name, data in write.items():
            (self.path / name).parent.mkdir(parents=True, exist_ok=True)
            (self.path / name).write_bytes(data)
        crash_point("files-written")
        self._git("add", "--all")
        self._git(
            "commit",
            "--quiet",
            "--allow-empty",  # a rescore may change no file: still one commit an event
            "--cleanup=verbatim",
            "--message",
            f"{message}\n\n{_trailer_lines(trailers)}Hill-Event: {event_id}\n",
            env=_identity(author, when),
        )
        return self._git("rev-parse", "HEAD")

    def _git(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        return str(self.repo.git.execute(["git", *QUIET_GIT, *args], env=env))

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


def _trailer_lines(trailers: Mapping[str, str] | None) -> str:
    return "".join(f"{key}: {value}\n" for key, value in (trailers or {}).items())


def _identity(author: str, when: dt.datetime) -> dict[str, str]:
    """Who made a commit, and when (naive UTC), as git's environment."""
    # git's own date format: seconds since the epoch and the zone
    date = f"{int(when.replace(tzinfo=dt.UTC).timestamp())} +0000"
    return {
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": f"{author}@bfjoust.invalid",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": COMMITTER[0],
        "GIT_COMMITTER_EMAIL": COMMITTER[1],
        "GIT_COMMITTER_DATE": date,
    }


def _lock_files(git_dir: Path) -> list[Path]:
    """The lock files in a git directory (its object store aside): the
    index's, HEAD's, the refs' and packed-refs', the config's."""
    locks = []
    for folder, subfolders, files in os.walk(git_dir):
        if Path(folder) == git_dir:
            subfolders[:] = [s for s in subfolders if s != "objects"]
        locks += [Path(folder, f) for f in files if f.endswith(".lock")]
    return locks
