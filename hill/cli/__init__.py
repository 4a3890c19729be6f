"""The `bfjoust` command line (also `python -m hill`).

- `engine`: joust, matrix, check, trace (the engine on files);
- `hill`: run the hill (`bfjoust hill ...`);
- `ladder`: rank files from a fraction of their jousts, and the hill's
  all-time ladder;
- `tournaments`, `tournament_files`: the hill's tournaments, and those over files;
- `contests`: the hill's contests;
- `serve`: `bfjoust bot` and `bfjoust web`;
- `shared`: what every command shares (the hill options, reading files).

A command's module is imported only when that command runs (LazyParser), so
`bfjoust joust` loads the engine alone.

May import: every package of hill/ (hill.engine, hill.rules, hill.ladder,
hill.tournaments, hill.play, hill.store, hill.writers, hill.scheduler,
hill.web), bot (for `bfjoust bot`), numpy, tqdm (progress bars).
"""

from __future__ import annotations

import argparse
import importlib
import re
import signal
import sys
from collections.abc import Sequence
from typing import Any

from hill.cli.engine import add_engine_commands
from hill.cli.shared import SHARED_OPTIONS, add_shared_options
from hill.errors import CommandError, HillError, StorageError, TournamentError


class LazyParser(argparse.ArgumentParser):
    """A subcommand's parser whose arguments are added when it is first used
    (parsed, or its help shown), by `build` ("module:function"): the
    command's module is imported then, and only then."""

    def __init__(self, *args: Any, build: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._build = build

    def _built(self) -> None:
        if self._build is not None:
            module, _, function = self._build.partition(":")
            self._build = None
            getattr(importlib.import_module(module), function)(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._built()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._built()
        return super().format_help()

    def format_usage(self) -> str:
        self._built()
        return super().format_usage()


# the commands beyond the engine's: (name, help, where its arguments are added)
LAZY = (
    ("hill", "run the hill: submit, report, history ...", "hill.cli.hill:add_arguments"),
    ("ladder", "rank programs from a fraction of their jousts", "hill.cli.ladder:add_arguments"),
    (
        "tournament",
        "play tournaments (they never change the hill)",
        "hill.cli.tournaments:add_arguments",
    ),
    (
        "contest",
        "the hill's contests: hidden entries, a deadline",
        "hill.cli.contests:add_arguments",
    ),
    ("bot", "run the IRC bot (and the web report)", "hill.cli.serve:add_bot_arguments"),
    ("web", "serve the web report alone (no IRC)", "hill.cli.serve:add_web_arguments"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bfjoust", description="BF Joust engine and hill tools.")
    add_shared_options(parser)
    parser.set_defaults(takes_shared_options=False)  # until a command that takes them
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=LazyParser
    )
    add_engine_commands(commands)
    for name, help, build in LAZY:
        commands.add_parser(name, help=help, build=build)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = sys.argv[1:] if argv is None else list(argv)
    # Python 3.11's argparse reads the '--' of `--owner=--` as the end of the
    # options and leaves the option an empty list: say so instead of failing later
    for word in words:
        if re.fullmatch(r"--[A-Za-z][\w-]*=--", word):
            parser.error(f"{word.removesuffix('=--')} got no value ('--' ends the options)")
    args = parser.parse_args(words)
    given = [flag for flag in SHARED_OPTIONS if hasattr(args, flag.lstrip("-"))]
    if given and not args.takes_shared_options:
        parser.error(f"{args.command} takes no {' or '.join(given)}")
    try:
        args.run(args)
    except (CommandError, HillError, TournamentError, StorageError) as error:  # said in a line
        print(error, file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `bfjoust matrix ... | head` is fine
        sys.stderr.close()
    except KeyboardInterrupt:  # Ctrl-C: what was stored stays stored (each command says what)
        print("stopped (Ctrl-C)", file=sys.stderr)
        return 128 + signal.SIGINT
    return 0


if __name__ == "__main__":
    sys.exit(main())
