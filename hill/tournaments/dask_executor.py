"""Jousts on a Dask `distributed` cluster (`--scheduler tcp://HOST:PORT`).

Each program's code goes to the workers once (scattered to all of them);
batches of pairs are Dask tasks that the scheduler places and, when a worker
dies, runs again elsewhere; results come back as batches finish. Workers
compile with the project's engine, so they run from an environment where
this package is installed (`.venv/bin/dask worker tcp://HOST:PORT`).
"""

from __future__ import annotations

import threading
from collections import ChainMap
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType

import numpy as np

from hill import engine
from hill.tournaments import TournamentError
from hill.tournaments.executors import Pair, PlayedJoust, batches, play_batch

BATCH = 256  # jousts per task at most: a task costs the scheduler about a millisecond
RETRIES = 3  # a batch that raises is tried again this often (a lost worker's are rerun anyway)
CONNECT_TIMEOUT = "10s"

# On a worker: programs compiled by earlier batches, by key (content hash).
_compiled: dict[str, engine.Program] = {}
_compiled_lock = threading.Lock()
_COMPILED_KEPT = 4096


def _compile_on_worker(key: str, code: bytes) -> engine.Program:
    with _compiled_lock:
        program = _compiled.get(key)
    if program is None:
        program = engine.compile_program(code)
        with _compiled_lock:
            if len(_compiled) >= _COMPILED_KEPT:
                _compiled.clear()
            _compiled[key] = program
    return program


def joust_batch(pairs: list[Pair], *code: dict[str, bytes]) -> list[tuple[bytes, int]]:
    """The task a worker runs: a batch of jousts (the code arrives scattered,
    in dictionaries of key -> code).

    Each joust comes back as its 42 outcomes in bytes (int8) and its game
    cycles, in the batch's order: a tenth of the pickled size of the pairs
    and tuples, which the client knows already.
    """
    codes = ChainMap(*code)
    needed = {key for pair in pairs for key in pair}
    compiled = {key: _compile_on_worker(key, codes[key]) for key in needed}
    return [
        (np.asarray(outcomes, dtype=np.int8).tobytes(), cycles)
        for _pair, outcomes, cycles in play_batch(compiled, pairs)
    ]


class DaskExecutor:
    """An executor on the Dask cluster whose scheduler is at `address`.

    Use it as a context manager: it connects on entry and disconnects on exit.
    """

    def __init__(
        self, address: str, *, batches_per_thread: int = 4, worker_timeout: float = 60
    ) -> None:
        self.address = address
        self.batches_per_thread = batches_per_thread
        self.worker_timeout = worker_timeout  # seconds to wait for a first worker
        self.client = None
        # the programs' code on the cluster: dictionaries (key -> code), one Future each
        self.scattered: list[tuple[frozenset[str], object]] = []
        self.sent: set[str] = set()

    def __enter__(self) -> DaskExecutor:
        from distributed import Client  # loaded only for a cluster run

        try:
            self.client = Client(self.address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise TournamentError(
                f"cannot reach the Dask scheduler at {self.address}: {error}"
            ) from None
        try:
            self.client.wait_for_workers(1, timeout=self.worker_timeout)
        except TimeoutError:
            self.client.close()
            raise TournamentError(
                f"no Dask worker joined the scheduler at {self.address} "
                f"within {self.worker_timeout:g} s"
            ) from None
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def _send_code(self, programs: Mapping[str, bytes], keys: set[str]) -> None:
        """Send the code of the programs the workers lack, all of `programs` at
        once (the next rounds of a tournament need the same), to every worker."""
        if keys <= self.sent:
            return
        new = {key: code for key, code in programs.items() if key not in self.sent}
        # in a list: scatter sends the dictionary as one object, not one per item
        (future,) = self.client.scatter([new], broadcast=True, hash=False)
        self.scattered.append((frozenset(new), future))
        self.sent |= new.keys()

    def _code_for(self, batch: Sequence[Pair]) -> list[object]:
        """The scattered code dictionaries a batch needs (a task depends on few)."""
        keys = {key for pair in batch for key in pair}
        return [future for sent, future in self.scattered if sent & keys]

    def threads(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def __call__(
        self, programs: Mapping[str, bytes], pairs: Sequence[Pair]
    ) -> Iterator[PlayedJoust]:
        from distributed import as_completed

        if self.client is None:
            raise RuntimeError("DaskExecutor is used inside `with`")
        self._send_code(programs, {key for pair in pairs for key in pair})
        tasks = {
            self.client.submit(
                joust_batch, batch, *self._code_for(batch), retries=RETRIES, pure=False
            ): batch
            for batch in batches(pairs, self.batches_per_thread * self.threads(), BATCH)
        }
        for task in as_completed(tasks, loop=self.client.loop):
            try:
                played = task.result()
            except Exception as error:  # whatever the cluster raised, said in one line
                message = f"the Dask cluster failed a batch of jousts: {error}"
                raise TournamentError(message) from None
            for pair, (raw, cycles) in zip(tasks[task], played, strict=True):
                yield pair, tuple(np.frombuffer(raw, dtype=np.int8).tolist()), cycles
