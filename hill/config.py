"""Configuration: one TOML file, validated into typed, frozen settings.

Every key has a default (see config.example.toml); unknown keys and sections
are errors, and every error names the file and the key.  Relative paths are
resolved against the folder of the configuration file.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hill.errors import ConfigError
from hill.rules.scoring import METHODS as RANKING_METHODS

CHANNEL = re.compile(r"[#&][^\s,\x07]{1,49}")
NICK = re.compile(r"[A-Za-z\[\]\\`_^{|}][A-Za-z0-9\[\]\\`_^{|}-]{0,29}")


@dataclass(frozen=True)
class HillSettings:
    """[hill]: the hill itself and where its data lives."""

    size: int = 47  # programs the hill holds
    ranking: str = "markov"  # the scoring method that ranks (see docs/scoring.md)
    data_dir: Path = Path("var")  # hill.sqlite3 and the git repository hill-repo/
    max_program_bytes: int = 1_048_576  # larger programs are refused
    git_remote: str = ""  # push the hill repository here after every change
    git_branch: str = "main"
    test_page_hours: int = 24  # how long a `-test` trial's page is kept


@dataclass(frozen=True)
class IrcSettings:
    """[irc]: the bot's network, identity, commands and limits."""

    server: str = "127.0.0.1"
    port: int = 6667
    tls: bool = False
    tls_verify: bool = True
    nick: str = "bfjoust"
    username: str = "bfjoust"
    realname: str = "BF Joust hill"
    channels: tuple[str, ...] = ("#bfjoust",)
    summary_channel: str = ""  # hill changes are announced here too
    command: str = "!bfjoust"  # the command prefix
    sasl_username: str = ""  # SASL PLAIN login when set
    sasl_password: str = ""
    admins: tuple[str, ...] = ()  # accounts (or nicks) allowed admin commands
    admin_secret: str = ""  # without accounts: what an admin proves (bot/admins.py)
    # "auto": the network has accounts when the server offers their IRCv3
    # capabilities; "none": it has none whatever it offers (a server without services)
    accounts: str = "auto"
    rate_limit_per_user: int = 3  # submissions per window per user
    rate_limit_global: int = 20  # submissions per window in all
    rate_window_seconds: int = 60
    command_burst: int = 10  # commands of any kind from one connection at once...
    commands_per_minute: int = 60  # ...and then; more are ignored without an answer
    queue_size: int = 10  # jobs waiting; more are answered "busy"
    upload_link_seconds: int = 600  # how long an upload link (!bfjoust-upload) works
    fetch_max_bytes: int = 1_048_576  # programs given by URL
    fetch_timeout_seconds: float = 10.0
    fetch_allow_private: bool = False  # allow URLs on private/loopback addresses
    messages_per_second: float = 1.0  # the penalty the server forgives a second (bot.penalty)
    burst: int = 4  # the most penalty the bot may owe at once (below the server's threshold)


@dataclass(frozen=True)
class WebSettings:
    """[web]: where the web report is served, and the URL players are given."""

    enabled: bool = True
    bind: str = "127.0.0.1"
    port: int = 8080
    public_url: str = ""  # the URL players are given; default http://bind:port/ (pages:
    # the address the connection came to, never its Host header)
    trace_workers: int = 2  # battles traced at once for the viewer
    trace_queue: int = 16  # battles waiting to be traced; more are answered 503
    trace_cache_mb: int = 32  # traced battles kept (compressed), in MB
    own_process: bool = True  # the bot serves the web from a child process of its own
    max_connections: int = 500  # open at once (and never past the descriptors, less a reserve)
    idle_seconds: float = 15.0  # a connection without a whole request for this long is closed
    page_workers: int = 2  # pages built at once (each in a thread)
    page_queue: int = 32  # pages waiting to be built; more are answered 503
    page_cache_mb: int = 64  # built pages kept (compressed), in MB
    # /healthz: unhealthy while a request has been open longer (hill.web.operations.health)
    stuck_request_seconds: float = 300.0

    @property
    def url(self) -> str:
        if self.public_url:
            return self.public_url if self.public_url.endswith("/") else self.public_url + "/"
        return f"http://{self.bind}:{self.port}/"


@dataclass(frozen=True)
class LadderSettings:
    """[ladder]: the all-time ladder, played by the bot while the hill is idle."""

    enabled: bool = True
    jousts_per_hour: int = 10_000  # at most this many of its jousts an hour


@dataclass(frozen=True)
class ClusterSettings:
    """[cluster]: where tournaments play their jousts (default: every local core)."""

    scheduler: str = ""  # a Dask scheduler's address, tcp://HOST:PORT


@dataclass(frozen=True)
class Settings:
    """The whole configuration file, a section each."""

    hill: HillSettings = field(default_factory=HillSettings)
    irc: IrcSettings = field(default_factory=IrcSettings)
    web: WebSettings = field(default_factory=WebSettings)
    ladder: LadderSettings = field(default_factory=LadderSettings)
    cluster: ClusterSettings = field(default_factory=ClusterSettings)


# value checks beyond the type: (predicate, what it must be)
_RULES: dict[tuple[str, str], tuple[Any, str]] = {
    ("hill", "size"): (lambda v: 2 <= v <= 1000, "an integer from 2 to 1000"),
    ("hill", "ranking"): (lambda v: v in RANKING_METHODS, "one of " + ", ".join(RANKING_METHODS)),
    ("hill", "max_program_bytes"): (lambda v: 1 <= v <= 16 << 20, "from 1 to 16777216"),
    ("hill", "git_branch"): (lambda v: re.fullmatch(r"[\w./-]+", v), "a branch name"),
    ("hill", "test_page_hours"): (lambda v: 1 <= v <= 24 * 90, "from 1 to 2160"),
    ("irc", "port"): (lambda v: 1 <= v <= 65535, "a port from 1 to 65535"),
    ("irc", "nick"): (lambda v: NICK.fullmatch(v), "a valid IRC nick"),
    ("irc", "channels"): (lambda v: all(CHANNEL.fullmatch(c) for c in v), "channel names (#name)"),
    ("irc", "accounts"): (lambda v: v in ("auto", "none"), "auto or none"),
    ("irc", "summary_channel"): (lambda v: not v or CHANNEL.fullmatch(v), "a channel name"),
    ("irc", "command"): (lambda v: v and " " not in v, "a prefix without spaces"),
    ("irc", "rate_limit_per_user"): (lambda v: v >= 1, "at least 1"),
    ("irc", "rate_limit_global"): (lambda v: v >= 1, "at least 1"),
    ("irc", "rate_window_seconds"): (lambda v: v >= 1, "at least 1"),
    ("irc", "command_burst"): (lambda v: v >= 1, "at least 1"),
    ("irc", "commands_per_minute"): (lambda v: v >= 1, "at least 1"),
    ("irc", "queue_size"): (lambda v: 1 <= v <= 1000, "from 1 to 1000"),
    ("irc", "upload_link_seconds"): (lambda v: 1 <= v <= 86400, "from 1 to 86400"),
    ("irc", "fetch_max_bytes"): (lambda v: v >= 1, "at least 1"),
    ("irc", "fetch_timeout_seconds"): (lambda v: v > 0, "more than 0"),
    ("irc", "messages_per_second"): (lambda v: v > 0, "more than 0"),
    ("irc", "burst"): (lambda v: v >= 1, "at least 1"),
    ("web", "port"): (lambda v: 1 <= v <= 65535, "a port from 1 to 65535"),
    ("web", "trace_workers"): (lambda v: 1 <= v <= 64, "from 1 to 64"),
    ("web", "trace_queue"): (lambda v: 0 <= v <= 10_000, "from 0 to 10000"),
    ("web", "trace_cache_mb"): (lambda v: 1 <= v <= 4096, "from 1 to 4096"),
    ("web", "max_connections"): (lambda v: 8 <= v <= 100_000, "from 8 to 100000"),
    ("web", "idle_seconds"): (lambda v: 1 <= v <= 3600, "from 1 to 3600"),
    ("web", "page_workers"): (lambda v: 1 <= v <= 64, "from 1 to 64"),
    ("web", "page_queue"): (lambda v: 0 <= v <= 10_000, "from 0 to 10000"),
    ("web", "page_cache_mb"): (lambda v: 1 <= v <= 4096, "from 1 to 4096"),
    ("ladder", "jousts_per_hour"): (lambda v: 1 <= v <= 10_000_000, "from 1 to 10000000"),
    ("cluster", "scheduler"): (
        lambda v: not v or re.fullmatch(r"(tcp|tls)://[\w.\-\[\]:]+:\d{1,5}", v),
        "empty (local cores) or a Dask scheduler address, tcp://HOST:PORT",
    ),
}

_SECTIONS = {
    "hill": HillSettings,
    "irc": IrcSettings,
    "web": WebSettings,
    "ladder": LadderSettings,
    "cluster": ClusterSettings,
}


def _convert(value: Any, kind: Any, where: str) -> Any:
    """Check a TOML value against a field's type; returns it converted."""
    kind = {"int": int, "float": float, "str": str, "bool": bool, "Path": Path}.get(kind, kind)
    if kind == "tuple[str, ...]":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: must be a list of strings, got {value!r}")
        return tuple(value)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    expected = str if kind is Path else kind
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
        raise ConfigError(f"{where}: must be {names[expected]}, got {value!r}")
    return Path(value) if kind is Path else value


def _section(name: str, data: Any, source: str, base: Path | None) -> Any:
    cls = _SECTIONS[name]
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: [{name}] must be a table")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values = {}
    for key, value in data.items():
        where = f"{source}: [{name}] {key}"
        if key not in fields:
            close = difflib.get_close_matches(key, fields, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            raise ConfigError(f"{where}: unknown key{hint}")
        value = _convert(value, fields[key].type, where)
        rule = _RULES.get((name, key))
        if rule and not rule[0](value):
            raise ConfigError(f"{where}: must be {rule[1]}, got {value!r}")
        if isinstance(value, Path) and base is not None and not value.is_absolute():
            value = base / value
        values[key] = value
    return cls(**values)


def parse_settings(
    data: dict[str, Any], source: str = "<config>", base: Path | None = None
) -> Settings:
    for name in data:
        if name not in _SECTIONS:
            raise ConfigError(f"{source}: unknown section [{name}]")
    settings = Settings(
        **{name: _section(name, data[name], source, base) for name in _SECTIONS if name in data}
    )
    irc = settings.irc
    if bool(irc.sasl_username) != bool(irc.sasl_password):
        raise ConfigError(f"{source}: [irc] sasl_username and sasl_password go together")
    return settings


def load_settings(path: Path | None) -> Settings:
    """Read a configuration file (None: the defaults)."""
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: {error}") from None
    return parse_settings(data, str(path), path.resolve().parent)
