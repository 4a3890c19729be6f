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
import tempfile
import time
from pathlib import Path

from history import program
from trace_load import Watch, start_bot

from hill.config import HillSettings
from hill.history.repository import PACKING
from hill.writers.hill import Hill


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
        ircd, bot, irc_port, web_port = start_bot(folder, hill="size = 10\n")
        try:
            watch = Watch(bot.pid, irc_port, web_port, "its web process and git")
            print("the repository:", packed(folder / "var" / "hill-repo"))
            url = f"http://127.0.0.1:{web_port}/hill.git"
            report(clone_all(url, folder, args.clones))
            watch.report()
        finally:
            bot.terminate()
            bot.wait(timeout=60)
            ircd.stop()


def report(results: list[tuple[int, float, str]]) -> None:
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


if __name__ == "__main__":
    main()
