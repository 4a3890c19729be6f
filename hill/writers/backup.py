"""A running hill's backup, and a hill restored from one.

A backup is a folder: `hill.sqlite3` (the database through SQLite's online
backup, hill.store.snapshot), `hill.bundle` (a git bundle of every ref the
hill serves, its branch at the commit of the last change that copy holds,
hill.history.copies), `config.toml` (the configuration it ran with, when
one was given) and `backup.json` (what it holds).  It takes neither the
hill's lock nor git's: the bot goes on meanwhile.  It is made under a
temporary name beside its destination (`.NAME.partial-PID`) and renamed
at the end, so a backup killed mid-way leaves no folder of that name; the
next backup to that name removes the partial ones whose process is gone.

A restore makes a new data folder from a backup (it refuses a folder that
holds anything): the database, the history from the bundle, the
configuration beside them; then the hill's writer opens it, which commits
whatever changes the database holds beyond the bundle's branch (git runs a
moment behind the database), each with the very sha the original made.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hill.config import HillSettings
from hill.errors import HillError
from hill.faults import crash_point
from hill.history import copies
from hill.layout import DataFolder
from hill.store import snapshot

DATABASE = "hill.sqlite3"
BUNDLE = "hill.bundle"
CONFIG = "config.toml"
MANIFEST = "backup.json"
FORMAT = 1


@dataclass(frozen=True)
class Backup:
    """What a backup holds: its last hill change and that change's commit
    (None before the first), its refs, when it was taken, and how the
    database copy went."""

    path: Path
    event: int | None
    commit: str | None
    refs: dict[str, str]
    taken: str
    database: dict[str, Any]

    def describe(self) -> str:
        at = f"event {self.event}, commit {self.commit}" if self.event else "an empty hill"
        return f"{self.path}: the hill at {at}, {len(self.refs)} refs, taken {self.taken}"


def back_up(settings: HillSettings, config: Path | None, destination: Path) -> Backup:
    """Back the hill of `settings` up into the new folder `destination`."""
    folder = DataFolder(settings.data_dir)
    if destination.exists():
        raise HillError(f"{destination} exists: a backup goes to a new name")
    _remove_partials(destination)
    with new_data_folder(destination, "partial") as partial:
        copied = snapshot.copy_database(folder.database, partial / DATABASE)
        crash_point("backup-database-copied")
        moment = snapshot.moment(partial / DATABASE)
        git_dir = folder.repository / ".git"
        tip = copies.commit_of_event(git_dir, settings.git_branch, moment.event)
        scratch = partial / "scratch.git"
        refs_count = copies.bundle(git_dir, settings.git_branch, tip, partial / BUNDLE, scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        refs = copies.bundle_refs(partial / BUNDLE) if refs_count else {}
        crash_point("backup-bundled")
        if config is not None:
            shutil.copyfile(config, partial / CONFIG)
        backup = Backup(
            destination,
            moment.event,
            tip,
            refs,
            dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            dataclasses.asdict(copied),
        )
        manifest = {
            "format": FORMAT,
            "branch": settings.git_branch,
            **{k: v for k, v in dataclasses.asdict(backup).items() if k != "path"},
        }
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        crash_point("backup-written")  # whole, not yet synced and renamed
    return backup


def read_backup(path: Path) -> tuple[Backup, str]:
    """A backup folder's manifest, and the branch it names; HillError if
    it is none."""
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        raise HillError(f"{path} is not a hill backup: {error}") from None
    if manifest.get("format") != FORMAT or not (path / DATABASE).is_file():
        raise HillError(f"{path} is not a hill backup of this version")
    fields = {f.name for f in dataclasses.fields(Backup)} - {"path"}
    backup = Backup(path, **{k: manifest[k] for k in fields})
    return backup, manifest["branch"]


def restore(settings: HillSettings, source: Path) -> Backup:
    """Make the data folder of `settings` (missing or empty) from the backup
    `source`, then open its writer to commit what git lacked."""
    from hill.writers.hill import Hill  # which imports much

    backup, branch = read_backup(source)
    with new_data_folder(settings.data_dir, "restored") as partial:
        folder = DataFolder(partial)
        shutil.copyfile(source / DATABASE, folder.database)
        if (source / BUNDLE).is_file():
            copies.from_bundle(source / BUNDLE, folder.repository, branch)
        if (source / CONFIG).is_file():
            shutil.copyfile(source / CONFIG, partial / CONFIG)
    Hill(dataclasses.replace(settings, git_branch=branch)).close()  # git caught up
    return backup


@contextlib.contextmanager
def new_data_folder(target: Path, why: str) -> Iterator[Path]:
    """A folder (a data folder, a backup) made whole under a temporary name
    beside `target` (missing or empty: HillError otherwise), synced, then
    renamed to it; removed if its making fails."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise HillError(f"{target} is not empty: a hill is {why} into a new data folder")
    partial = target.with_name(f".{target.name}.{why}-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        yield partial
        _sync(partial)
        if target.exists():
            target.rmdir()
        partial.rename(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def _remove_partials(destination: Path) -> None:
    """Remove the partial backups to `destination` whose process is gone."""
    for partial in destination.parent.glob(f".{destination.name}.partial-*"):
        pid = partial.name.rpartition("-")[2]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sync(folder: Path) -> None:
    """The folder's files and the folder itself on disk, before its rename."""
    for path in [*folder.rglob("*"), folder]:
        if path.is_file() or path == folder:
            descriptor = os.open(path, os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
