"""`bfjoust hill backup DEST`, `... restore BACKUP`, `... rebuild REPO`: a
running hill's backup, a hill restored from one, and a hill rebuilt from
its public history alone (hill.writers.backup, hill.writers.rebuild)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from hill.cli.shared import hill_settings, no_hill, settings_of
from hill.layout import DataFolder

Add = Callable[[str, object, str], argparse.ArgumentParser]


def command_backup(args: argparse.Namespace) -> None:
    from hill.writers.backup import back_up

    settings = hill_settings(args)
    if not DataFolder(settings.data_dir).database.is_file():
        raise no_hill(settings.data_dir)
    config = Path(args.config) if getattr(args, "config", None) else None
    backup = back_up(settings, config, Path(args.destination))
    copied = backup.database
    print(backup.describe())
    snapshot = ", ended in one snapshot" if copied["one_snapshot"] else ""
    print(
        f"database: {copied['pages']} pages in {copied['steps']} steps "
        f"({copied['restarts']} restarts{snapshot}), {copied['seconds']:.2f} s, "
        f"longest step {copied['longest_step'] * 1000:.1f} ms"
    )


def command_restore(args: argparse.Namespace) -> None:
    from hill.writers.backup import CONFIG, read_backup, restore

    source = Path(args.backup)
    read_backup(source)  # a clear refusal before anything else
    settings = settings_of(args).hill
    if not getattr(args, "config", None) and (source / CONFIG).is_file():
        # the configuration it ran with, into the folder named here
        given = argparse.Namespace(config=str(source / CONFIG), data=str(settings.data_dir))
        settings = settings_of(given).hill
    backup = restore(settings, source)
    print(f"restored {backup.describe()} into {settings.data_dir}")
    if (settings.data_dir / CONFIG).is_file():
        print(
            f"its configuration is {settings.data_dir / CONFIG}: run the hill with "
            f"--config {settings.data_dir / CONFIG} --data {settings.data_dir}"
        )


def command_rebuild(args: argparse.Namespace) -> None:
    from hill.writers.rebuild import rebuild

    settings = hill_settings(args)
    rebuilt = rebuild(settings, args.repository, jobs=args.jobs, quiet=args.quiet)
    print(rebuilt.describe())


def add_operation_commands(add: Add) -> None:
    """The operator's commands, in `bfjoust hill`'s subcommands."""
    backup = add("backup", command_backup, "a consistent copy of a running hill into DEST")
    backup.add_argument("destination", metavar="DEST", help="a new folder")
    restore = add("restore", command_restore, "a new data folder (--data) from a backup")
    restore.add_argument("backup", metavar="BACKUP", help="a folder `hill backup` made")
    rebuild = add("rebuild", command_rebuild, "a new data folder (--data) from a hill's history")
    rebuild.add_argument("repository", metavar="REPO", help="a path or a clone URL")
    rebuild.add_argument("--jobs", type=int, help="threads for the jousts (default: every core)")
    rebuild.add_argument("--quiet", action="store_true", help="no progress bar")
