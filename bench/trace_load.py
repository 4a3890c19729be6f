"""Benchmark: 300 battle viewers at once against a real `bfjoust bot`.

Builds the 2013 hill (47 programs) in a temporary folder, starts a real
ngircd and `bfjoust bot` with its web report, then, while a player asks
`!bfjoust-rank` on IRC every second, opens 300 battle viewers at once on 84
distinct 100000-cycle battles of those programs: each fetches its battle's
first piece from /api/trace, then every other piece (waiting as told after a
503).  It samples the bot's memory (RSS, with any child process) throughout
and prints the figures; it asserts nothing.

    .venv/bin/python bench/trace_load.py [--viewers 300] [--battles 84] [--in-process]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import numpy as np

from bot.ircd import Ngircd, free_port, listening, start_ngircd
from hill import engine
from hill.config import HillSettings
from hill.rules.names import from_file
from hill.writers.hill import Hill

WARRIORS = Path(__file__).resolve().parents[1] / "tests/data/reference/warriors/esohill-20131008"
CHANNEL = "#bfjoust"
PROBED = "esohill.ais523_omnipotence"


def build_hill(data_dir: Path) -> list[tuple[str, str, int, str]]:
    """The 47-program hill, and its battles that run to the cycle limit."""
    hill = Hill(HillSettings(data_dir=data_dir))
    codes = {}
    for path in sorted(WARRIORS.glob("*.bfjoust")):
        codes[from_file(path)] = path.read_bytes()
        hill.challenge("esohill", from_file(path), codes[from_file(path)])
    standings = hill.queries.standings()
    hill.close()
    compiled = {name: engine.compile_program(code) for name, code in codes.items()}
    long = []
    for a, b, i in zip(*np.nonzero(standings.outcomes == 0), strict=True):
        if a < b:
            left, right = standings.entries[a].program, standings.entries[b].program
            tape, polarity = engine.battle_config(int(i))
            battle = engine.trace(compiled[left.name], compiled[right.name], tape, polarity)
            if battle.cycles == engine.MAX_CYCLES:
                long.append((left.full_name, right.full_name, tape, polarity))
    return long


def rss(pid: int, children: bool = True) -> int:
    """Resident memory of a process and (unless not `children`) all its
    descendants, in bytes."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(status.split("VmRSS:")[1].split()[0]) * 1024
            for task in Path(f"/proc/{current}/task").iterdir() if children else ():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError):
            continue
    return total


@dataclass
class Sampler:
    """The memory of some processes (and their children) together, sampled
    every 50 ms in a thread."""

    pids: list[int]
    samples: list[int] = field(default_factory=list)
    running: bool = True
    children: bool = True  # their children's memory too

    def run(self) -> None:
        while self.running:
            self.samples.append(sum(rss(pid, self.children) for pid in self.pids))
            time.sleep(0.05)


class Prober:
    """A player on IRC who asks `!bfjoust-rank` every second and times the answers."""

    def __init__(self, port: int, nick: str = "prober") -> None:
        self.nick = nick
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buffer = b""
        self.latencies: list[float] = []
        self.unanswered = 0
        self.running = True
        self.send(f"NICK {nick}", f"USER {nick} 0 * :{nick}", f"JOIN {CHANNEL}")
        self.wait_for(lambda line: f" 366 {nick} " in line, 30)  # joined

    def send(self, *lines: str) -> None:
        self.sock.sendall("".join(f"{line}\r\n" for line in lines).encode())

    def wait_for(self, wanted: Callable[[str], bool], timeout: float) -> bool:
        """Read lines (answering PING) until one is `wanted`; False after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while b"\r\n" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\r\n", 1)
                line = raw.decode(errors="replace")
                if line.startswith("PING"):
                    self.send("PONG" + line[4:])
                elif wanted(line):
                    return True
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                return False
            if not data:
                return False
            self.buffer += data
        return False

    def ask(self, timeout: float = 60) -> float | None:
        start = time.monotonic()
        self.send(f"PRIVMSG {CHANNEL} :!bfjoust-rank {PROBED}")
        if self.wait_for(lambda line: f"PRIVMSG {CHANNEL} :{self.nick}: " in line, timeout):
            return time.monotonic() - start
        return None

    def run(self) -> None:
        while self.running:
            started = time.monotonic()
            latency = self.ask()
            if latency is None:
                self.unanswered += 1
            else:
                self.latencies.append(latency)
            time.sleep(max(0.0, 1.0 - (time.monotonic() - started)))


def prober_once_joined(irc_port: int, web_port: int) -> Prober:
    """A prober, once the bot serves its web report and has joined."""
    while not listening("127.0.0.1", web_port):
        time.sleep(0.1)
    prober = Prober(irc_port)
    while prober.ask(5) is None:
        pass
    return prober


def start_bot(
    folder: Path, hill: str = "", web: str = ""
) -> tuple[Ngircd, subprocess.Popen[bytes], int, int]:
    """ngircd and a real `bfjoust bot` on the hill in folder/var (its log in
    folder/bot.log; `hill`, `web`: more keys of those sections, the ladder
    off): the server, the bot, the IRC and web ports."""
    irc_port, web_port = free_port(), free_port()
    ircd = start_ngircd(folder / "ircd", irc_port, [CHANNEL])
    config = folder / "hill.toml"
    config.write_text(
        f'[hill]\ndata_dir = "var"\n{hill}\n[irc]\nport = {irc_port}\nnick = "hillbot"\n'
        f'channels = ["{CHANNEL}"]\nmessages_per_second = 2.0\n\n[web]\nport = {web_port}\n'
        f"{web}\n[ladder]\nenabled = false\n"
    )
    with (folder / "bot.log").open("w") as log:
        bot = subprocess.Popen(
            [sys.executable, "-m", "hill", "bot", "--config", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    return ircd, bot, irc_port, web_port


class Watch:
    """While a load runs against a bot: a player asking on IRC every second
    and the memory of the bot sampled, alone and with its children (its web
    process, git); `report()` stops and prints both."""

    def __init__(self, pid: int, irc_port: int, web_port: int, children: str) -> None:
        self.children = children  # what the bot's children are, for the report
        self.prober = prober_once_joined(irc_port, web_port)
        self.alone, self.whole = Sampler([pid], children=False), Sampler([pid])
        self.threads = [
            threading.Thread(target=t.run) for t in (self.alone, self.whole, self.prober)
        ]
        for thread in self.threads:
            thread.start()
        time.sleep(3)  # a baseline
        self.before = (max(self.alone.samples), max(self.whole.samples))
        self.calm = len(self.prober.latencies)

    def report(self) -> None:
        time.sleep(3)
        self.alone.running = self.whole.running = self.prober.running = False
        for thread in self.threads:
            thread.join()
        peaks = (max(self.alone.samples), max(self.whole.samples))
        whats = ("the bot alone", f"the bot with {self.children}")
        for what, was, top in zip(whats, self.before, peaks, strict=True):
            print(f"memory of {what}: {was >> 20} MB before, peak {top >> 20} MB,", end=" ")
            print(f"+{(top - was) >> 20} MB")
        during = self.prober.latencies[self.calm :]
        print(
            f"IRC !bfjoust-rank during and after: {len(during)} answers, slowest"
            f" {max(during):.2f} s, median {statistics.median(during):.2f} s;"
            f" unanswered {self.prober.unanswered}"
        )


@dataclass
class Viewer:
    """One battle viewer's requests: statuses in order, and how long each took."""

    statuses: list[int] = field(default_factory=list)
    first_piece: float | None = None
    pieces: int = 0


async def fetch(session: aiohttp.ClientSession, url: str, viewer: Viewer) -> bytes:
    """The body, once the server is not busy (waiting as told after a 503)."""
    while True:
        async with session.get(url) as response:
            viewer.statuses.append(response.status)
            if response.status == 503:
                await asyncio.sleep(float(response.headers.get("Retry-After", "2")))
                continue
            response.raise_for_status()
            return await response.read()


async def view(session: aiohttp.ClientSession, url: str, viewer: Viewer) -> None:
    start = time.monotonic()
    first = json.loads(await fetch(session, url, viewer))  # the others are not parsed
    viewer.first_piece = time.monotonic() - start
    viewer.pieces = 1
    step = first.get("piece_states", 0)
    for i in range(1, first.get("pieces", 1)):
        await fetch(session, f"{url}&from={i * step}", viewer)
        viewer.pieces += 1


async def flood(base: str, battles: list[tuple[str, str, int, str]], count: int) -> list[Viewer]:
    keys = ("left", "right", "tape", "polarity")
    urls = [f"{base}/api/trace?{urlencode(dict(zip(keys, b, strict=True)))}" for b in battles]
    viewers = [Viewer() for _ in range(count)]
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.gather(
            *(view(session, urls[i % len(urls)], v) for i, v in enumerate(viewers))
        )
    return viewers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=300)
    parser.add_argument("--battles", type=int, default=84)
    parser.add_argument("--rounds", type=int, default=1, help="floods one after the other")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="for comparison: the web report on the bot's own event loop ([web] own_process)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        started = time.monotonic()
        long = build_hill(folder / "var")
        took = time.monotonic() - started
        print(f"the hill built in {took:.0f} s; {len(long)} battles of 100000 cycles")
        battles = long[: args.battles]
        own = f"own_process = {str(not args.in_process).lower()}\n"
        ircd, bot, irc_port, web_port = start_bot(folder, web=own)
        try:
            watch = Watch(bot.pid, irc_port, web_port, "its web process")
            rounds = []
            for _ in range(args.rounds):
                started = time.monotonic()
                viewers = asyncio.run(flood(f"http://127.0.0.1:{web_port}", battles, args.viewers))
                rounds.append((viewers, time.monotonic() - started))
            for i, (viewers, took) in enumerate(rounds):
                print(f"round {i + 1}" + (" (the battles cached)" if i else ""))
                report(viewers, took)
            watch.report()
        finally:
            bot.terminate()
            bot.wait(timeout=60)
            ircd.stop()


def report(viewers: list[Viewer], took: float) -> None:
    statuses = [s for v in viewers for s in v.statuses]
    firsts = sorted(v.first_piece for v in viewers if v.first_piece is not None)
    told = sum(1 for v in viewers if 503 in v.statuses)
    print(
        f"  {len(viewers)} viewers: all answered: {len(firsts) == len(viewers)};"
        f" {len(statuses)} requests in {took:.1f} s ({statuses.count(200)} x 200,"
        f" {statuses.count(503)} x 503 with Retry-After); {told} viewers were told to retry"
    )
    print(
        f"  first piece: median {statistics.median(firsts):.2f} s, slowest {firsts[-1]:.2f} s;"
        f" {sum(v.pieces for v in viewers)} pieces in all"
    )


if __name__ == "__main__":
    main()
