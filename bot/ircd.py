"""Local IRC servers, bound to loopback only, from generated configurations.

`make run` and `bfjoust bot --local-ircd` get Debian's InspIRCd under a
keeper process (`python -m bot.ircd keep DIR ...`): started once, in a
session of its own, it outlives the bot, so a restart of the bot (a Ctrl-C
and `make run` again) disconnects no player, and the answers the bot
promises after a restart reach them.  The keeper writes the server's log
to `ircd.log`, capped (LOG_BYTES, then one older file), starts the server
again when it ends, and when it spins a core (SPIN_SHARE of a CPU over
SPIN_SECONDS); `python -m bot.ircd stop DIR` (`make stop-ircd`) ends it.
InspIRCd rather than ngircd: Debian's ngircd 26.1 spins a core and logs
"Write error ... Broken pipe" without end (about 25 MB/s) once a client
that sent lines leaves before reading the replies, a bug fixed in ngircd 27
(Debian's `ergo` is a chemistry program, not the IRC server).

The tests' ngircd (`start_ngircd`) is started directly, for the length of
a test module."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import ipaddress
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from hill.errors import IrcdError

NGIRCD = "/usr/sbin/ngircd"
INSPIRCD = "/usr/sbin/inspircd"
START_TIMEOUT = 10.0
LOG_BYTES = 4 << 20  # the local server's log, then one older file
NGIRCD_READY = b" ready."  # ngircd's line once it listens: Server "NAME" (on "HOST") ready.
INSPIRCD_READY = b"InspIRCd is now running as"
KEEPER_READY = b"server running"  # what the keeper tells its launcher
SPIN_SECONDS = 30.0  # a server busy for this long ...
SPIN_SHARE = 0.5  # ... at this share of a core (or more) is stuck: started again
MAX_LOG_LINE = 2000

INSPIRCD_CONFIG = """\
<server name="irc.hill.local" description="BF Joust hill, local server" network="BFJoustHill">
<admin name="BF Joust hill" nick="hill" email="root@localhost">
<bind address="{host}" port="{port}" type="clients">
<connect name="local" allow="*" port="{port}" timeout="60" pingfreq="120"
         threshold="20" commandrate="10000" fakelag="yes"
         hardsendq="1048576" softsendq="65536" recvq="65536" localmax="1000" globalmax="1000"
         maxchans="50" resolvehostnames="no" useident="no" motd="{directory}/motd.txt">
<pid file="{directory}/inspircd.pid">
<log method="file" type="* -USERINPUT -USEROUTPUT" level="default" target="/dev/stdout">
<dns timeout="1">
<options>
<security>
<performance>
<module name="cap">
<module name="permchannels">
<module name="ircv3_servertime">
<module name="ircv3_batch">
<module name="chanhistory">
<chanhistory maxlines="100" notice="no" bots="yes" prefixmsg="no">
{channels}"""
# the bot's channels exist from the start, with nobody as their operator
# (as in ngircd's predefined channels): none is the first to join them; they
# keep their last 100 lines of the hour (+H), which the server replays to a
# client that joins, with the time each was said (server-time): what was
# said to the bot while it restarted reaches it then (bot.history)
PERMANENT_CHANNEL = '<permchannels channel="{name}" modes="ntH 100:1h">\n'

CONFIG = """\
[Global]
Name = irc.hill.local
Info = BF Joust hill, local server
AdminInfo1 = BF Joust hill
AdminInfo2 = local
AdminEMail = root@localhost
Listen = {host}
Ports = {port}
MotdPhrase = "A local IRC server for the BF Joust hill"

[Limits]
MaxConnectionsIP = 0
MaxNickLength = 30
PingTimeout = 120
PongTimeout = 20

[Options]
PAM = no
Ident = no
DNS = no
{channels}"""

CHANNEL = """
[Channel]
Name = {name}
Modes = +nt
"""


def is_loopback(host: str) -> bool:
    """Whether every address of `host` is a loopback address."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(infos) and all(
        ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos
    )


def listening(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
        return True
    return False


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen[bytes], grace: float = 5) -> None:
    """SIGTERM, and SIGKILL if it has not ended after `grace` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Ngircd:
    """A running ngircd; `stop()` ends it, `kill()` ends it at once."""

    process: subprocess.Popen[bytes]
    host: str
    port: int
    directory: Path

    def stop(self) -> None:
        stop_process(self.process)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start_ngircd(
    directory: Path, port: int, channels: Sequence[str] = (), host: str = "127.0.0.1"
) -> Ngircd:
    """Start ngircd on host:port (loopback), configured in `directory`, and
    wait until it accepts connections."""
    if shutil.which(NGIRCD) is None:
        raise IrcdError(f"{NGIRCD} is missing: apt-get install ngircd (or run `make run`)")
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the local IRC server binds to loopback only, not {host}")
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "ngircd.conf"
    sections = "".join(CHANNEL.format(name=name) for name in channels)
    config.write_text(CONFIG.format(host=host, port=port, channels=sections))
    log = open(directory / "ngircd.log", "ab")  # noqa: SIM115 - written while it runs
    process = subprocess.Popen(
        [NGIRCD, "--nodaemon", "--config", str(config.resolve())],
        cwd=directory,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    server = Ngircd(process, host, port, directory)
    assert process.stdout is not None

    def write(data: bytes) -> None:
        log.write(data)
        log.flush()

    ready = said_ready(process.stdout, NGIRCD_READY, write, START_TIMEOUT)
    threading.Thread(target=_copy_rest, args=(process.stdout, write, log), daemon=True).start()
    if not ready:
        server.kill()
        log_text = (directory / "ngircd.log").read_text(errors="replace")[-2000:]
        raise IrcdError(f"ngircd did not start on {host}:{port}:\n{log_text}")
    return server


def said_ready(
    stream: IO[bytes], marker: bytes, write: Callable[[bytes], None], timeout: float
) -> bool:
    """Whether a line of `stream` (a process's output) says `marker` within
    `timeout` seconds (False: it ended, or the time is up); what it read is
    handed to `write`.  Woken by the output itself (poll: a descriptor past
    select's 1024 is fine), never a look again later."""
    deadline = time.monotonic() + timeout
    descriptor = stream.fileno()
    output = select.poll()
    output.register(descriptor, select.POLLIN)
    seen = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not output.poll(left * 1000):
            return False
        data = os.read(descriptor, 65536)
        if not data:
            return False  # it ended
        write(data)
        seen = (seen + data)[-4096:]
        if marker in seen:
            return True


def _copy_rest(stream: IO[bytes], write: Callable[[bytes], None], log: IO[bytes]) -> None:
    """The rest of a server's output, to its log, until it ends."""
    with log:
        for data in iter(lambda: os.read(stream.fileno(), 65536), b""):
            write(data)


class CappedLog:
    """A log file that never outgrows `limit` bytes: past it, the file
    becomes NAME.1 (the one before is dropped) and a new one starts."""

    def __init__(self, path: Path, limit: int = LOG_BYTES) -> None:
        self.path = path
        self.limit = limit
        self.lock = threading.Lock()
        self.file = open(path, "ab")  # noqa: SIM115 - kept open while the keeper runs

    def write(self, line: bytes) -> None:
        line = line[:MAX_LOG_LINE].rstrip(b"\r\n") + b"\n"
        with self.lock:
            if self.file.tell() + len(line) > self.limit:
                self.file.close()
                os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                self.file = open(self.path, "ab")  # noqa: SIM115
            self.file.write(line)
            self.file.flush()

    def say(self, text: str) -> None:
        self.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} keeper: {text}".encode())

    def copy(self, stream: IO[bytes], ready: Callable[[], None] = lambda: None) -> None:
        """Every line of `stream` until its end; `ready()` at InspIRCd's
        line saying it runs."""
        for line in iter(stream.readline, b""):
            self.write(line)
            if INSPIRCD_READY in line:
                ready()


def keep(directory: Path, host: str, port: int, channels: Sequence[str] = ()) -> int:
    """Run InspIRCd on host:port until SIGTERM or SIGINT, started again
    when it ends or spins; its output in the capped `ircd.log`.  Returns at
    once when another keeper runs in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    lock = open(directory / "keeper.lock", "a")  # noqa: SIM115 - held while keeping
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return 0
    (directory / "keeper.pid").write_text(f"{os.getpid()}\n")
    log = CappedLog(directory / "ircd.log")
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    config = directory / "inspircd.conf"
    permanent = "".join(
        PERMANENT_CHANNEL.format(name=name) for name in channels if not set(name) & set('"<>\n')
    )
    config.write_text(
        INSPIRCD_CONFIG.format(
            host=host, port=port, directory=directory.resolve(), channels=permanent
        )
    )
    (directory / "motd.txt").write_text("A local IRC server for the BF Joust hill\n")
    command = [INSPIRCD, f"--config={config.resolve()}", "--nofork"]
    if os.geteuid() == 0:
        command.append("--runasroot")  # (it refuses root otherwise)
    pause = 1.0
    while not stopping.is_set():
        started = time.monotonic()
        server = subprocess.Popen(
            command,
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert server.stdout is not None
        copying = threading.Thread(
            target=log.copy, args=(server.stdout, _tell_launcher), daemon=True
        )
        copying.start()
        log.say(f"started {INSPIRCD} (pid {server.pid}) on {host}:{port}")
        why = _watch(server, stopping)
        stop_process(server)
        copying.join(5)
        if why is None:
            break
        pause = 1.0 if time.monotonic() - started > 60 else min(pause * 2, 60.0)
        log.say(f"the server {why}; starting it again in {pause:g} s")
        stopping.wait(pause)
    log.say("stopped")
    return 0


def _tell_launcher() -> None:
    """The server runs: say so on the keeper's output, which its launcher
    reads (launch_keeper); once it is gone, nobody reads: said to nobody."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.buffer.write(KEEPER_READY + b"\n")
        sys.stdout.buffer.flush()


def _watch(server: subprocess.Popen[bytes], stopping: threading.Event) -> str | None:
    """Until the server ends (what happened) or the keeper is asked to stop (None)."""
    tick = os.sysconf("SC_CLK_TCK")
    samples: deque[tuple[float, int]] = deque()
    while not stopping.wait(1.0):
        if server.poll() is not None:
            return f"ended (status {server.returncode})"
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
            samples.append((time.monotonic(), int(fields[11]) + int(fields[12])))
        while samples and samples[-1][0] - samples[0][0] > SPIN_SECONDS:
            (then, before), (now, after) = samples.popleft(), samples[-1]
            if (after - before) / tick > SPIN_SHARE * (now - then):
                return f"used {SPIN_SHARE:.0%} of a core or more for {SPIN_SECONDS:g} s (stuck)"
    return None


def launch_keeper(directory: Path, host: str, port: int, channels: Sequence[str] = ()) -> None:
    """Start the keeper in a session of its own (a Ctrl-C at the terminal
    does not reach it: it outlives the bot) and wait until the server
    accepts connections; IrcdError if it does not."""
    if shutil.which(INSPIRCD) is None:
        raise IrcdError(f"{INSPIRCD} is missing: apt-get install inspircd (or run `make run`)")
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"the local IRC server binds to loopback only, not {host}")
    directory.mkdir(parents=True, exist_ok=True)
    keeper = subprocess.Popen(
        [sys.executable, "-m", "bot.ircd", "keep", str(directory), host, str(port), *channels],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,  # it says when its server runs
        stderr=open(directory / "keeper.err", "wb"),  # noqa: SIM115 - the child's
        start_new_session=True,
    )
    assert keeper.stdout is not None
    with keeper.stdout:
        ready = said_ready(keeper.stdout, KEEPER_READY, lambda data: None, START_TIMEOUT)
    if not ready:
        stop_keeper(directory)
        said = b"".join(
            path.read_bytes()[-2000:]
            for path in (directory / "keeper.err", directory / "ircd.log")
            if path.exists()
        )
        raise IrcdError(
            f"the local IRC server did not start on {host}:{port}:\n"
            + said.decode(errors="replace")
        )


def stop_keeper(directory: Path, timeout: float = 15.0) -> bool:
    """Stop the keeper of `directory` and its server (SIGTERM; SIGKILL after
    `timeout` seconds); whether one ran.  Its end is the lock let go."""
    with open(directory / "keeper.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False  # nobody holds it: no keeper
        except BlockingIOError:
            pass
        pid = _lock_holder(directory / "keeper.lock")
        os.kill(pid, signal.SIGTERM)
        taken = threading.Thread(target=fcntl.flock, args=(lock, fcntl.LOCK_EX), daemon=True)
        taken.start()  # returns as the keeper ends
        taken.join(timeout)
        if taken.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            taken.join()
        return True


def _lock_holder(path: Path) -> int:
    """The process holding the flock on `path` (Linux's /proc/locks names
    it by the file's device and inode); else the pid the keeper wrote."""
    info = path.stat()
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "FLOCK" in fields and device in fields:
            return int(fields[fields.index(device) - 1])
    return int((path.parent / "keeper.pid").read_text())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.ircd", description=__doc__.split("\n")[0])
    actions = parser.add_subparsers(dest="action", required=True)
    kept = actions.add_parser("keep", help="run the local IRC server (InspIRCd) until SIGTERM")
    kept.add_argument("directory", type=Path)
    kept.add_argument("host")
    kept.add_argument("port", type=int)
    kept.add_argument("channels", nargs="*", metavar="CHANNEL", help="channels that always exist")
    stop = actions.add_parser("stop", help="stop the local IRC server kept in DIRECTORY")
    stop.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    if args.action == "keep":
        return keep(args.directory, args.host, args.port, args.channels)
    if not (args.directory / "keeper.lock").exists() or not stop_keeper(args.directory):
        print(f"no local IRC server is kept in {args.directory}")
    else:
        print(f"the local IRC server kept in {args.directory} is stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
