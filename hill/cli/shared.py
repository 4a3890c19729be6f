"""What every `bfjoust` command shares: the options that name a hill
(`--config`, `--data`, before or after the subcommand), reading files and
programs, and opening the hill to write or to read.

Imports here are light; what a command needs beyond the engine it imports
when it runs, so `bfjoust joust` loads the engine and nothing else.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from hill import engine
from hill.errors import CommandError, ConfigError, NotReady, ParseError

T = TypeVar("T")

if TYPE_CHECKING:
    from hill.config import HillSettings, Settings
    from hill.store.queries import HillQueries
    from hill.writers.hill import Hill

# The options every command that runs on a hill takes, before or after its
# subcommand: `bfjoust hill --data D report` is `bfjoust hill report --data D`
# (and `bfjoust --config C bot` is `bfjoust bot --config C`).
SHARED_OPTIONS = {
    "--config": "the TOML configuration (default: built-in defaults)",
    "--data": "the hill's data folder (overrides the configuration)",
}


def add_shared_options(parser: argparse.ArgumentParser) -> None:
    """Give `parser` the shared options.  Unset, they set nothing (SUPPRESS),
    so a subcommand's absent option never hides its parent's given one."""
    for flag, help in SHARED_OPTIONS.items():
        parser.add_argument(flag, default=argparse.SUPPRESS, help=help)
    parser.set_defaults(takes_shared_options=True)


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings of `--config FILE` (the defaults without one), with the
    data folder of `--data DIR` if given."""
    from hill.config import load_settings

    config = getattr(args, "config", None)
    try:
        settings = load_settings(Path(config) if config else None)
    except ConfigError as error:
        raise CommandError(str(error)) from None
    data = getattr(args, "data", None)
    if data:
        hill = dataclasses.replace(settings.hill, data_dir=Path(data))
        settings = dataclasses.replace(settings, hill=hill)
    return settings


def read_file(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise CommandError(f"{path}: cannot read: {error.strerror or error}") from None


def load_program(path: str) -> engine.Program:
    try:
        return engine.compile_program(read_file(path))
    except ParseError as error:
        raise CommandError(error.located(path)) from None


def load_programs(paths: Sequence[str]) -> list[engine.Program]:
    """Compile every file; report every bad one before giving up."""
    programs, problems = [], []
    for path in paths:
        try:
            programs.append(load_program(path))
        except CommandError as error:
            problems.append(str(error))
    if problems:
        raise CommandError("\n".join(problems))
    return programs


def hill_settings(args: argparse.Namespace) -> HillSettings:
    return settings_of(args).hill


def no_hill(data_dir: Path) -> CommandError:
    """The refusal of a command that needs a hill where there is none."""
    return CommandError(
        f"there is no hill at {data_dir}: `bfjoust hill init --data {data_dir}` creates one"
    )


def open_hill(args: argparse.Namespace, *, create: bool = False) -> Hill:
    """The hill's writer (it upgrades the data folder's database and
    repairs its git repository).  Only the commands that bring programs
    (`create`: init, submit, import) may make a new hill; the others refuse
    a folder without one, so a mistyped `--data` creates nothing."""
    from hill.layout import DataFolder
    from hill.writers.hill import Hill

    settings = hill_settings(args)
    if not create and not DataFolder(settings.data_dir).database.is_file():
        raise no_hill(settings.data_dir)
    return Hill(settings)


def read_hill(args: argparse.Namespace, read: Callable[..., T], *more: object) -> T:
    """`read(db, *more)` on the hill's database, opened to read, closed after."""
    queries = open_queries(args)
    try:
        return read(queries.db, *more)
    finally:
        queries.close()


def open_queries(args: argparse.Namespace) -> HillQueries:
    """The hill for reading: no lock, no git.  A folder without a hill is
    refused (nothing is created); a database of an older schema is
    upgraded first (the command line is the hill's admin tool; the web
    report only ever reads)."""
    from hill.store.queries import HillQueries

    settings = hill_settings(args)
    try:
        return HillQueries.open(settings.data_dir, settings.ranking)
    except NotReady as error:
        if not error.upgradable:
            raise
        open_hill(args).close()  # refuses a folder without a hill
        return HillQueries.open(settings.data_dir, settings.ranking)
