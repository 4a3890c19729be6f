"""`bfjoust bot` and `bfjoust web`: the long-running servers (the IRC stack
and the web report are loaded only by them)."""

from __future__ import annotations

import argparse

from hill.cli.shared import add_shared_options, settings_of
from hill.errors import CommandError, HillError, IrcdError


def command_bot(args: argparse.Namespace) -> None:
    from bot.app import run_bot  # the IRC stack is only loaded when needed

    try:
        run_bot(settings_of(args), local_ircd=args.local_ircd)
    except IrcdError as error:
        raise CommandError(f"bfjoust bot: {error}") from None
    except OSError as error:  # e.g. the web report's port is taken
        raise CommandError(f"bfjoust bot: {error}") from None


def command_web(args: argparse.Namespace) -> None:
    from hill.web.server import run_web

    try:
        run_web(settings_of(args))
    except (OSError, HillError) as error:
        raise CommandError(f"bfjoust web: {error}") from None


def add_bot_arguments(bot: argparse.ArgumentParser) -> None:
    add_shared_options(bot)
    bot.add_argument(
        "--local-ircd",
        action="store_true",
        help="start a local IRC server when the configured one is on loopback and not running",
    )
    bot.set_defaults(run=command_bot)


def add_web_arguments(web: argparse.ArgumentParser) -> None:
    add_shared_options(web)
    web.set_defaults(run=command_web)
