"""A real Dask cluster on loopback for the tests (and bench/tournament.py):
a `dask scheduler` and `dask worker` processes started from this
virtualenv, stopped afterwards."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bot.ircd import free_port, stop_process

DASK = Path(sys.executable).parent / "dask"


@dataclass
class DaskCluster:
    """A scheduler and named workers, one thread each; without a nanny (the
    tests kill workers and nothing restarts them) unless `nanny`, as the
    README starts them."""

    directory: Path  # the processes' logs
    nanny: bool = False
    address: str = ""
    scheduler: subprocess.Popen[bytes] | None = None
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def _start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = (self.directory / f"{name}.log").open("wb")
        return subprocess.Popen([str(DASK), *args], stdout=log, stderr=subprocess.STDOUT)

    def start(self, workers: int = 2) -> DaskCluster:
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        self.scheduler = self._start(
            "scheduler", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"
        )
        for i in range(1, workers + 1):
            name = f"worker{i}"
            self.workers[name] = self._start(
                name, "worker", self.address, "--name", name, "--nthreads", "1",
                *(() if self.nanny else ("--no-nanny",)), "--no-dashboard", "--host", "127.0.0.1",
            )  # fmt: skip
        from distributed import Client

        with Client(self.address, timeout="60s") as client:
            if workers:
                client.wait_for_workers(workers, timeout=120)
        return self

    def stop(self) -> None:
        for process in [*self.workers.values(), self.scheduler]:
            if process is not None:
                stop_process(process)

    def log(self, name: str) -> str:
        return (self.directory / f"{name}.log").read_text(errors="replace")
