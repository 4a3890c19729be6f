"""Benchmark: 50 concurrent `git clone`s of a 1000-commit history from a
real `bfjoust bot`.

Builds a hill with a history of 1000 commits in a temporary folder, starts
a real ngircd and `bfjoust bot` with its web report (its start repacks the
history in the background, as any change does once enough loose objects
have gathered), then, while a player asks `!bfjoust-rank` on IRC every
second, runs 50 stock `git clone`s at once.  git does not retry a 503: a
clone that fails is a user who saw `fatal: ...`.  It prints how many
succeeded, how long they took, the IRC answers' latency and the bot's
memory (the bot alone, and with its git children); it asserts nothing.

    .venv/bin/python bench/clone_burst.py [--clones 50] [--commits 1000]
"""

from __future__ import annotations

import argparse
import fcntl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from history import program
from trace_load import Prober, Sampler, prober_once_joined

from bot.ircd import free_port, start_ngircd
from hill.config import HillSettings
from hill.history.repository import PACKING
from hill.writers.hill import Hill

CHANNEL = "#bfjoust"


def build(data_dir: Path, commits: int) -> None:
    """A hill with `commits` changes, one commit each."""
    hill = Hill(HillSettings(data_dir=data_dir, size=10))
    for i in range(commits):
        hill.challenge(f"player{i % 13}", f"p{i % 17}", program(i))
    hill.close()


def clone_all(url: str, folder: Path, count: int) -> list[tuple[int, float, str]]:
    """`count` clones at once: (exit status, seconds, what git said) each."""
    started = time.monotonic()
    processes = [
        subprocess.Popen(
            ["git", "clone", "--quiet", url, str(folder / f"clone{i}")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    results = []
    for process in processes:
        _, said = process.communicate(timeout=600)
        results.append((process.returncode, time.monotonic() - started, said))
    return results


def packed(repository: Path) -> str:
    """Whether the history is one pack with a bitmap, once any repack is done."""
    with open(repository / ".git" / PACKING, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
    count = subprocess.run(
        ["git", "count-objects", "-v"], cwd=repository, capture_output=True, text=True
    ).stdout
    fields = dict(line.split(": ") for line in count.splitlines())
    bitmaps = len(list((repository / ".git/objects/pack").glob("*.bitmap")))
    return f"{fields['count']} loose objects, {fields['packs']} pack(s), {bitmaps} bitmap(s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clones", type=int, default=50)
    parser.add_argument("--commits", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        started = time.monotonic()
        build(folder / "var", args.commits)
        print(f"the history built in {time.monotonic() - started:.0f} s")
        irc_port, web_port = free_port(), free_port()
        ircd = start_ngircd(folder / "ircd", irc_port, [CHANNEL])
        config = folder / "hill.toml"
        config.write_text(
            f'[hill]\ndata_dir = "var"\nsize = 10\n\n[irc]\nport = {irc_port}\n'
            f'nick = "hillbot"\nchannels = ["{CHANNEL}"]\nmessages_per_second = 2.0\n\n'
            f"[web]\nport = {web_port}\n\n[ladder]\nenabled = false\n"
        )
        with (folder / "bot.log").open("w") as log:
            bot = subprocess.Popen(
                [sys.executable, "-m", "hill", "bot", "--config", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            prober = prober_once_joined(irc_port, web_port)
            print("the repository:", packed(folder / "var" / "hill-repo"))
            alone, whole = Sampler([bot.pid], children=False), Sampler([bot.pid])
            threads = [threading.Thread(target=t.run) for t in (alone, whole, prober)]
            for thread in threads:
                thread.start()
            time.sleep(3)  # a baseline
            before = (max(alone.samples), max(whole.samples))
            calm = len(prober.latencies)
            url = f"http://127.0.0.1:{web_port}/hill.git"
            results = clone_all(url, folder, args.clones)
            time.sleep(3)
            alone.running = whole.running = prober.running = False
            for thread in threads:
                thread.join()
            report(results, prober, calm, before, (max(alone.samples), max(whole.samples)))
        finally:
            bot.terminate()
            bot.wait(timeout=60)
            ircd.stop()


def report(
    results: list[tuple[int, float, str]],
    prober: Prober,
    calm: int,
    before: tuple[int, int],
    peak: tuple[int, int],
) -> None:
    succeeded = [seconds for status, seconds, _ in results if status == 0]
    failures = {said.strip().splitlines()[-1] for status, _, said in results if status}
    print(
        f"{len(results)} clones at once: {len(succeeded)} succeeded on the first try"
        + (f"; failures: {sorted(failures)}" if failures else "")
    )
    if succeeded:
        print(
            f"  done after: median {statistics.median(succeeded):.2f} s,"
            f" slowest {max(succeeded):.2f} s"
        )
    whats = ("the bot alone", "the bot with its git children")
    for what, was, top in zip(whats, before, peak, strict=True):
        print(f"memory of {what}: {was >> 20} MB before, peak {top >> 20} MB,", end=" ")
        print(f"+{(top - was) >> 20} MB")
    during = prober.latencies[calm:]
    print(
        f"IRC !bfjoust-rank during and after: {len(during)} answers, slowest {max(during):.2f} s,"
        f" median {statistics.median(during):.2f} s; unanswered {prober.unanswered}"
    )


if __name__ == "__main__":
    main()
