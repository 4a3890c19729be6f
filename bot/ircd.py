"""A local IRC server (Debian's ngircd) for `bfjoust bot --local-ircd` and
for the tests: a generated configuration, bound to loopback only."""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hill.errors import IrcdError

NGIRCD = "/usr/sbin/ngircd"
START_TIMEOUT = 10.0

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
        ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos
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
    with open(directory / "ngircd.log", "ab") as log:
        process = subprocess.Popen(
            [NGIRCD, "--nodaemon", "--config", str(config.resolve())],
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = Ngircd(process, host, port, directory)
    deadline = time.monotonic() + START_TIMEOUT
    while not listening(host, port):
        if process.poll() is not None or time.monotonic() > deadline:
            server.kill()
            log_text = (directory / "ngircd.log").read_text(errors="replace")[-2000:]
            raise IrcdError(f"ngircd did not start on {host}:{port}:\n{log_text}")
        time.sleep(0.05)
    return server
