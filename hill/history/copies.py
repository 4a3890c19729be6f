"""Copies of the hill's history: a git bundle of what the hill serves, at a
given hill event, taken beside a running writer; and a repository made
again from a bundle or a clone.

Reading a live repository needs no lock: refs are read atomically and
objects never change.  The branch is pinned at the commit of the event the
database copy holds (the writer may have committed later ones meanwhile)
in a scratch repository that borrows the live one's objects (git's
alternates), so the live repository is never written.  The served refs are
every ref outside `refs/hill/` (the writer's own, hidden from clients).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from hill.errors import CopyError
from hill.history.repository import QUIET_GIT, TRAILER

HIDDEN = "refs/hill/"
TRIES = 3  # a background repack may drop a pack while a bundle reads it


def git(repo: Path | None, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run git on the repository (a .git folder or a bare one) `repo`."""
    where = {"GIT_DIR": str(repo)} if repo is not None else {}
    done = subprocess.run(
        ["git", *QUIET_GIT, *args],
        env={**os.environ, **where, **(env or {})},
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        raise CopyError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode(errors="replace")


def served_refs(git_dir: Path) -> dict[str, str]:
    """Every ref a clone of the hill gets: name to sha."""
    refs = {}
    for line in git(git_dir, "for-each-ref", "--format=%(refname) %(objectname)").splitlines():
        name, sha = line.split()
        if not name.startswith(HIDDEN):
            refs[name] = sha
    return refs


def commit_of_event(git_dir: Path, branch: str, last_event: int | None) -> str | None:
    """The last commit of the branch that records no event after `last_event`
    (None: before the first commit).  The commits record events in order."""
    if last_event is None:
        return None
    try:
        log = git(git_dir, "log", "--reverse", "--format=%H%n%B%x00", f"refs/heads/{branch}")
    except CopyError:
        return None  # no commit yet
    found = None
    for record in log.split("\0"):
        sha, _, message = record.strip().partition("\n")
        if not sha:
            continue
        if any(int(event) > last_event for event in TRAILER.findall(message)):
            break
        found = sha
    return found


def bundle(git_dir: Path, branch: str, tip: str | None, target: Path, scratch: Path) -> int:
    """Write a bundle of the served refs to `target`, the branch at `tip`
    (None: left out), from a scratch repository `scratch` made for it;
    returns how many refs it holds (0: no bundle written, nothing to hold)."""
    refs = served_refs(git_dir) if git_dir.is_dir() else {}  # none: the writer makes it again
    refs.pop(f"refs/heads/{branch}", None)
    if tip is not None:
        refs[f"refs/heads/{branch}"] = tip
    if not refs:
        return 0
    git(None, "init", "--quiet", "--bare", str(scratch))
    alternates = scratch / "objects" / "info" / "alternates"
    alternates.write_text(f"{(git_dir / 'objects').absolute()}\n")
    for name, sha in refs.items():
        git(scratch, "update-ref", name, sha)
    for attempt in range(TRIES):
        try:
            git(scratch, "bundle", "create", "--quiet", str(target), "--all")
            break
        except CopyError:
            target.unlink(missing_ok=True)
            if attempt == TRIES - 1:
                raise
    git(scratch, "bundle", "verify", "--quiet", str(target))
    return len(refs)


def bundle_refs(path: Path) -> dict[str, str]:
    """The refs a bundle holds: name to sha."""
    refs = {}
    for line in git(None, "bundle", "list-heads", str(path)).splitlines():
        sha, name = line.split()
        refs[name] = sha
    return refs


def fill(work_tree: Path, branch: str, source: str, refspec: str) -> None:
    """A new repository in `work_tree` holding `source`'s refs (a bundle or
    a repository: a path or a URL), its branch checked out."""
    git(None, "init", "--quiet", f"--initial-branch={branch}", str(work_tree))
    git_dir = work_tree / ".git"
    git(git_dir, "fetch", "--quiet", "--no-tags", "--update-head-ok", source, refspec)
    if _has(git_dir, branch):
        env = {"GIT_WORK_TREE": str(work_tree)}
        git(git_dir, "reset", "--hard", "--quiet", f"refs/heads/{branch}", env=env)


def _has(git_dir: Path, branch: str) -> bool:
    try:
        git(git_dir, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    except CopyError:
        return False
    return True


def from_bundle(path: Path, work_tree: Path, branch: str) -> None:
    """The repository of a backup: every ref of its bundle."""
    fill(work_tree, branch, str(path.absolute()), "refs/*:refs/*")


def from_clone(source: str, work_tree: Path, branch: str) -> None:
    """The repository of a public history (a path or a clone URL): its
    branches and tags, as a clone has them."""
    fill(work_tree, branch, source, "refs/heads/*:refs/heads/*")
