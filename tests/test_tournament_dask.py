"""Tournaments on a real Dask cluster (a scheduler and two workers started
from .venv on loopback): the same results as on local cores, even when a
worker is SIGKILLed mid-run."""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from support.daskcluster import DaskCluster
from support.reference import REFERENCE
from support.statefile import count_matches

from hill import engine
from hill.engine import arena
from hill.engine.arena import Arena
from hill.errors import TournamentError
from hill.play.cluster import DaskExecutor
from hill.play.tournament import Tournament
from hill.tournaments.ledger import MemoryStore
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.registry import rules_of
from hill.tournaments.round_robin import ROUND_ROBIN

pytestmark = pytest.mark.cluster  # every test starts a Dask cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    running = DaskCluster(tmp_path_factory.mktemp("dask"))
    try:
        yield running.start()
    finally:
        running.stop()


def reference(count: int, start: int = 0) -> dict[str, bytes]:
    names = (REFERENCE / "index.txt").read_text().split()[start : start + count]
    return {name: (REFERENCE / "warriors" / name).read_bytes() for name in names}


def test_cluster_jousts_equal_local_ones(cluster: DaskCluster) -> None:
    code = {engine.code_hash(c): c for c in reference(25, start=30).values()}
    pairs = list(itertools.permutations(code, 2))  # both sides of every pair
    local_executor = arena.LocalExecutor(arena.ProgramCache(), jobs=2)
    local = {pair: (r.outcomes, r.game_cycles) for pair, r in local_executor(pairs, code.get)}
    with DaskExecutor(cluster.address) as executor:
        remote = {pair: (r.outcomes, r.game_cycles) for pair, r in executor(pairs, code.get)}
        again = {pair: r.outcomes for pair, r in executor(pairs[:40], code.get)}  # code sent once
        assert len(executor.scattered) == 1
    assert remote == local and len(remote) == 600
    assert again == {pair: local[pair][0] for pair in pairs[:40]}
    logs = cluster.log("worker1") + cluster.log("worker2")
    assert "Traceback" not in logs


def test_the_command_on_the_cluster_prints_what_it_prints_locally(cluster: DaskCluster) -> None:
    files = list(reference(9, start=50))
    command = [sys.executable, "-m", "hill", "tournament", "run", "--format", "swiss", *files,
               "--json", "--seed", "5", "--additional-rounds", "2"]  # fmt: skip
    warriors = REFERENCE / "warriors"
    local = subprocess.run(command, capture_output=True, text=True, cwd=warriors, timeout=300)
    remote = subprocess.run([*command, "--scheduler", cluster.address],
                            capture_output=True, text=True, cwd=warriors, timeout=300)  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout) == json.loads(local.stdout)


def test_a_hill_tournament_plays_on_the_configured_cluster(
    cluster: DaskCluster, tmp_path: Path
) -> None:
    """`[cluster] scheduler` sends a hill tournament's jousts to the cluster
    (they are stored as the hill's) and the result is the local one."""
    from support import bighill
    from support.ladderhill import archive_hill

    from bot.ircd import free_port

    command = [sys.executable, "-m", "hill", "tournament", "create", "archive", "--format",
               "swiss", "--seed", "9", "--json"]  # fmt: skip
    # the setting is what sends them there: a scheduler nobody runs is an
    # error (a hill of its own, whose archive holds two programs: its client
    # tries to connect for 10 s, so it starts first and is heard last)
    bighill.archive_hill(tmp_path / "nowhere", bighill.quick_programs(2))
    unrun = tmp_path / "nowhere.toml"
    unrun.write_text(f'[cluster]\nscheduler = "tcp://127.0.0.1:{free_port()}"\n')
    nowhere = subprocess.Popen(
        [*command, "--data", str(tmp_path / "nowhere"), "--config", str(unrun)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        archive_hill(tmp_path / "local", count=14, size=4).close()
        shutil.copytree(tmp_path / "local", tmp_path / "remote")
        config = tmp_path / "cluster.toml"
        config.write_text(f'[cluster]\nscheduler = "{cluster.address}"\n')
        local = subprocess.run([*command, "--data", str(tmp_path / "local")],
                               capture_output=True, text=True, timeout=300)  # fmt: skip
        remote = subprocess.run(
            [*command, "--data", str(tmp_path / "remote"), "--config", str(config)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        _, nowhere_err = nowhere.communicate(timeout=300)
    finally:
        nowhere.kill()
    assert remote.returncode == 0, remote.stderr
    results = [json.loads(run.stdout) for run in (local, remote)]
    for result in results:
        del result["tournament"]["created_at"], result["tournament"]["finished_at"]
    assert results[0] == results[1]
    with closing(sqlite3.connect(tmp_path / "remote" / "hill.sqlite3")) as database:
        stored = database.execute("SELECT count(*) FROM jousts").fetchone()[0]
    with closing(sqlite3.connect(tmp_path / "local" / "hill.sqlite3")) as database:
        assert database.execute("SELECT count(*) FROM jousts").fetchone()[0] == stored
    assert nowhere.returncode == 1
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:" in nowhere_err


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.ircd import free_port
    from hill.play import cluster

    # the client tries again and again for CONNECT_TIMEOUT before it gives up
    # (10 s: the command's, seen above); 1 s is the same failure
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(TournamentError, match=f"cannot reach the Dask scheduler at {address}"):
        DaskExecutor(address).__enter__()


def test_a_scheduler_without_workers_is_a_clear_error(tmp_path: Path) -> None:
    lonely = DaskCluster(tmp_path).start(workers=0)
    try:
        with pytest.raises(TournamentError, match="no Dask worker joined the scheduler at"):
            DaskExecutor(lonely.address, worker_timeout=1).__enter__()
    finally:
        lonely.stop()


def test_a_worker_killed_mid_run_loses_nothing(tmp_path: Path) -> None:
    """SIGKILL a worker while it is playing: its batches run again on the
    other one, and the round robin ends exactly as on local cores."""
    from distributed import Client

    programs = reference(60)
    plan = TournamentPlan(ROUND_ROBIN, tuple(programs))
    local = Tournament(plan, programs, MemoryStore(), Arena(jobs=2))
    local.run()
    cluster = DaskCluster(tmp_path).start()
    killed: list[int] = []
    try:
        with Client(cluster.address) as observer:
            names = {info["name"]: address for address, info in
                     observer.scheduler_info()["workers"].items()}  # fmt: skip

            def kill_worker2_while_busy(done: int, total: int) -> None:
                busy = observer.processing().get(names["worker2"], [])
                if not killed and done >= 64 and busy:
                    cluster.workers["worker2"].kill()  # SIGKILL
                    cluster.workers["worker2"].wait()
                    killed.append(done)

            with DaskExecutor(cluster.address, batches_per_thread=16) as executor:
                remote = Tournament(plan, programs, MemoryStore(), Arena(executor))
                remote.run(kill_worker2_while_busy)
    finally:
        cluster.stop()
    print(f"worker2 killed after {killed} of {rules_of(plan).expected_matches(plan)} matches")
    assert killed and killed[0] < rules_of(plan).expected_matches(plan)  # killed mid-run
    assert cluster.workers["worker2"].returncode == -9
    assert remote.to_json() == local.to_json()


def test_a_scheduler_killed_mid_run_is_one_line_and_the_state_resumes(tmp_path: Path) -> None:
    """The scheduler dies while the command plays: it stops with one clear
    line; the same command without the cluster finishes from its state file
    with the result of an uninterrupted local run."""
    files = list(reference(70))
    warriors = REFERENCE / "warriors"
    command = [sys.executable, "-m", "hill", "tournament", "run", "--format", "round-robin",
               *files, "--json", "--state", str(tmp_path / "state.sqlite3")]  # fmt: skip
    local = subprocess.run(command[:-2], capture_output=True, text=True, cwd=warriors)
    cluster = DaskCluster(tmp_path).start()
    try:
        process = subprocess.Popen(
            [*command, "--scheduler", cluster.address], cwd=warriors, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while count_matches(tmp_path / "state.sqlite3", "committed") == 0:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        cluster.scheduler.kill()
        out, err = process.communicate(timeout=120)
    finally:
        cluster.stop()
    assert process.returncode == 1 and out == ""
    assert "the Dask cluster failed a batch of jousts" in err and "Traceback" not in err
    resumed = subprocess.run(command, capture_output=True, text=True, cwd=warriors)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == json.loads(local.stdout)
