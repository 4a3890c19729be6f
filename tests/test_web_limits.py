"""The web report as a process of its own under hostile load: malformed
requests cost one log line each, and a flood of long battles gets bounded
answers (503 with Retry-After beyond the queue), pieces that rebuild exactly
the engine's battles, and bounded memory.  No assertion on speed."""

from __future__ import annotations

import itertools
import re
import socket
import threading
import time
from pathlib import Path

import pytest
from support.webhill import (
    Reply,
    WebProcess,
    battle_query,
    build_hill,
    fetch_battle,
    get,
    long_battles,
    reference_programs,
    same_battle,
)

from hill.writers.hill import Hill

MALFORMED = {
    "request line over 8190 bytes": b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "header over 8190 bytes": b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
    "header without a colon": b"GET / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n",
    "bad content length": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n",
    "not HTTP at all": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
}


def raw_request(url: str, data: bytes) -> bytes:
    """Send bytes on a fresh connection; what the server answers before it closes."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(data)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


@pytest.fixture(scope="module")
def hill(tmp_path_factory: pytest.TempPathFactory) -> Hill:
    """The 2013 hill's 47 programs, in a folder of their own."""
    folder = tmp_path_factory.mktemp("limits")
    hill = build_hill(folder / "var", reference_programs())
    yield hill
    hill.close()


def test_a_malformed_request_is_one_log_line(hill: Hill) -> None:
    folder = Path(hill.settings.data_dir).parent
    web = WebProcess(folder)
    try:
        for _round, (what, data) in itertools.product(range(10), MALFORMED.items()):
            answer = raw_request(web.url, data)
            assert answer.startswith(b"HTTP/1.") and b" 400 " in answer.split(b"\r\n")[0], what
        assert get(f"{web.url}/api/matrix").status == 200  # and it still serves
    finally:
        assert web.stop() == 0
    log = web.log()
    bad = [line for line in log.splitlines() if "bad HTTP request" in line]
    assert len(bad) == 10 * len(MALFORMED), log[-3000:]
    assert all(len(line) < 400 for line in bad)
    assert "Traceback" not in log and "Error handling request" not in log
    assert "Got more than 8190 bytes" in log  # aiohttp's reason, on the line
    # one line each, the good request's access line, and start and stop lines
    assert len(log.splitlines()) <= len(bad) + 10, log[-3000:]
    print(f"{len(bad)} malformed requests: {len(log)} bytes of log")


def get_politely(url: str, retries: int = 60) -> tuple[Reply, int]:
    """GET, waiting as told after each 503; the reply and how many 503s came first."""
    for busy in range(retries):
        reply = get(url, {"Accept-Encoding": "gzip"})
        if reply.status != 503:
            return reply, busy
        assert reply.json()["status"] == 503
        time.sleep(int(reply.headers["Retry-After"]))
    raise AssertionError(f"still busy after {retries} tries: {url}")


def test_a_flood_of_long_battles_is_bounded(hill: Hill) -> None:
    """120 requests at once over 40 distinct 100000-cycle battles, against a
    web process that traces one battle at a time with one waiting."""
    battles = list(itertools.islice(long_battles(hill.queries.standings()), 40))
    assert len(battles) == 40
    folder = Path(hill.settings.data_dir).parent
    web = WebProcess(folder, "trace_workers = 1\ntrace_queue = 1\ntrace_cache_mb = 4\n")
    try:
        urls = [f"{web.url}/api/trace?{battle_query(*b[:4])}" for b in battles]
        get(urls[0])  # warm: the programs' code read once
        before = web.rss()
        peak = before
        # all 120 requests written before any answer is read
        host, port = web.url.removeprefix("http://").split(":")
        connections = []
        for url in urls * 3:
            connection = socket.create_connection((host, int(port)), timeout=60)
            request = f"GET {url.removeprefix(web.url)} HTTP/1.1\r\nHost: x\r\nConnection: close"
            connection.sendall(request.encode() + b"\r\n\r\n")
            connections.append(connection)
        statuses = []
        for connection in connections:
            with connection:
                answer = b""
                while chunk := connection.recv(65536):
                    answer += chunk
            head = answer.split(b"\r\n\r\n", 1)[0].decode()
            statuses.append(int(head.split()[1]))
            if statuses[-1] == 503:
                assert re.search(r"(?im)^Retry-After: \d+\r?$", head), head
            peak = max(peak, web.rss())
        assert set(statuses) <= {200, 503}
        assert statuses.count(503) > 0 and statuses.count(200) > 0, statuses
        # every battle is served in the end, to a client that waits as told,
        # and its pieces rebuild exactly the engine's arrays
        answered: list[int] = []

        def fetch(i: int) -> None:
            reply, _busy = get_politely(urls[i])
            assert reply.status == 200
            answered.append(i)

        threads = [threading.Thread(target=fetch, args=(i,)) for i in range(len(urls))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
            peak = max(peak, web.rss())
        assert sorted(answered) == list(range(len(urls)))
        for (*_, expected), url in zip(battles[:3], urls, strict=False):
            assert same_battle(fetch_battle(url), expected)
        growth = peak - before
        print(
            f"{len(statuses)} requests at once: {statuses.count(200)} answered,"
            f" {statuses.count(503)} told to retry; memory {before >> 20} MB,"
            f" peak +{growth >> 20} MB"
        )
        assert growth < 300 << 20  # generous: one battle's raw arrays are 4 MB
    finally:
        assert web.stop() == 0
