"""Jousts on a Dask `distributed` cluster (`--scheduler tcp://HOST:PORT`):
an executor the arena plays on (`arena.Arena(DaskExecutor(...))`).

Each program's code goes to the workers once (scattered to all of them);
batches of pairs are Dask tasks that the scheduler places and, when a worker
dies, runs again elsewhere; results come back as batches finish. Workers
compile with the project's engine, so they run from an environment where
this package is installed (`.venv/bin/dask worker tcp://HOST:PORT`).
"""

from __future__ import annotations

import contextlib
from collections import ChainMap
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from hill import engine
from hill.engine import Pair, Played, packing
from hill.engine.arena import CodeOf, Executor, ProgramCache
from hill.errors import TournamentError
from hill.logs import quiet

if TYPE_CHECKING:  # distributed is loaded only for a cluster run
    from distributed import Client

BATCH = 256  # jousts per task at most: a task costs the scheduler about a millisecond
RETRIES = 3  # a batch that raises is tried again this often (a lost worker's are rerun anyway)
CONNECT_TIMEOUT = "10s"
Local = TypeVar("Local", Executor, None)  # what runs jousts without a cluster

_compiled = ProgramCache()  # on a worker: the programs earlier batches compiled


def joust_batch(pairs: list[Pair], stats: bool, *code: dict[str, bytes]) -> bytes:
    """The task a worker runs: a batch of jousts (the code arrives scattered,
    in dictionaries of hash -> code), with their battle statistics if `stats`.

    The batch comes back as one bytes object: every joust's outcomes (int8,
    in the batch's order), then their game cycles (int64), then with
    statistics the size of each joust's packed statistics (int64) and those
    (hill.engine.packing: about 1.1 KB a joust, not the engine's 14 KB).
    The client knows the pairs already, and one flat object costs the
    cluster's serialization next to nothing, where a list of per-joust
    objects is walked item by item.
    """
    code_of = ChainMap(*code).__getitem__
    outcomes = np.empty((len(pairs), engine.BATTLES), dtype=np.int8)
    cycles = np.empty(len(pairs), dtype=np.int64)
    figures = []
    for i, (left, right) in enumerate(pairs):
        programs = _compiled.get(left, code_of), _compiled.get(right, code_of)
        result = engine.joust(*programs, stats=stats)
        outcomes[i] = result.outcomes
        cycles[i] = result.game_cycles
        if result.records is not None:
            figures.append(packing.pack(result.records))
    sizes = np.array([len(f) for f in figures], dtype=np.int64)
    return outcomes.tobytes() + cycles.tobytes() + sizes.tobytes() + b"".join(figures)


def unpack_batch(raw: bytes, count: int) -> list[engine.JoustResult]:
    """The results of a batch of `count` jousts as `joust_batch` packed them."""
    size = count * engine.BATTLES
    outcomes = np.frombuffer(raw, dtype=np.int8, count=size).reshape(count, engine.BATTLES)
    cycles = np.frombuffer(raw, dtype=np.int64, offset=size, count=count)
    records: list[np.ndarray | None] = [None] * count
    at = size + 8 * count
    if len(raw) > at:  # with statistics
        sizes = np.frombuffer(raw, dtype=np.int64, offset=at, count=count)
        at += 8 * count
        for i, length in enumerate(sizes.tolist()):
            records[i] = packing.unpack(raw[at : at + length])
            at += length
    return [
        engine.JoustResult(tuple(row), game_cycles=int(c), records=r)
        for row, c, r in zip(outcomes.tolist(), cycles.tolist(), records, strict=True)
    ]


@contextlib.contextmanager
def executor_for(
    scheduler: str | None, local: Local, *, stats: bool = True
) -> Iterator[Local | DaskExecutor]:
    """`local` when no scheduler is given, else a DaskExecutor on `scheduler`
    (jousts with their statistics if `stats`) for the time of the `with`
    (Dask itself is loaded only then)."""
    if not scheduler:
        yield local
        return
    with DaskExecutor(scheduler, stats=stats) as executor:
        # (after distributed set its logging up) the client logs a lost scheduler
        # with a traceback; the TournamentError raised says it in one line
        quiet("distributed.client")
        yield executor


class DaskExecutor:
    """The arena's executor on the Dask cluster whose scheduler is at `address`.

    Use it as a context manager: it connects on entry and disconnects on exit.
    """

    def __init__(
        self,
        address: str,
        *,
        batches_per_thread: int = 4,
        worker_timeout: float = 60,
        stats: bool = True,
    ) -> None:
        self.address = address
        self.stats = stats  # play with the battle statistics (hill.engine.packing)
        self.batches_per_thread = batches_per_thread
        self.worker_timeout = worker_timeout  # seconds to wait for a first worker
        self.client: Client | None = None
        # the programs' code on the cluster: dictionaries (hash -> code), one Future each
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

    def __call__(self, pairs: Sequence[Pair], code_of: CodeOf) -> Iterator[Played]:
        from distributed import as_completed

        client = self.client
        if client is None:
            raise RuntimeError("DaskExecutor is used inside `with`")
        self._send_code(client, {program for pair in pairs for program in pair}, code_of)
        threads = max(1, sum(client.nthreads().values()))
        tasks = {
            client.submit(
                joust_batch,
                batch,
                self.stats,
                *self._code_for(batch),
                retries=RETRIES,
                pure=False,
            ): batch
            for batch in engine.batches(pairs, self.batches_per_thread * threads, BATCH)
        }
        for task in as_completed(tasks, loop=client.loop):
            batch = tasks[task]
            try:
                results = unpack_batch(task.result(), len(batch))
            except Exception as error:  # whatever the cluster raised, said in one line
                message = f"the Dask cluster failed a batch of jousts: {error}"
                raise TournamentError(message) from None
            for pair, result in zip(batch, results, strict=True):
                yield Played(pair, result)

    def _send_code(self, client: Client, programs: set[str], code_of: CodeOf) -> None:
        """Send the code of the programs the workers lack, in one dictionary,
        to every worker."""
        new = {program: code_of(program) for program in sorted(programs - self.sent)}
        if new:
            # in a list: scatter sends the dictionary as one object, not one per item
            (future,) = client.scatter([new], broadcast=True, hash=False)
            self.scattered.append((frozenset(new), future))
            self.sent |= new.keys()

    def _code_for(self, batch: Sequence[Pair]) -> list[object]:
        """The scattered code dictionaries a batch needs (a task depends on few)."""
        programs = {program for pair in batch for program in pair}
        return [future for sent, future in self.scattered if sent & programs]
