"""`bfjoust hill backup` and `restore` as real processes: backups taken
while players' submissions and a tournament go through the real writer, two
of them killed mid-way, each restored copy read back with `bfjoust hill`
and git and compared with the original hill at the moment of its backup."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import bighill
from support.hillcli import bfjoust, commits, history, report

from hill.config import HillSettings
from hill.engine.varied import varied_pool
from hill.rules.reports import json_report
from hill.store import snapshot
from hill.store.queries import HillQueries


class Players:
    """Submissions (updates among them) and withdrawals through `bfjoust hill`,
    one process after another, until stopped."""

    def __init__(self, data: Path, folder: Path) -> None:
        self.data = data
        self.programs = []
        folder.mkdir()
        for name, code in varied_pool(12, seed=33, shares={"structured": 1.0}):
            path = folder / f"{name}.bfjoust"
            path.write_bytes(code)
            self.programs.append(path)
        self.done = 0
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        i = 0
        while not self.stop.is_set():
            path = self.programs[i % len(self.programs)]
            owner = "alice" if i % 2 else "bob"
            args = ["hill", "--data", self.data, "submit", path, "--owner", owner]
            if i % 5 == 4:  # bob's update of one he has on the hill
                args = ["hill", "--data", self.data, "submit", self.programs[0], "--owner",
                        "bob", "--name", "keeper"]  # fmt: skip
            if i % 7 == 6:
                args = ["hill", "--data", self.data, "withdraw", "keeper", "--owner", "bob"]
            done = bfjoust(*args, check=False)
            if done.returncode != 0 and "no bob.keeper" not in done.stderr:
                self.failures.append(done.stderr)
            self.done += 1
            i += 1


def moment_of(
    data: Path, event: int, all_lines: list[str], all_commits: list[str]
) -> tuple[dict[str, object], list[str], list[str]]:
    """The original hill at event `event`: its standings as `report --format
    json` gives them, its history and its commits up to that event's (of
    `all_lines` and `all_commits`, its whole history and commits, read once:
    the hill no longer moves)."""
    queries = HillQueries.open(data, HillSettings().ranking)
    try:
        commit = queries.event(event).commit
        standings = json_report(queries.standings_at(event), commit)
    finally:
        queries.close()
    lines = [line for line in all_lines if int(line.split()[0][1:]) <= event]
    assert commit in all_commits
    return standings, lines, all_commits[: all_commits.index(commit) + 1]


def wait_for_a_change_after(data: Path, event: int) -> None:
    """Until the hill at `data` holds a change after `event` (a player's), or
    two minutes have gone by (then the test's count of events says so)."""
    deadline = time.monotonic() + 120
    while snapshot.moment(data / "hill.sqlite3").event <= event:
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)


@pytest.mark.slow  # a round robin, and some 30 bfjoust processes
@pytest.mark.timeout(900)
def test_backups_of_a_busy_hill_restore_the_hill_of_their_moment(tmp_path: Path) -> None:
    data = tmp_path / "hill"
    bighill.archive_hill(data, bighill.quick_programs(300))  # a round robin of some 45,000 matches
    bfjoust("hill", "--data", data, "init", "--seed")
    players = Players(data, tmp_path / "programs")
    tournament = subprocess.Popen(
        [sys.executable, "-m", "hill", "tournament", "create", "archive", "--format",
         "round-robin", "--jobs", "1", "--data", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    players.thread.start()
    backups, killed, figures, beside_tournament = [], [], [], 0
    last = 0  # the event of the last whole backup
    try:
        deadline = time.monotonic() + 120
        while not bighill.committed_matches(data) and time.monotonic() < deadline:
            time.sleep(0.1)
        for i in range(5):  # three whole backups, each at a later event, two killed between
            destination = tmp_path / f"backup{i}"
            if i in (1, 3):  # killed: after the database copy, after the bundle
                point = "backup-database-copied" if i == 1 else "backup-bundled"
                env = {**os.environ, "BFJOUST_CRASH_AT": point}
                done = bfjoust("hill", "--data", data, "backup", destination, check=False, env=env)
                assert done.returncode == -signal.SIGKILL, done.stderr
                assert not destination.exists()
                (partial,) = tmp_path.glob(f".backup{i}.partial-*")  # under its own name
                killed.append((destination, partial))
                continue
            if backups:  # the hill has moved since the last one
                wait_for_a_change_after(data, last)
            running = tournament.poll() is None
            done = bfjoust("hill", "--data", data, "backup", destination)
            beside_tournament += running and tournament.poll() is None
            figures.append(done.stdout.strip())
            backups.append(destination)
            last = json.loads((destination / "backup.json").read_text())["event"]
        # a backup killed from outside at some moment of its work
        outside = tmp_path / "backup-outside"
        process = subprocess.Popen(
            [sys.executable, "-m", "hill", "hill", "--data", str(data), "backup", str(outside)]
        )
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".backup-outside.partial-*")):  # it has begun
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.001)
        process.send_signal(signal.SIGKILL)
        process.wait()
        leftovers = list(tmp_path.glob(".backup-outside.partial-*"))
        assert outside.exists() != bool(leftovers)  # whole, or only a partial under its own name
        if outside.exists():
            backups.append(outside)
    finally:
        players.stop.set()
        players.thread.join()
        tournament.send_signal(signal.SIGINT)
        tournament.wait(timeout=60)
    assert not players.failures, players.failures
    assert beside_tournament >= 2, beside_tournament
    print(f"{players.done} submissions and withdrawals played beside the backups")
    print("\n".join(figures))

    # a backup again to a killed one's name: it removes the partial one
    destination, partial = killed[0]
    bfjoust("hill", "--data", data, "backup", destination)
    assert destination.is_dir() and not partial.exists()
    backups.append(destination)

    events = set()
    all_lines, all_commits = history(data), commits(data)
    for backup in backups:
        manifest = json.loads((backup / "backup.json").read_text())
        event = manifest["event"]
        events.add(event)
        restored = tmp_path / f"restored-{backup.name}"
        bfjoust("hill", "--data", restored, "restore", backup)
        standings, lines, branch = moment_of(data, event, all_lines, all_commits)
        assert report(restored) == standings
        assert history(restored) == lines
        assert commits(restored) == branch
    # a restore refuses a folder that holds anything (the last one restored)
    refused = bfjoust("hill", "--data", restored, "restore", backup, check=False)
    assert refused.returncode == 1 and "is not empty" in refused.stderr
    assert len(events) >= 3  # the hill moved between the backups
