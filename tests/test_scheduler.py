"""The hill's scheduler (hill/scheduler): turns in one order, work handed
over between pieces, and the bell that wakes the bot when another process
changes the hill: a real second process, a real SQLite file."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bot.runner import Answer, Runner
from hill.config import HillSettings, IrcSettings, Settings, WebSettings
from hill.errors import Stopped
from hill.scheduler import Priority, Scheduler, Turns
from hill.store.bell import WEB, WEB_SLOTS, listen
from hill.store.requests import RequestBook
from hill.store.tables import Request
from hill.writers.hill import Hill

ROOT = Path(__file__).resolve().parents[1]
RUSH = b"(>)*9([-]>)*21"


def run(coroutine: object, timeout: float = 60.0) -> object:
    async def limited() -> object:
        async with asyncio.timeout(timeout):
            return await coroutine  # type: ignore[misc]

    return asyncio.run(limited())


def test_the_most_urgent_waiting_work_goes_next() -> None:
    async def scenario() -> list[str]:
        turns = Turns()
        order: list[str] = []
        await turns.take(Priority.TOURNAMENT)  # the hill is a tournament's

        async def wants(priority: Priority, name: str) -> None:
            async with turns.turn(priority):
                order.append(name)

        waiting = [
            asyncio.create_task(wants(Priority.BACKFILL, "backfill")),
            asyncio.create_task(wants(Priority.LADDER, "ladder")),
            asyncio.create_task(wants(Priority.REQUEST, "first request")),
            asyncio.create_task(wants(Priority.CONTEST, "contest")),
            asyncio.create_task(wants(Priority.REQUEST, "second request")),
        ]
        await asyncio.sleep(0)  # every one waits now
        assert turns.urgent == Priority.REQUEST
        turns.give_back()
        await asyncio.gather(*waiting)
        assert turns.holder is None
        return order

    assert run(scenario()) == ["first request", "second request", "contest", "ladder", "backfill"]


def test_work_in_a_thread_hands_its_turn_to_a_request_between_two_pieces() -> None:
    """A tournament's thread holds the turn; a request comes: it goes at
    the next piece, and the tournament goes on after it."""

    async def scenario() -> list[str]:
        turns = Turns()
        log: list[str] = []
        piece_done = threading.Event()
        go_on = threading.Event()

        def tournament() -> None:
            for piece in range(3):
                turns.between(Priority.TOURNAMENT)
                log.append(f"piece {piece}")
                piece_done.set()
                go_on.wait()

        async def request() -> None:
            async with turns.turn(Priority.REQUEST):
                log.append("request")

        async with turns.turn(Priority.TOURNAMENT):
            playing = asyncio.create_task(asyncio.to_thread(tournament))
            await asyncio.to_thread(piece_done.wait)
            asked = asyncio.create_task(request())
            await asyncio.sleep(0)
            assert turns.urgent == Priority.REQUEST and not asked.done()
            go_on.set()  # the piece under way ends; the next one waits for the request
            await asked
            await playing
        return log

    assert run(scenario()) == ["piece 0", "request", "piece 1", "piece 2"]


def test_closed_turns_stop_waiting_work_and_work_in_a_thread() -> None:
    async def scenario() -> None:
        turns = Turns()
        await turns.take(Priority.REQUEST)
        waiting = asyncio.create_task(turns.take(Priority.LADDER))
        await asyncio.sleep(0)
        turns.close()
        with pytest.raises(Stopped):
            await waiting
        with pytest.raises(Stopped):
            await asyncio.to_thread(turns.between, Priority.TOURNAMENT)
        with pytest.raises(Stopped):
            await turns.take(Priority.REQUEST)

    run(scenario())


def test_a_cancelled_waiter_leaves_its_place() -> None:
    async def scenario() -> None:
        turns = Turns()
        await turns.take(Priority.TOURNAMENT)
        quitter = asyncio.create_task(turns.take(Priority.REQUEST))
        stayer = asyncio.create_task(turns.take(Priority.LADDER))
        await asyncio.sleep(0)
        quitter.cancel()
        await asyncio.gather(quitter, return_exceptions=True)
        assert turns.urgent == Priority.LADDER
        turns.give_back()
        await stayer
        assert turns.holder == Priority.LADDER

    run(scenario())


def _record_elsewhere(database: Path) -> None:
    """Another process records a request in the hill's book (as the web
    report's upload form does), then ends."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from hill.store.database import Database\n"
        "from hill.store.requests import RequestBook\n"
        "db = Database(Path(sys.argv[1]), writer=False)\n"
        "RequestBook(db).add(limit=10, nick='zoe', channel='#c', origin='web', owner='zoe',\n"
        "                    command='challenge', name='rush', code=b'(>)*9([-]>)*21')\n"
        "db.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(database)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_a_request_recorded_by_another_process_wakes_the_runner(tmp_path: Path) -> None:
    """No interval: the other process's commit rings the hill's bell."""
    hill = Hill(HillSettings(data_dir=tmp_path / "var"), jobs=1)
    database = hill.db.path
    settings = Settings(hill=hill.settings, irc=IrcSettings(), web=WebSettings())
    answers: list[str] = []
    answered = asyncio.Event()

    def say(request: Request, answer: Answer, on_sent: object) -> None:
        answers.append(answer.text)
        answered.set()
        on_sent()  # type: ignore[operator]

    async def scenario() -> None:
        scheduler = Scheduler(hill)
        runner = Runner(hill, settings, say, lambda owner: None, scheduler.turns)
        scheduler.on_change(runner.wakeup.set)
        await scheduler.start()
        await runner.start()
        try:
            await asyncio.sleep(0.2)  # the runner has read the empty book, and sleeps
            assert not answers
            await asyncio.to_thread(_record_elsewhere, database)
            await answered.wait()  # the timeout is run()'s: no poll would come
        finally:
            await runner.close()
            scheduler.close()

    try:
        run(scenario(), timeout=30)
    finally:
        hill.close()
    assert len(answers) == 1 and "rush" in answers[0]
    assert RequestBook(hill.db).next_open() is None


def test_a_process_does_not_hear_its_own_rings(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path / "var"), jobs=1)
    heard: list[int] = []

    async def scenario() -> None:
        scheduler = Scheduler(hill)
        scheduler.on_change(lambda: heard.append(1))
        await scheduler.start()
        try:
            await asyncio.to_thread(hill.challenge, "alice", "rush", RUSH)  # this process commits
            await asyncio.sleep(0.3)
            assert heard == []
            await asyncio.to_thread(_record_elsewhere, hill.db.path)
            async with asyncio.timeout(10):
                while not heard:
                    await asyncio.sleep(0.01)
        finally:
            scheduler.close()

    try:
        run(scenario())
    finally:
        hill.close()


def test_no_polling_interval_is_left_in_the_hill_or_the_bot() -> None:
    """Work is woken: no constant names a polling interval, and no loop
    waits on an event with a timeout to look again."""
    found = []
    for path in [*ROOT.glob("hill/**/*.py"), *ROOT.glob("bot/**/*.py")]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bPOLL\w*\s*=|POLL_SECONDS|poll_seconds|_POLL\b", line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_every_web_report_of_a_hill_hears_its_bell(tmp_path: Path) -> None:
    """Web reports listen each at a slot of its own (the bot, in its own
    process, as well): a commit by another process wakes them all; past
    WEB_SLOTS, one is told it cannot listen (None) rather than fail."""
    hill = Hill(HillSettings(data_dir=tmp_path / "var"), jobs=1)

    async def scenario() -> None:
        woken = [asyncio.Event() for _ in range(WEB_SLOTS)]
        bells = [await listen(hill.db.path, event.set, WEB) for event in woken]
        assert all(bells) and await listen(hill.db.path, lambda: None, WEB) is None
        try:
            await asyncio.to_thread(_record_elsewhere, hill.db.path)
            async with asyncio.timeout(10):
                await asyncio.gather(*(event.wait() for event in woken))
        finally:
            for bell in bells:
                assert bell is not None
                bell.close()

    try:
        run(scenario())
    finally:
        hill.close()
