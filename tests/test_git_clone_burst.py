"""A burst of clones waits its turn: 20 real `git clone`s at once of the
hill's history, through the real bridge to `git http-backend`, all succeed
on their first try (git does not retry a 503), while the git slots are
held; a queue that is full, or a wait past its limit, is still a 503.  The
writer keeps the history packed, with a bitmap, so that each clone is sent
one ready pack (bench/clone_burst.py measures a burst of 50 against a real
bot)."""

from __future__ import annotations

import asyncio
import fcntl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from support.webhill import git

from hill.config import HillSettings
from hill.history.repository import LOOSE_LIMIT, PACKING
from hill.web.history.git_http import GIT, GitHttp, serve_git
from hill.web.urls import PATHS
from hill.writers.hill import Hill

CLONES = 20


def program(i: int) -> bytes:
    return f"(>)*{2 + i % 7}([-]>)*{10 + i % 19}".encode()


@pytest.fixture(scope="module")
def hill(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hill]:
    hill = Hill(HillSettings(data_dir=tmp_path_factory.mktemp("burst") / "var", size=5), jobs=2)
    for i in range(40):
        hill.challenge(f"player{i % 5}", f"p{i % 7}", program(i))
    yield hill
    hill.close()


class Bridge:
    """GitHttp alone on a loop in a thread, its slots within the test's reach."""

    def __init__(self, repository: Path, **options: float) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.bridge = self.call(self._make, repository, options)
        app = web.Application()
        app[GIT] = self.bridge
        app.add_routes([web.get(PATHS["git"], serve_git), web.post(PATHS["git"], serve_git)])
        self.runner = web.AppRunner(app)
        self.call(self.runner.setup)
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.call(site.start)
        port = self.runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/hill.git"

    @staticmethod
    async def _make(repository: Path, options: dict[str, float]) -> GitHttp:
        return GitHttp(repository, **options)  # type: ignore[arg-type]

    def call(self, function, *args):
        return asyncio.run_coroutine_threadsafe(function(*args), self.loop).result(60)

    def hold(self, slots: int) -> None:
        async def take() -> None:
            for _ in range(slots):
                await self.bridge.slots.acquire()

        self.call(take)

    def release(self, slots: int) -> None:
        for _ in range(slots):
            self.loop.call_soon_threadsafe(self.bridge.slots.release)

    def waiting(self) -> int:
        return self.bridge.waiting

    def stop(self) -> None:
        self.call(self.runner.cleanup)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def clones(url: str, folder: Path, count: int) -> list[subprocess.Popen[str]]:
    return [
        subprocess.Popen(
            ["git", "clone", "--quiet", url, str(folder / f"clone{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]


def wait_until(condition, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_burst_of_clones_all_succeed_first_try(hill: Hill, tmp_path: Path) -> None:
    repository = hill.settings.data_dir / "hill-repo"
    bridge = Bridge(repository, concurrent=2)
    try:
        bridge.hold(2)  # every slot busy: the whole burst has to queue
        burst = clones(bridge.url, tmp_path, CLONES)
        wait_until(lambda: bridge.waiting() == CLONES)  # each asked for the refs
        time.sleep(1)
        bridge.release(2)
        results = [(p.wait(120), p.stderr.read() if p.stderr else "") for p in burst]
    finally:
        bridge.stop()
    assert [status for status, _ in results] == [0] * CLONES, results
    head = git("rev-parse", "HEAD", cwd=repository)
    for i in range(CLONES):
        assert git("rev-parse", "HEAD", cwd=tmp_path / f"clone{i}") == head


def test_a_full_queue_or_a_long_wait_is_a_503(hill: Hill, tmp_path: Path) -> None:
    repository = hill.settings.data_dir / "hill-repo"
    bridge = Bridge(repository, concurrent=1, queue=3, queue_seconds=1.5)
    try:
        bridge.hold(1)
        burst = clones(bridge.url, tmp_path, 5)
        results = [(p.wait(60), p.stderr.read() if p.stderr else "") for p in burst]
        bridge.release(1)
    finally:
        bridge.stop()
    statuses = sorted(status for status, _ in results)
    assert statuses == [128] * 5  # 2 refused at once, 3 after waiting 1.5 s
    assert all("503" in said for _, said in results)


def test_the_writer_keeps_the_history_packed_with_a_bitmap(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path / "var", size=5), jobs=2)
    repository = tmp_path / "var" / "hill-repo"
    for i in range(LOOSE_LIMIT // 4 + 5):  # about four objects a commit
        hill.challenge(f"player{i % 5}", f"p{i % 7}", program(i))
    hill.close()
    with open(repository / ".git" / PACKING) as lock:  # until the repack is done
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert lock.read() == ""  # nothing went wrong
    packs = list((repository / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1 and packs[0].with_suffix(".bitmap").exists()
    loose = git("count-objects", cwd=repository).split()[0]
    assert int(loose) < LOOSE_LIMIT
    assert git("fsck", "--no-progress", cwd=repository).strip() == ""
