"""The data folder's layout, stated once: where each part of a hill lives
inside `[hill] data_dir` (default `var/` beside the configuration).

    var/
      hill.sqlite3   the truth: programs, jousts, events, requests, the ladder, tournaments
      hill.lock      the writers' lock (hill.writers.lock), across processes
      hill-repo/     the git repository of the hill's history (hill.history)
      bot-status.json  the running bot's health and metrics, every 5 s (bot.status)
      hill-repo-diverged.git/  histories set aside (disagreeing with the database), never served
      ircd/          the local IRC server of `make run`, when the bot starts one
      logs/          bot.log, web.log and access.log (the web's requests), rotated (hill.logs)
      irc-heard.json the last moment the bot was known to listen (bot.absence)
      admin-secret   the admin's secret on `make run`'s server, unless [irc] admin_secret says one
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATABASE = "hill.sqlite3"
LOCK = "hill.lock"
REPOSITORY = "hill-repo"
IRCD = "ircd"
BOT_STATUS = "bot-status.json"
ADMIN_SECRET = "admin-secret"
HEARD = "irc-heard.json"


@dataclass(frozen=True)
class DataFolder:
    """The paths of one hill's data folder."""

    root: Path

    @property
    def database(self) -> Path:
        return self.root / DATABASE

    @property
    def lock(self) -> Path:
        return self.root / LOCK

    @property
    def repository(self) -> Path:
        return self.root / REPOSITORY

    @property
    def ircd(self) -> Path:
        return self.root / IRCD

    @property
    def bot_status(self) -> Path:
        return self.root / BOT_STATUS

    @property
    def admin_secret(self) -> Path:
        return self.root / ADMIN_SECRET

    @property
    def heard(self) -> Path:
        return self.root / HEARD
