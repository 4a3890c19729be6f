"""Benchmark: a round robin of 1,000 entrants started on a real bot while
players submit, a SIGTERM in mid-tournament, and the resume.

Builds a hill whose archive holds N programs (default 1000: short random
programs, so that the 499,500 jousts take seconds and the tournament's
bookkeeping is the work, as when the issue was found), starts ngircd and
`bfjoust bot` (web report on), and a process that takes SQLite's write lock
every 20 ms (an empty transaction, as the request book's insert does) and
times each wait: the longest is about the longest write transaction anyone
had to wait for (phase by phase).  An admin starts `!bfjoust-tournament
round-robin archive`; three players submit a program a second between them
throughout.  Once a quarter of the matches are committed (or after
--stop-after seconds), the bot gets SIGTERM; it is started again and plays
the tournament on to its end while the players go on.  The result is then
compared with an uninterrupted run in memory (--no-verify skips it).
First, the same round robin is played in this process alone, its writes
timed (rows/s; --no-writes skips it).  The bot sends up to 10 lines a
second, as the tests have it on ngircd (the default, 1, is InspIRCd's
budget: three players' answers and owners' notices would queue behind it,
and the bench would time IRC's pacing, not the hill).

Prints figures, asserts nothing:

    .venv/bin/python bench/busy_hill.py [--entrants 1000] [--stop-after 600]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import multiprocessing
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import insert
from trace_load import CHANNEL, Prober, rss

from bot.ircd import free_port, listening, start_ngircd
from hill.config import HillSettings
from hill.engine import Played, code_hash
from hill.engine.varied import varied_pool
from hill.play.tournament import Tournament
from hill.rules.events import LeaveReason, ProgramStatus
from hill.store.database import Database
from hill.store.records import tournament
from hill.store.tables import ProgramRow
from hill.tournaments.ledger import LedgerChange, LedgerStore, MemoryStore
from hill.tournaments.plan import TournamentPlan
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments

PLAYERS = ("alice", "bob", "dan")


def build(data: Path, entrants: int) -> dict[str, bytes]:
    """A hill whose archive holds `entrants` programs that left it long ago
    (stored in one go: a challenge each would cost a git commit each)."""
    programs = {f"old.{name}": code for name, code in varied_pool(entrants, 3, shares={"noise": 1})}
    hill = Hill(HillSettings(data_dir=data), jobs=1)
    rows = [
        {
            "owner": "old",
            "name": name.removeprefix("old."),
            "code": code,
            "code_hash": code_hash(code),
            "status": ProgramStatus.LEFT,
            "left_reason": LeaveReason.PUSHED_OFF,
        }
        for name, code in programs.items()
    ]
    with hill.lock.transaction() as session:
        session.execute(insert(ProgramRow), rows)
    hill.close()
    return programs


def probe_write_lock(database: str, waits: str, stop: object) -> None:
    """(In a process of its own.)  Take the write lock every 20 ms, as the
    request book's insert does; write each wait to `waits` (when it began,
    on the wall clock, and how long it was)."""
    db = sqlite3.connect(database, timeout=3600, isolation_level=None)
    with open(waits, "w") as out:
        while not stop.is_set():  # type: ignore[attr-defined]
            began, asked = time.time(), time.monotonic()
            db.execute("BEGIN IMMEDIATE")
            db.execute("COMMIT")
            out.write(f"{began} {time.monotonic() - asked}\n")
            time.sleep(0.02)


@dataclass
class Submissions:
    asked: int = 0
    answered: list[float] = field(default_factory=list)  # seconds to the real answer
    noted: list[str] = field(default_factory=list)  # notes first ("... is kept")
    failed: list[str] = field(default_factory=list)  # "something went wrong" and the like
    unanswered: list[str] = field(default_factory=list)  # what they heard, if anything


class Player(Prober):
    """A player who submits a program every `every` seconds while `playing`."""

    def __init__(self, port: int, nick: str, every: float, offset: float) -> None:
        super().__init__(port, nick)
        self.every, self.offset = every, offset
        self.idle = threading.Event()  # not waiting for an answer
        self.idle.set()

    def submit(self, number: int, tally: Submissions) -> None:
        name = f"q{number}"
        asked = time.monotonic()
        self.send(f"PRIVMSG {CHANNEL} :!bfjoust {name} (>)*{2 + number % 8}([-]>)*21")
        tally.asked += 1
        heard: list[str] = []

        def mine(line: str) -> bool:
            if f"PRIVMSG {CHANNEL} :{self.nick}: " in line and f"{self.nick}.{name}" in line:
                heard.append(line.split(f":{self.nick}: ", 1)[1])
                return "points" in heard[-1] or "went wrong" in heard[-1]
            return False

        if not self.wait_for(mine, 300):
            tally.unanswered.append(f"{self.nick}.{name}: {heard}")
        elif "went wrong" in heard[-1]:
            tally.failed.append(heard[-1])
        else:
            tally.answered.append(time.monotonic() - asked)
        tally.noted += heard[:-1]

    def run_until(
        self, playing: threading.Event, done: threading.Event, tally: Submissions
    ) -> None:
        number = PLAYERS.index(self.nick)
        time.sleep(self.offset)
        while not done.is_set():
            self.idle.clear()  # before the look: a pause sees it busy, or it sees the pause
            if not playing.is_set() or done.is_set():
                self.idle.set()
                playing.wait()
                continue
            started = time.monotonic()
            self.submit(number, tally)
            self.idle.set()
            number += len(PLAYERS)
            time.sleep(max(0.0, self.every - (time.monotonic() - started)))


class Watch:
    """The bot's peak memory (with its children) and open descriptors,
    sampled every 100 ms in a thread while it runs."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.memory = self.descriptors = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while self.process.poll() is None:
            self.memory = max(self.memory, rss(self.process.pid))
            with contextlib.suppress(OSError):
                fds = len(list(Path(f"/proc/{self.process.pid}/fd").iterdir()))
                self.descriptors = max(self.descriptors, fds)
            time.sleep(0.1)

    def __str__(self) -> str:
        return f"peak memory {self.memory / 2**20:.0f} MB, {self.descriptors} descriptors at most"


def pause(players: list[Player], playing: threading.Event) -> None:
    """No new submission; those under way are answered (or time out)."""
    playing.clear()
    for player in players:
        player.idle.wait()


def answering(admin: Prober | None, irc_port: int, web_port: int) -> Prober:
    """The admin, once the bot (started again) serves and answers on IRC
    (a question of its own each time: older answers may wait unread)."""
    while not listening("127.0.0.1", web_port):
        time.sleep(0.1)
    admin = admin or Prober(irc_port, "admin")
    for number in itertools.count():
        token = f"ping{time.monotonic_ns()}{number}"
        admin.send(f"PRIVMSG {CHANNEL} :!bfjoust-rank {token}")
        if admin.wait_for(lambda line, token=token: "admin: " in line and token in line, 5):
            return admin
    raise AssertionError("unreachable")


def committed(database: Path) -> tuple[int, str | None]:
    with contextlib.closing(sqlite3.connect(database, timeout=60)) as db:
        count = db.execute(
            "SELECT count(*) FROM tournament_matches WHERE status = 'committed'"
        ).fetchone()[0]
        ended = db.execute("SELECT ended FROM tournaments WHERE id = 1").fetchone()
        return count, ended[0] if ended else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--stop-after", type=float, default=600.0, help="SIGTERM by then at most")
    parser.add_argument("--give-up", type=float, default=3600.0, help="stop waiting after")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--no-writes", action="store_true", help="skip the in-process run")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (bot.log)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # cleans up as Ctrl-C does
    matches = args.entrants * (args.entrants - 1) // 2
    with contextlib.ExitStack() as stack:
        root = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            parser.error(f"{root} is not empty")
        data = root / "hill"
        started = time.monotonic()
        programs = build(data, args.entrants)
        print(
            f"built a hill with {args.entrants} programs in its archive "
            f"({time.monotonic() - started:.1f} s)"
        )
        if not args.no_writes:
            write_speed(root / "writes", args.entrants)
        irc = start_ngircd(root / "ircd", free_port(), [CHANNEL])
        stack.callback(irc.stop)  # stopped however the bench ends (SIGTERM too: see main)
        web = free_port()
        config = root / "config.toml"
        config.write_text(
            f'[hill]\ndata_dir = "hill"\n[irc]\nport = {irc.port}\nnick = "busybot"\n'
            f'channels = ["{CHANNEL}"]\nadmins = ["admin"]\nrate_limit_per_user = 1000\n'
            f"rate_limit_global = 1000\nmessages_per_second = 10.0\nburst = 10\n"
            f"[web]\nport = {web}\n"
        )
        log = (root / "bot.log").open("w")

        def start_bot() -> subprocess.Popen[bytes]:
            bot = subprocess.Popen(
                [sys.executable, "-m", "hill", "bot", "--config", str(config)],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            stack.callback(lambda: bot.poll() is None and bot.kill())
            return bot

        spawn = multiprocessing.get_context("spawn")
        stop = spawn.Event()
        waits = root / "waits.txt"
        probe = spawn.Process(
            target=probe_write_lock, args=(str(data / "hill.sqlite3"), str(waits), stop)
        )
        probe.start()
        stack.callback(stop.set)
        phases = [("before the tournament", time.time())]
        bot = start_bot()
        watches = [Watch(bot)]
        admin = answering(None, irc.port, web)
        tally = Submissions()
        playing, done = threading.Event(), threading.Event()
        players = [Player(irc.port, nick, 3.0, i) for i, nick in enumerate(PLAYERS)]
        threads = [
            threading.Thread(target=p.run_until, args=(playing, done, tally), daemon=True)
            for p in players
        ]
        admin.send(f"PRIVMSG {CHANNEL} :!bfjoust-tournament round-robin archive")
        begun = time.monotonic()
        phases.append(("while it played", time.time()))
        playing.set()
        for thread in threads:
            thread.start()
        while committed(data / "hill.sqlite3")[0] < matches // 4:
            if time.monotonic() - begun > args.stop_after:
                break
            time.sleep(0.2)
        before_stop = committed(data / "hill.sqlite3")[0]
        pause(players, playing)  # a submission made while the bot is down is heard by no one
        stopping = time.monotonic()
        phases.append(("while the bot stopped and started again", time.time()))
        bot.terminate()
        try:
            bot.wait(args.give_up)
        except subprocess.TimeoutExpired:
            bot.kill()
            bot.wait()
        stop_took = time.monotonic() - stopping
        at_stop = committed(data / "hill.sqlite3")[0]
        print(
            f"SIGTERM after {stopping - begun:.1f} s, {before_stop} of {matches} matches "
            f"committed: the bot exited in {stop_took:.2f} s ({at_stop} committed)"
        )

        bot = start_bot()
        watches.append(Watch(bot))
        restarted = time.monotonic()
        answering(admin, irc.port, web)
        phases.append(("while it played on", time.time()))
        playing.set()
        first_progress = None
        while True:
            count, ended = committed(data / "hill.sqlite3")
            if first_progress is None and count > at_stop:
                first_progress = time.monotonic() - restarted
            if ended is not None or time.monotonic() - restarted > args.give_up:
                break
            time.sleep(0.2)
        finished = time.monotonic() - restarted
        phases.append(("after its end", time.time()))
        done.set()
        pause(players, playing)
        playing.set()  # the players leave
        for thread in threads:
            thread.join()
        bot.terminate()
        bot.wait(120)
        stop.set()
        probe.join()
        irc.stop()
        print(
            f"resumed: first progress {first_progress or float('nan'):.1f} s after the "
            f"start, {ended or 'not over'} {finished:.1f} s after it"
        )
        first_rate = before_stop / (stopping - begun)
        rest_rate = (count - at_stop) / finished
        print(
            f"matches committed by the bot: {first_rate:,.0f}/s before the stop, "
            f"{rest_rate:,.0f}/s after the restart"
        )
        print(f"the bot: {watches[0]}; started again: {watches[1]}")
        log.close()
        print(f"its log: {(root / 'bot.log').stat().st_size / 1024:.0f} KB in all")
        report_waits(waits, phases)
        report(tally)
        if not args.no_verify and ended == "complete":
            verify(data, programs)


class TimedStore:
    """A ledger store that times its writes and counts their rows."""

    def __init__(self, inner: LedgerStore) -> None:
        self.inner = inner
        self.rows = 0
        self.seconds = 0.0

    def write(self, changes: list[LedgerChange], played: Sequence[Played] = ()) -> None:
        started = time.monotonic()
        self.inner.write(changes, played)
        self.seconds += time.monotonic() - started
        self.rows += len(changes) + len(played)

    def read(self) -> list[LedgerChange]:
        return self.inner.read()


def write_speed(data: Path, entrants: int) -> None:
    """The same round robin played in this process on one core, no bot, no
    players: how fast its writes go (matches checked out and committed,
    jousts stored: a row each), the lock let go between short transactions
    included."""
    build(data, entrants)
    hill = Hill(HillSettings(data_dir=data), jobs=1)
    service = HillTournaments(hill)
    started = time.monotonic()
    playing = service.prepare(service.create("round-robin", "archive", seed=1))
    timed = TimedStore(playing.store)
    playing.store = timed
    playing.run()
    took = time.monotonic() - started
    hill.close()
    print(
        f"in-process round robin on one core: {took:.1f} s, of which writes {timed.seconds:.1f} s "
        f"({timed.rows:,} rows, {timed.rows / timed.seconds:,.0f} rows/s)"
    )


def report_waits(waits: Path, phases: list[tuple[str, float]]) -> None:
    """The probe's waits for SQLite's write lock: the longest in each phase."""
    taken = [tuple(map(float, line.split())) for line in waits.read_text().splitlines()]
    times = sorted(wait for _, wait in taken)
    median, p99 = statistics.median(times), times[int(0.99 * (len(times) - 1))]
    print(
        f"waits for SQLite's write lock: {len(times)} tries, median {median:.3f} s, "
        f"99% {p99:.3f} s, over 0.5 s {sum(t > 0.5 for t in times)}"
    )
    ends = [start for _, start in phases[1:]] + [float("inf")]
    for (phase, start), end in zip(phases, ends, strict=True):
        during = [wait for began, wait in taken if start <= began < end]
        if during:
            print(f"  longest {phase}: {max(during):.3f} s ({len(during)} tries)")


def report(tally: Submissions) -> None:
    times = sorted(tally.answered)
    if times:
        print(
            f"submissions: {tally.asked} asked, {len(times)} answered, "
            f"median {statistics.median(times):.2f} s, "
            f"90% {times[int(0.9 * (len(times) - 1))]:.2f} s, worst {times[-1]:.2f} s"
        )
    print(f"  failed: {len(tally.failed)} {tally.failed[:3]}")
    print(f"  notes before the answer: {len(tally.noted)} {tally.noted[:3]}")
    print(f"  unanswered: {len(tally.unanswered)} {tally.unanswered[:3]}")


def verify(data: Path, programs: dict[str, bytes]) -> None:
    db = Database.existing(data / "hill.sqlite3")
    view = tournament(db, 1)
    db.close()
    assert view is not None
    plan = TournamentPlan("round-robin", tuple(view.result["entrants"]), view.result["seed"])
    started = time.monotonic()
    uninterrupted = Tournament(plan, programs, MemoryStore())
    uninterrupted.run()
    same = uninterrupted.to_json() == view.result
    print(
        f"the resumed result {'equals' if same else 'DIFFERS FROM'} an uninterrupted run "
        f"(checked in {time.monotonic() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
