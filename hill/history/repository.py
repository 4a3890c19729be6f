"""The hill's git repository: one commit per hill change, so `git log` is
the hill's history.

The database is the truth; the repository is derived from it.  Each commit
carries a `Hill-Event: N` trailer naming the event it records, so after a
crash the missing commits can be made, the commits the database did not get
to note can be found, and a lost or corrupted repository can be rebuilt,
history and all, from the events (hill.recorder does all that).  A commit
is made from the event's own data (author, time, message, files), so a
rebuilt commit has the very sha of the one it replaces.

What the repository holds is always asked of git itself, each question a
fresh `git` process (`git log`, `git rev-parse`), never read from a cached
object: a git helper process killed by a Ctrl-C once made the history look
empty, and the whole of it was committed again on top.  Every git process
runs in a session of its own with SIGINT and SIGTERM blocked, so a Ctrl-C
at the terminal, meant for the bot, never cuts a commit short: the bot
finishes its job and stops.

Only the hill's writer opens the repository, under the hill's lock: any git
lock file it finds was left by a process that was killed, and goes.

git's and the OS's failures leave the history as the project's own
StorageError (hill.errors: the disk full, an I/O error, git failing),
translated once by `storage_errors` at the history's entry points: the
repository's opening and the recorder's `record` and `catch_up`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import git
import structlog

from hill.errors import HistoryUnavailable, as_storage_error
from hill.faults import crash_point
from hill.rules.events import epoch_seconds

log = structlog.get_logger(__name__)

TRAILER = re.compile(r"^Hill-Event: (\d+)$", re.MULTILINE)
COMMITTER = ("BF Joust hill", "hill@bfjoust.invalid")
# no background work after a commit (gc, maintenance) that could hold locks
QUIET_GIT = ("-c", "gc.auto=0", "-c", "maintenance.auto=false")
# where a history that disagreed with the database is kept, never dropped
DIVERGED = "refs/hill/diverged-"
STOPS = {signal.SIGINT, signal.SIGTERM}
# loose objects (about four a commit) that make the history packed again
LOOSE_LIMIT = 100
PACKING = "hill-packing"  # in .git: locked while a repack runs, its errors
# everything in one pack (-a -d), with its bitmap; no dumb-HTTP info (-n)
REPACK = ("repack", "-a", "-d", "-n", "-q", "--write-bitmap-index")


@dataclass(frozen=True)
class Commit:
    """A commit of the branch, and the hill events its trailers name."""

    sha: str
    events: tuple[int, ...]


class HillRepository:
    """The git repository in `path`: opened (repaired, or rebuilt when it
    cannot be) by the hill's writer, which alone commits to it."""

    def __init__(self, path: Path, branch: str = "main", remote: str = "") -> None:
        self.path = path.absolute()  # git runs in it: a relative GIT_DIR would miss
        self.branch = branch
        self.remote = remote
        self._packing: subprocess.Popen[bytes] | None = None
        with storage_errors():
            self._open()

    @property
    def repo(self) -> git.Repo:
        """The repository as GitPython objects, opened afresh on each use."""
        return git.Repo(self.path)

    def _open(self) -> None:
        """Repair the repository, or start a new one (a broken one is kept aside)."""
        if self.path.exists():
            try:
                self._repair()
                return
            except (git.GitCommandError, OSError, ValueError) as error:
                aside = self._aside("broken")
                log.error(
                    f"hill repository {self.path} is unusable ({str(error).strip()}); "
                    f"moved to {aside} and rebuilt from the database"
                )
        # (not through _git: git init would write GIT_WORK_TREE into the config)
        with _stops_held():
            git.Git().execute(
                ["git", "init", "--quiet", f"--initial-branch={self.branch}", str(self.path)],
                start_new_session=True,
            )

    def _repair(self) -> None:
        """The repository as its last commit left it: the lock files of a
        killed git removed, every commit and HEAD's files read (which proves
        they are there), the work tree reset."""
        git_dir = self.path / ".git"
        if not (git_dir / "HEAD").is_file():
            raise ValueError("no .git/HEAD: not a git repository")
        for lock in _lock_files(git_dir):
            log.warning(f"removing {lock}, left by a process that was killed")
            lock.unlink()
        if self.head() is not None:
            self._git("reset", "--hard", "--quiet")
            self.history()
        self._git("clean", "-d", "--force", "--quiet")

    def _aside(self, why: str) -> Path:
        aside = self.path.with_name(f"{self.path.name}.{why}-{dt.datetime.now():%Y%m%d-%H%M%S}")
        shutil.move(self.path, aside)
        return aside

    def head(self) -> str | None:
        """The sha of the branch's last commit, None before the first."""
        status, out = self._ask("rev-parse", "--quiet", "--verify", "HEAD")
        return out.strip() if status == 0 else None

    def history(self) -> list[Commit]:
        """Every commit of the branch, oldest first."""
        if self.head() is None:
            return []
        out = self._git("log", "--reverse", "--format=%H%n%B%x00")
        commits = []
        for record in out.split("\0"):
            sha, _, message = record.strip().partition("\n")
            if sha:
                commits.append(Commit(sha, tuple(map(int, TRAILER.findall(message)))))
        return commits

    def recorded_event(self) -> int | None:
        """The id of the event the last commit records (None: no commit,
        or a last commit that records none)."""
        if self.head() is None:
            return None
        found = TRAILER.findall(self._git("log", "-1", "--format=%B"))
        return int(found[-1]) if found else None

    @property
    def diverged(self) -> Path:
        """The bare repository beside this one where a history set aside is
        kept: never in the served one, whose every object git protocol v2
        hands out by id, listed or not."""
        return self.path.with_name(f"{self.path.name}-diverged.git")

    def keep_and_reset(self, keep: str, to: str | None) -> str:
        """Keep the history up to `keep` under a ref of the diverged
        repository, then move the branch back to `to` (None: before the
        first commit), its files with it, and drop the history set aside from
        this repository; returns the ref."""
        ref = f"{DIVERGED}{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S%fZ}"
        if not (self.diverged / "HEAD").is_file():
            with _stops_held():  # (not through _git, whose GIT_DIR is this repository's)
                git.Git().execute(
                    ["git", "init", "--quiet", "--bare", str(self.diverged)],
                    start_new_session=True,
                )
        self._git("push", "--quiet", str(self.diverged), f"{keep}:{ref}")
        if to is None:
            self._git("update-ref", "-d", f"refs/heads/{self.branch}")
            self._git("read-tree", "--empty")
        else:
            self._git("reset", "--hard", "--quiet", to)
        self._git("clean", "-d", "--force", "--quiet")
        # the commits set aside are now unreachable here (their reflog entries
        # expired): pruned and left out of the pack, so no fetch can name them
        self._git("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
        self._git("prune", "--expire=now")
        self._git(*REPACK)
        return ref

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
        return self._git("rev-parse", "HEAD").strip()

    def push(self) -> None:
        """Push to the configured remote; a failure is logged, never fatal."""
        if not self.remote:
            return
        try:
            self._git("push", "--quiet", self.remote, f"HEAD:refs/heads/{self.branch}")
        except git.GitCommandError as error:
            log.error(f"pushing the hill repository to {self.remote} failed: {error}")

    def pack(self) -> None:
        """Once LOOSE_LIMIT loose objects have gathered, repack the history
        in the background: one pack with a reachability bitmap, which a
        clone is sent as it is (git's pack reuse) instead of every object
        compressed again for each clone.  At a low priority, in a session
        of its own (it may outlive this process); one at a time."""
        if self._packing is not None:
            if self._packing.poll() is None:
                return
            if self._packing.returncode != 0:
                errors = (self.path / ".git" / PACKING).read_text(errors="replace")
                log.warning(f"repacking the hill repository failed: {errors.strip()[-300:]}")
            self._packing = None
        status, counted = self._ask("count-objects")  # "N objects, M kilobytes"
        if status != 0 or int(counted.split()[0]) < LOOSE_LIMIT:
            return
        with open(self.path / ".git" / PACKING, "wb") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # another process's repack is running
            # the repack inherits the locked file (its stderr), locked until it ends
            self._packing = subprocess.Popen(
                ["nice", "-n", "10", "git", *QUIET_GIT, *REPACK],
                cwd=self.path,
                env={**os.environ, "GIT_DIR": str(self.path / ".git")},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=lock,
                start_new_session=True,
            )

    def log(self, limit: int | None = None) -> list[git.Commit]:
        """The last commits as GitPython objects, newest first."""
        if self.head() is None:
            return []
        return list(self.repo.iter_commits(max_count=limit))

    def _git(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        """A git command's output; GitCommandError when it fails."""
        return self._ask(*args, env=env, check=True)[1]

    def _ask(
        self, *args: str, env: Mapping[str, str] | None = None, check: bool = False
    ) -> tuple[int, str]:
        """Run git on this repository alone (never one found in a parent
        folder), in a session of its own; its exit status and output."""
        where = {"GIT_DIR": str(self.path / ".git"), "GIT_WORK_TREE": str(self.path)}
        with _stops_held():
            status, out, _ = git.Git(self.path).execute(
                ["git", *QUIET_GIT, *args],
                env={**where, **(env or {})},
                with_extended_output=True,
                with_exceptions=check,
                stdout_as_string=False,
                start_new_session=True,
            )
        return status, bytes(out).decode(errors="replace")


@contextlib.contextmanager
def storage_errors() -> Iterator[None]:
    """git's and the OS's failures within as StorageError (hill.errors):
    DiskFull, DiskFailing, or else HistoryUnavailable, the original its cause."""
    try:
        yield
    except (git.GitCommandError, OSError) as error:
        raise as_storage_error(error) or HistoryUnavailable(_complaint(error)) from error


def _complaint(error: git.GitCommandError | OSError) -> str:
    """What git (its stderr) or the OS said."""
    if isinstance(error, git.GitCommandError):
        said = str(error.stderr).strip().removeprefix("stderr:").strip().strip("'").strip()
        return said or f"exit status {error.status}"
    return str(error)


@contextlib.contextmanager
def _stops_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back from this thread, and from the git it
    starts meanwhile (a child keeps its parent's signal mask).  A Ctrl-C
    sent to the process group in the instant between the fork and git's
    own session would otherwise kill git before it ran; held, it reaches
    the process's main thread instead, once git is done if this is it."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _trailer_lines(trailers: Mapping[str, str] | None) -> str:
    return "".join(f"{key}: {value}\n" for key, value in (trailers or {}).items())


def _identity(author: str, when: dt.datetime) -> dict[str, str]:
    """Who made a commit, and when (naive UTC), as git's environment."""
    # git's own date format: seconds since the epoch and the zone
    date = f"{int(epoch_seconds(when))} +0000"
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
