"""`!bfjoust NAME CODE|URL` and `!bfjoust-test NAME CODE|URL`: challenge the
hill with a program, or see where it would rank.

The program is checked before it is recorded (as the upload form does):
a malformed one, or one with no instruction at all, is refused at once and
costs nothing.  Typos get a hint: `!bfjoust rank allegro` holds no
instruction and was meant as `!bfjoust-rank allegro`; `!bfjoust NAME` alone
is what a client sends first when it cuts a pasted program into lines."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command, did_you_mean
from bot.fetch import is_url
from hill.errors import FetchError, HillError, NoInstruction, QueueFull, Usage
from hill.rules import names
from hill.rules.programs import check_program
from hill.rules.requests import RequestKind


@command("", "NAME CODE|URL", vouched=True)
async def challenge(bot: Context, message: Incoming, args: str) -> None:
    await submit(bot, message, args, RequestKind.CHALLENGE)


@command("-test", "NAME CODE|URL", vouched=True)
async def test(bot: Context, message: Incoming, args: str) -> None:
    await submit(bot, message, args, RequestKind.TEST)


async def submit(bot: Context, message: Incoming, args: str, kind: RequestKind) -> None:
    name, _, code = args.partition(" ")
    code = code.strip()
    if not name or not (code or names.NAME.fullmatch(name)):
        raise Usage("a name and the program, or a URL of it")
    if not code:
        raise HillError(missing_program(bot.irc.command, name, kind))
    sender = message.sender
    owner = await bot.owner(sender, name, test_only=kind == RequestKind.TEST)
    bot.count(sender, owner)
    try:
        source = await bot.source(code)
        # on the request book's thread, in turn: a check on a thread of its
        # own could end after a later player's and let it overtake
        await bot.runner.in_turn(check_program, source, bot.settings.hill.max_program_bytes)
        await bot.ask(message, kind, owner, name, source)
    except NoInstruction as error:
        bot.limiter.refund(sender.key)
        hint = "" if is_url(code) else did_you_mean(bot.irc.command, name, code)
        raise HillError(f"{error}; {hint}" if hint else str(error)) from None
    except (FetchError, QueueFull, HillError):
        bot.limiter.refund(sender.key)  # no program, or no room: it does not count
        raise


def missing_program(prefix: str, name: str, kind: RequestKind) -> str:
    """What to say to `!bfjoust NAME` with no program after the name."""
    hint = did_you_mean(prefix, name)
    if hint:  # `!bfjoust help`
        return f"no program after the name {name}; {hint}"
    test = " test" if kind == RequestKind.TEST else ""
    return (
        f"no program after the name {name}: a program goes on the same line, "
        f"or, if it is too long for one line (a client cuts a pasted one into "
        f"several), send it with {prefix}-upload {name}{test} (a link to a form) "
        f"or give its URL"
    )
