"""`!bfjoust-admin SECRET`, in private: on a network without accounts, the
operator proves `[irc] admin_secret` and is the hill's admin on that
connection (bot/admins.py)."""

from __future__ import annotations

import structlog

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import HillError, Usage

log = structlog.get_logger(__name__)


@command("-admin", "SECRET (in private)", listed=False)
async def admin_login(bot: Context, message: Incoming, args: str) -> None:
    sender = message.sender
    if message.channel:
        log.warning("the admin secret was said in a channel", nick=sender.nick)
        raise HillError(
            "never say the admin secret in a channel (everyone there saw it: the operator "
            "should change [irc] admin_secret); send it to me in private"
        )
    if sender.accounts:
        raise HillError("this network has accounts: the hill's admins are [irc] admins' accounts")
    if not args or " " in args:
        raise Usage("the secret, one word")
    answer = bot.admin_logins.try_secret(sender.nick, sender.userhost, args)
    log.info("admin login", nick=sender.nick, userhost=sender.userhost, answer=answer[:40])
    bot.reply(message, answer)
