"""A big tournament and a flood of page requests, on a real bot process with
its web report and ngircd (the small version of bench/big_pages.py): an
archive of 160 programs and its round robin (12,720 matches) are served in
pieces whose union is exactly the tournament's result as the tool contract
gives it (matches, sample battles, standings, the crosstable, the reality
show); then 200 requests at once over the heaviest pages are all answered
while a player is answered on IRC.  Latency and memory are printed."""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support import ircservers
from support.botharness import CHANNEL, run
from support.botprocess import BotProcess
from support.webbot import family, player, rank_latency, web_bot, web_up
from support.webhill import get

from bot.ircd import Ngircd
from hill.config import HillSettings
from hill.engine.arena import oriented
from hill.engine.varied import reference_pool, varied_pool
from hill.store.jousts import read_jousts
from hill.web.tournaments import data as tournament_data
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments

ngircd = ircservers.ngircd  # the fixture
PROGRAMS = 160
MATCHES = PROGRAMS * (PROGRAMS - 1) // 2
HEAVY = [
    "/",
    "/matrix",
    "/ladder",
    "/tournaments",
    "/history",
    "/history.atom",
    "/tournament/1",
    "/api/tournament/1",
    "/tournament/1/round/1?page=3",
    "/tournament/1/crosstable?rows=2&columns=3",
]


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The hill's folder, and its tournament as the whole page gives it."""
    folder = tmp_path_factory.mktemp("big")
    hill = Hill(HillSettings(data_dir=folder / "hill", size=10), jobs=2)  # as BotProcess
    pool = (reference_pool() + varied_pool(PROGRAMS, seed=3))[:PROGRAMS]
    for i, (_, code) in enumerate(pool):
        hill.challenge(f"player{i % 7}", f"p{i:03d}", code)
    tournaments = HillTournaments(hill)
    view = tournaments.run(tournaments.create("round-robin", "archive", started_by="test"))
    results = read_jousts(hill.db, list(view.programs.values()))

    def outcomes(a: str, b: str) -> Any:
        return results.between(a, b) if oriented(a, b)[0] in results else None

    whole = tournament_data.detail(view, outcomes)
    whole["crosstable"] = tournament_data.crosstable(view.result, whole["samples"])
    hill.close()
    yield folder, whole


@pytest.fixture(scope="module")
def hillbot(expected: tuple[Path, dict[str, Any]], ngircd: Ngircd) -> Iterator[BotProcess]:
    folder, _ = expected
    bot, url = web_bot(folder, ngircd.port, "bigbot")
    bot.url = url  # type: ignore[attr-defined]
    bot.start()
    try:
        web_up(url, timeout=60)
        yield bot
    finally:
        bot.stop()


def api(bot: BotProcess, path: str) -> Any:
    reply = get(bot.url.rstrip("/") + path)  # type: ignore[attr-defined]
    assert reply.status == 200, (path, reply.text[:300])
    return reply.json()


def test_a_big_tournament_in_pieces_is_the_whole_result(
    hillbot: BotProcess, expected: tuple[Path, dict[str, Any]]
) -> None:
    _, whole = expected
    result = whole["result"]
    assert len(result["rounds"][0]["matches"]) == MATCHES
    page = api(hillbot, "/api/tournament/1")
    assert page["paged"] and page["matches_committed"] == MATCHES
    assert page["result"]["standings"] == result["standings"]
    assert {k: page["result"][k] for k in ("format", "seed", "entrants", "ended")} == {
        k: result[k] for k in ("format", "seed", "entrants", "ended")
    }
    (round_,) = page["result"]["rounds"]
    assert round_["matches"] == [] and round_["matches_count"] == MATCHES
    assert page["eliminations"] == whole["eliminations"]
    assert page["programs"] == whole["programs"]
    # the round's pages: every match, in order, with its sample battle
    matches, samples = [], []
    for link in page["pieces"]["rounds"][0]:
        piece = api(hillbot, link)
        matches += [{k: m[k] for k in ("a", "b", "margin")} for m in piece["matches"]]
        samples += [{k: m[k] for k in ("tape", "polarity")} for m in piece["matches"]]
    assert matches == result["rounds"][0]["matches"]
    assert samples == whole["samples"][0]
    # an entrant's matches, from its side
    name = result["standings"][17]["name"]
    mine = api(hillbot, "/api/tournament/1/entrant/" + urllib.parse.quote(name))
    assert len(mine["matches"]) == PROGRAMS - 1
    for m in mine["matches"]:
        cell = whole["crosstable"]["rows"][whole["crosstable"]["names"].index(name)][
            whole["crosstable"]["names"].index(m["opponent"])
        ]
        assert (m["margin"], m["tape"], m["polarity"]) == (
            cell["margin"],
            cell["tape"],
            cell["polarity"],
        )
    # the crosstable's tiles make the whole crosstable
    tiles = page["pieces"]["crosstable"]
    rows: list[list[Any]] = [[] for _ in range(PROGRAMS)]
    for tile_row in tiles:
        for link in tile_row:
            tile = api(hillbot, link)
            first = tile["first_rank_row"] - 1
            for i, cells in enumerate(tile["cells"]):
                rows[first + i] += cells
    assert rows == whole["crosstable"]["rows"]
    # the reality show's pages: every stage
    stages = [
        s for link in page["pieces"]["reality_show"] for s in api(hillbot, link)["reality_show"]
    ]
    assert stages == result["reality_show"]
    # and each piece as a page
    for path in [*HEAVY[6:], "/tournament/1/entrant/" + urllib.parse.quote(name)]:
        reply = get(hillbot.url.rstrip("/") + path)  # type: ignore[attr-defined]
        assert reply.status == 200 and "Traceback" not in reply.text, path


async def flood(base: str, paths: list[str], count: int) -> tuple[list[float], int]:
    """`count` requests at once, each retried as told after a 503: the
    seconds each took, and how many 503s came."""
    told = 0

    async def one(session: aiohttp.ClientSession, path: str) -> float:
        nonlocal told
        started = time.monotonic()
        for _ in range(200):
            async with session.get(base + path) as response:
                await response.read()
                if response.status != 503:
                    assert response.status == 200, (path, response.status)
                    return time.monotonic() - started
                told += 1
                await asyncio.sleep(float(response.headers["Retry-After"]))
        raise AssertionError(f"{path}: always busy")

    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        took = await asyncio.gather(*(one(session, paths[i % len(paths)]) for i in range(count)))
    return list(took), told


def test_a_big_tournaments_strategy_map_is_of_its_leaders(
    hillbot: BotProcess, expected: tuple[Path, dict[str, Any]]
) -> None:
    """The strategy map of a tournament in pieces: its first entrants in
    standings order (read from its table, not its whole page)."""
    _, whole = expected
    leaders = [row["name"] for row in whole["result"]["standings"]]
    strategy = api(hillbot, "/api/tournament/1/strategy")
    assert strategy["size"] == PROGRAMS
    assert sorted(strategy["programs"]) == sorted(leaders[: strategy["shown"]])
    assert 0 < strategy["shown"] < PROGRAMS
    page = get(bot_url(hillbot) + "/tournament/1/strategy")
    assert page.status == 200 and leaders[0] in page.text


def bot_url(bot: BotProcess) -> str:
    return bot.url.rstrip("/")  # type: ignore[attr-defined,no-any-return]


def rss(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += int(status.split("VmRSS:")[1].split()[0]) << 10
    return total


def test_200_requests_at_once_on_the_heaviest_pages(hillbot: BotProcess) -> None:
    assert hillbot.process is not None
    base = hillbot.url.rstrip("/")  # type: ignore[attr-defined]

    async def scenario() -> None:
        ann = await player("ann", hillbot.port, hillbot.nick)
        ann.say(CHANNEL, "!bfjoust-rank player0.p000")
        await ann.reply(hillbot.nick, "player0.p000", 60)
        before = rss(family(hillbot.process.pid))
        peak = before
        for number in (1, 2):
            attack = asyncio.ensure_future(flood(base, HEAVY, 200))
            latencies = []
            while not attack.done():
                latencies.append(await rank_latency(ann, hillbot.nick, "player0.p000", 60))
                peak = max(peak, rss(family(hillbot.process.pid)))
                await asyncio.sleep(0.3)
            took, told = await attack
            print(
                f"round {number}: 200 requests at once, all answered, median"
                f" {sorted(took)[100]:.2f} s, slowest {max(took):.2f} s ({told} x 503, retried);"
                f" IRC answers {[round(x, 2) for x in latencies]}"
            )
        print(f"the bot with its web process: {before >> 20} MB, peak +{(peak - before) >> 20} MB")

    run(scenario(), timeout=600)
