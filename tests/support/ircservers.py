"""Real IRC servers for the bot's tests, on free loopback ports: ngircd
(through bot.ircd, as `--local-ircd` starts it), InspIRCd 3, alone or
linked to Anope 2.0 services for accounts (NickServ, SASL, account-tag),
and ircd-hybrid 8 (the family of the server Libera.Chat runs)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.ircd import Ngircd, free_port, listening, start_ngircd, stop_process

INSPIRCD = "/usr/sbin/inspircd"
ANOPE = "/usr/sbin/anope"
ANOPE_CONF = Path("/etc/anope")
SERVICES = "services.test.local"
LINK_PASSWORD = "linkpass"

# The bot's port has a strict flood limit (no fake lag: a client over
# `threshold` seconds of command penalty is disconnected for "Excess Flood");
# the test players' port is lenient, so that they can flood the bot.
INSPIRCD_CONF = """\
<server name="irc.test.local" description="test server" network="TestNet" id="01A">
<admin name="test" nick="test" email="test@localhost">
<bind address="127.0.0.1" port="{port}" type="clients">
<bind address="127.0.0.1" port="{player_port}" type="clients">
<bind address="127.0.0.1" port="{link_port}" type="servers">
{tls}
<connect name="bot" allow="*" port="{port}{tls_port}" timeout="60" pingfreq="120"
         threshold="{threshold}" commandrate="{commandrate}" fakelag="no"
         hardsendq="1048576" softsendq="65536" recvq="8192" localmax="1000" globalmax="1000"
         maxchans="50" resolvehostnames="no" useident="no">
<connect name="players" allow="*" port="{player_port}" timeout="60" pingfreq="120"
         threshold="5000" commandrate="100000" fakelag="no"
         hardsendq="1048576" softsendq="65536" recvq="65536" localmax="1000" globalmax="1000"
         maxchans="50" resolvehostnames="no" useident="no">
<pid file="{directory}/inspircd.pid">
<log method="file" type="* -USERINPUT -USEROUTPUT" level="default"
     target="{directory}/inspircd.log">
<dns timeout="1">
<options>
<security>
<performance>
<module name="spanningtree">
{tls_module}
<module name="hidechans">
<module name="cap">
{services_conf}"""

# What services need; without them the network has no accounts at all.
SERVICES_CONF = """\
<module name="ircv3">
<module name="services_account">
<module name="sasl">
<sasl target="{services}">
{account_tag}
<module name="svshold">
<module name="chghost">
<module name="chgident">
<link name="{services}" ipaddr="127.0.0.1" port="{link_port}"
      sendpass="{password}" recvpass="{password}">
<uline server="{services}" silent="yes">
"""

# Anope's own example configuration, changed where a test network needs it:
# no mail, no delay before REGISTER, no nick protection that would rename a
# test client, no limit of connections from one address (all are 127.0.0.1),
# and the link to the InspIRCd above.
ANOPE_CHANGES = {
    "services.conf": [
        ('"services.example.com"', f'"{SERVICES}"'),
        ("port = 7000", "port = {link_port}"),
        ('password = "mypassword"', f'password = "{LINK_PASSWORD}"'),
        ('pid = "/var/run/anope/anope.pid"', 'pid = "{directory}/anope.pid"'),
        ('motd = "/etc/anope/services.motd"', 'motd = "{directory}/services.motd"'),
        ("usemail = yes", "usemail = no"),
        ("strictpasswords = yes", "strictpasswords = no"),
        ('casemap = "ascii"', 'casemap = "rfc1459"'),  # as InspIRCd's
    ],
    "operserv.conf": [("defaultsessionlimit = 3", "defaultsessionlimit = 0")],  # 0: none
    "nickserv.conf": [
        ("forceemail = yes", "forceemail = no"),
        ("regdelay = 30s", "regdelay = 0"),
        ('defaults = "killprotect ', 'defaults = "'),
    ],
}


def _wait(condition: Callable[[], bool], what: str, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"{what} did not happen in {timeout} s:\n{tail}")
        time.sleep(0.05)


@dataclass
class Inspircd:
    """InspIRCd on `port` (the bot's, flood-limited) and `player_port`,
    with Anope linked when started with services."""

    directory: Path
    port: int
    player_port: int
    link_port: int
    tls_port: int
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop_process(process)


TLS_CONF = """\
<sslprofile name="tls" provider="gnutls" certfile="{cert}" keyfile="{key}" hash="sha256"
            requestclientcert="no">
<bind address="127.0.0.1" port="{tls_port}" type="clients" sslprofile="tls">
"""


def start_inspircd(
    directory: Path,
    *,
    services: bool,
    threshold: int = 8,
    commandrate: int = 1000,
    tls: tuple[Path, Path] | None = None,
    account_tag: bool = True,
) -> Inspircd:
    """InspIRCd (and Anope with services; without, the network has no
    accounts); the bot's class cuts off a client whose penalty reaches
    `threshold` and forgives `commandrate / 1000` of it a second; with
    `tls` (certificate and key files) it also listens with TLS on
    `tls_port`, in the bot's class.
    Without `account_tag` the module that tags messages with the sender's
    account is not loaded: the server offers account-notify and
    extended-join only, as some networks do."""
    if shutil.which(INSPIRCD) is None or (services and shutil.which(ANOPE) is None):
        # `make test` installs them: a missing one is a broken set-up, not a pass
        pytest.fail("InspIRCd and Anope are not installed (apt-get install inspircd anope)")
    directory.mkdir(parents=True, exist_ok=True)
    server = Inspircd(directory, free_port(), free_port(), free_port(), free_port())
    values = {
        "tls_port": f",{server.tls_port}" if tls else "",
        "tls_module": '<module name="ssl_gnutls">' if tls else "",
        "tls": TLS_CONF.format(cert=tls[0], key=tls[1], tls_port=server.tls_port) if tls else "",
        "port": server.port,
        "player_port": server.player_port,
        "link_port": server.link_port,
        "directory": directory,
        "services": SERVICES,
        "password": LINK_PASSWORD,
        "threshold": threshold,
        "commandrate": commandrate,
        "account_tag": '<module name="ircv3_accounttag">' if account_tag else "",
    }
    values["services_conf"] = SERVICES_CONF.format(**values) if services else ""
    config = directory / "inspircd.conf"
    config.write_text(INSPIRCD_CONF.format(**values))
    out = directory / "inspircd.out"
    with open(out, "wb") as log:
        server.processes.append(
            subprocess.Popen(
                [INSPIRCD, f"--config={config}", "--nofork", "--runasroot"],
                cwd=directory,  # where a core file would land
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    try:
        _wait(lambda: listening("127.0.0.1", server.player_port), "InspIRCd start", 15, out)
        if services:
            _start_anope(server, values)
    except BaseException:
        server.stop()
        raise
    return server


def _start_anope(server: Inspircd, values: dict[str, object]) -> None:
    conf = server.directory / "anope"
    for sub in ("db", "logs"):
        (conf / sub).mkdir(parents=True, exist_ok=True)
    for source in ANOPE_CONF.iterdir():
        text = source.read_text()
        for old, new in ANOPE_CHANGES.get(source.name, []):
            assert old in text, f"{source}: {old!r} not found"
            text = text.replace(old, new.format(**values))
        (conf / source.name).write_text(text)
    out = server.directory / "anope.out"
    with open(out, "wb") as log:
        server.processes.append(
            subprocess.Popen(
                [
                    ANOPE,
                    f"--confdir={conf}",
                    f"--dbdir={conf / 'db'}",
                    f"--logdir={conf / 'logs'}",
                    "--modulesdir=/usr/lib/anope",
                    "--nofork",
                ],
                cwd=conf,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    synced = f"{SERVICES} (Services for IRC Networks) is done syncing"
    _wait(lambda: synced in out.read_text(errors="replace"), "Anope link", 30, out)


# ircd-hybrid conflicts with ngircd as a Debian package (both are "an ircd"):
# `make test` unpacks it into /opt/ircd-hybrid (scripts/debian-packages.sh)
HYBRID_ROOT = Path("/opt/ircd-hybrid")
HYBRID = HYBRID_ROOT / "usr/sbin/ircd-hybrid"

# The bot (ident `bfjoust`, the default) is in hybrid's own default class:
# 5 lines a second read, the rest wait in a receive queue of 2560 bytes,
# and past that the client is cut off for "Excess Flood"; the players may
# flood (`can_flood`).  Auth blocks: the first that matches wins.
HYBRID_CONF = """\
serverinfo {{ name = "hybrid.test.local"; description = "test server";
    network_name = "TestNet"; hub = no; default_max_clients = 2000; max_nick_length = 30; }};
admin {{ name = "test"; email = "<test@localhost>"; }};
class {{ name = "bot"; ping_time = 120 seconds; number_per_ip_local = 1000;
    number_per_ip_global = 1000; max_number = 1000; sendq = 1 megabyte; recvq = 2560 bytes; }};
class {{ name = "players"; ping_time = 120 seconds; number_per_ip_local = 1000;
    number_per_ip_global = 1000; max_number = 2000; number_per_cidr = 2000;
    sendq = 1 megabyte; recvq = 1 megabyte; }};
listen {{ host = "127.0.0.1"; port = {port}; }};
auth {{ user = "*bfjoust@*"; class = "bot"; }};
auth {{ user = "*@*"; class = "players"; flags = can_flood, exceed_limit, no_tilde; }};
channel {{ max_channels = 50; default_join_flood_count = 1000; }};
general {{ disable_auth = yes; throttle_count = 1000; throttle_time = 1 second;
    anti_nick_flood = no; ping_cookie = no; invisible_on_connect = no; }};
modules {{ path = "{modules}"; path = "{modules}/autoload"; }};
log {{ use_logging = yes; file {{ type = user; name = "{directory}/user.log";
    size = 10 megabytes; }}; }};
"""


@dataclass
class Hybrid:
    """ircd-hybrid on `port`; its log of connections and exits in `log`."""

    process: subprocess.Popen[bytes]
    port: int
    directory: Path

    @property
    def log(self) -> str:
        return "".join(
            path.read_text(errors="replace")
            for path in (self.directory / "user.log", self.directory / "ircd.log")
            if path.exists()
        )

    def stop(self) -> None:
        stop_process(self.process)


def start_hybrid(directory: Path) -> Hybrid:
    """ircd-hybrid on a free loopback port.  It refuses to run as root: it
    runs in a user namespace of its own, where it is nobody (its files are
    still root's to it)."""
    if not HYBRID.exists():
        pytest.fail(f"{HYBRID} is missing: `make system-test` unpacks it")
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config = directory / "ircd.conf"
    modules = HYBRID_ROOT / "usr/lib/ircd-hybrid/modules"
    config.write_text(HYBRID_CONF.format(port=port, modules=modules, directory=directory))
    databases = ("kline", "dline", "xline", "resv")
    files = {f"-{name}file": str(directory / f"{name}.db") for name in databases}
    command = [
        *(["unshare", "--user"] if os.geteuid() == 0 else []),
        str(HYBRID),
        "-foreground",
        "-configfile", str(config),
        "-pidfile", str(directory / "ircd.pid"),
        "-logfile", str(directory / "ircd.log"),
        *(item for pair in files.items() for item in pair),
    ]  # fmt: skip
    out = directory / "hybrid.out"
    with open(out, "wb") as log:
        process = subprocess.Popen(
            command, cwd=directory, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
    server = Hybrid(process, port, directory)
    try:
        _wait(lambda: listening("127.0.0.1", port), "ircd-hybrid start", 15, out)
    except BaseException:
        server.stop()
        raise
    return server


@dataclass
class Network:
    """A server the bot's pacing is tried on: the bot's port, the players'
    port (the same one but on InspIRCd, whose bot's class is strict), what
    its log says, and how to stop it."""

    name: str
    port: int
    player_port: int
    log: Callable[[], str]
    stop: Callable[[], None]


NETWORKS = ("inspircd", "ngircd", "hybrid")


def start_network(name: str, directory: Path, **inspircd: int) -> Network:
    """One of NETWORKS; `inspircd`: the bot's class there (start_inspircd)."""
    if name == "inspircd":
        server = start_inspircd(directory, services=False, **inspircd)  # type: ignore[arg-type]
        log = server.directory / "inspircd.log"
        return Network(name, server.port, server.player_port, log.read_text, server.stop)
    if name == "ngircd":
        ngircd = start_ngircd(directory, free_port(), ["#bfjoust", "#hill-news"])
        log = ngircd.directory / "ngircd.log"
        return Network(name, ngircd.port, ngircd.port, log.read_text, ngircd.stop)
    hybrid = start_hybrid(directory)
    return Network(name, hybrid.port, hybrid.port, lambda: hybrid.log, hybrid.stop)


@pytest.fixture(scope="module")
def ngircd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ngircd]:
    server = start_ngircd(
        tmp_path_factory.mktemp("ngircd"), free_port(), ["#bfjoust", "#hill-news"]
    )
    yield server
    server.stop()


@contextlib.contextmanager
def inspircd(directory: Path, *, services: bool) -> Iterator[Inspircd]:
    server = start_inspircd(directory, services=services)
    try:
        yield server
    finally:
        server.stop()
