"""The hill's history over HTTP: a stock git client clones, fetches and
pulls it from the web report, shallow or whole, and can never push; a
client that reads its answer slowly holds no turn at git."""

from __future__ import annotations

import contextlib
import gzip
import os
import select
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from support.webhill import Server, build_hill, get, git, reference_programs

from hill.config import HillSettings
from hill.web.history import git_http
from hill.writers.hill import Hill


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    hill = build_hill(tmp_path_factory.mktemp("hill"), reference_programs()[:6], size=5)
    server = Server(hill)
    yield server, hill
    server.stop()
    hill.close()


def commits(repository: Path) -> list[str]:
    return git("log", "--format=%H %an %at %s", cwd=repository).splitlines()


def test_a_clone_holds_every_commit_of_the_hill(served, tmp_path: Path) -> None:
    server, hill = served
    clone = tmp_path / "clone"
    git("clone", "--quiet", f"{server.url}/hill.git", clone)
    origin = hill.settings.data_dir / "hill-repo"
    assert commits(clone) == commits(origin)
    assert len(commits(clone)) == 6
    assert git("status", "--porcelain", cwd=clone) == ""
    assert (clone / "report.txt").read_text() == (origin / "report.txt").read_text()


def test_a_shallow_clone_then_fetch_and_pull_get_new_commits(served, tmp_path: Path) -> None:
    server, hill = served
    clone = tmp_path / "shallow"
    git("clone", "--quiet", "--depth", "1", f"{server.url}/hill.git", clone)
    assert len(commits(clone)) == 1
    hill.challenge("newcomer", "rush", b"(>)*9([-]>)*21")
    git("pull", "--quiet", "--ff-only", cwd=clone)
    assert "by newcomer.rush" in commits(clone)[0]
    assert (clone / "newcomer.rush.bfjoust").read_bytes() == b"(>)*9([-]>)*21"
    git("fetch", "--quiet", "--unshallow", cwd=clone)
    assert commits(clone) == commits(hill.settings.data_dir / "hill-repo")


def test_a_push_is_refused_and_changes_nothing(served, tmp_path: Path) -> None:
    server, hill = served
    origin = hill.settings.data_dir / "hill-repo"
    before = commits(origin)
    clone = tmp_path / "pusher"
    git("clone", "--quiet", f"{server.url}/hill.git", clone)
    (clone / "evil.bfjoust").write_text("[]")
    git("add", "evil.bfjoust", cwd=clone)
    git("commit", "--quiet", "-m", "evil", cwd=clone)
    pushed = subprocess.run(
        ["git", "push", "origin", "HEAD:main"], cwd=clone, capture_output=True, text=True
    )
    assert pushed.returncode != 0
    assert "403" in pushed.stderr
    assert commits(origin) == before
    refused = get(f"{server.url}/hill.git/info/refs?service=git-receive-pack")
    assert refused.status == 403 and "read-only" in refused.text


@pytest.mark.parametrize(
    "path",
    [
        "/hill.git/config",
        "/hill.git/HEAD",
        "/hill.git/objects/info/packs",
        "/hill.git/info/refs",  # the dumb protocol is not served
        "/hill.git/..%2Fhill.sqlite3",
        "/hill.git/%2e%2e/%2e%2e/hill.sqlite3",
        "/hill.git/info/refs?service=git-upload-archive",
    ],
)
def test_nothing_but_the_read_side_of_git_is_reachable(served, path: str) -> None:
    server, _ = served
    reply = get(server.url + path)
    assert reply.status == 404
    assert reply.headers["Content-Type"].startswith("text/plain")
    assert "git clone" in reply.text


def test_an_empty_hill_clones_as_an_empty_repository(tmp_path: Path) -> None:
    hill = build_hill(tmp_path / "hill", [])
    server = Server(hill)
    try:
        said = git("clone", f"{server.url}/hill.git", tmp_path / "empty")
        assert "empty repository" in said
    finally:
        server.stop()
        hill.close()


@pytest.fixture
def busy(tmp_path: Path):
    """A hill of its own (these tests change it), served."""
    hill = build_hill(tmp_path / "hill", reference_programs()[:4], size=5)
    server = Server(hill)
    yield server, hill
    server.stop()
    hill.close()


def traced_git(*args: str | Path, cwd: Path) -> str:
    """git with its HTTP exchange traced (headers only): what it said."""
    env = {**os.environ, "GIT_TRACE_CURL": "1", "GIT_TRACE_CURL_NO_DATA": "1"}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def add_changes(hill, count: int, owner: str = "later") -> None:
    for number in range(count):
        hill.challenge(owner, f"p{number}", f"(>)*{8 + number % 3}([-]>)*21".encode())


@pytest.mark.parametrize("protocol", ["2", "0"])
def test_a_fetch_that_negotiates_with_a_compressed_request(
    busy, tmp_path: Path, protocol: str
) -> None:
    """A clone several commits behind, holding many commits the server
    lacks: git sends its haves in rounds, and the longer requests
    compressed (Content-Encoding: gzip); every fetch and pull succeeds."""
    server, hill = busy
    clone = tmp_path / "clone"
    git("clone", "--quiet", f"{server.url}/hill.git", clone)
    git("config", "protocol.version", protocol, cwd=clone)
    for number in range(60):  # the player's own commits, which the hill never saw
        (clone / "mine.txt").write_text(f"{number}\n")
        git("add", "mine.txt", cwd=clone)
        # dated after every commit of the hill, so that git's first round of
        # haves (the 16 newest) holds none the server knows, whatever the clock
        date = f"@{2_000_000_000 + number} +0000"
        env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "--quiet",
                "-m",
                f"mine {number}",
            ],
            cwd=clone,
            env=env,
            check=True,
        )
    add_changes(hill, 5)
    said = traced_git("fetch", "origin", cwd=clone)
    if protocol == "2":  # (version 0 negotiates in smaller requests here)
        assert "Content-Encoding: gzip" in said  # the case that failed
    origin = hill.settings.data_dir / "hill-repo"
    assert git("rev-parse", "origin/main", cwd=clone) == git("rev-parse", "HEAD", cwd=origin)
    # and a clone merely behind pulls
    behind = tmp_path / "behind"
    git("clone", "--quiet", f"{server.url}/hill.git", behind)
    add_changes(hill, 4, "again")
    git("pull", "--quiet", "--ff-only", cwd=behind)
    assert commits(behind) == commits(origin)


@pytest.mark.parametrize(
    ("encoding", "body", "status"),
    [
        # the limit counts the request as git reads it: inflated
        ("gzip", gzip.compress(b"0000" * (3 << 20), mtime=0), 413),  # 12 MB of flushes in 12 KB
        ("x-gzip", gzip.compress(b"0000", mtime=0), 415),  # not inflated: git would misread it
    ],
    ids=["gzip", "x-gzip"],  # the same in every xdist worker (a body's repr need not be)
)
def test_a_compressed_request_git_could_not_read_is_refused(
    busy, encoding: str, body: bytes, status: int
) -> None:
    server, _ = busy
    request = urllib.request.Request(
        f"{server.url}/hill.git/git-upload-pack",
        data=body,
        headers={
            "Content-Type": "application/x-git-upload-pack-request",
            "Content-Encoding": encoding,
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == status


@pytest.mark.parametrize(
    "query",
    [
        "service=git-upload-pack&service=git-receive-pack",
        "service=git-receive-pack&service=git-upload-pack",
        "service=git-upload-pack&service=git-upload-pack&service=git-receive-pack",
        "service=git-upload-pack&SERVICE=git-receive-pack",
        "service=git-upload-pack&service=",
    ],
)
def test_every_service_value_is_checked(served, query: str) -> None:
    """git http-backend reads one `service` value, the app another: each
    one must be the read side (a push is refused, whatever comes first)."""
    server, _ = served
    reply = get(f"{server.url}/hill.git/info/refs?{query}")
    assert reply.status in (403, 404)
    if "receive-pack" in query.split("&SERVICE")[0]:
        assert reply.status == 403 and "read-only" in reply.text


def incompressible_program(size: int, seed: int) -> bytes:
    """A valid program of `size` bytes, nearly all of them random comment
    bytes (no instruction character), which no compression shrinks."""
    comment = np.array([b for b in range(256) if chr(b) not in "+-<>.,[](){}*%0123456789"])
    noise = np.random.default_rng(seed).choice(comment, size).astype(np.uint8).tobytes()
    return b"(>)*9([-]>)*21" + noise


def test_clients_that_read_slowly_hold_no_turn(tmp_path: Path) -> None:
    """4 clones that stop reading (SIGSTOP) while a history of about 18 MB
    comes to them (more than the sockets' buffers hold) take none of the
    4 turns at git from the clone after them."""
    size = 6 << 20
    hill = Hill(HillSettings(data_dir=tmp_path / "hill", size=5, max_program_bytes=size + 64))
    for number in range(3):
        hill.challenge("big", f"p{number}", incompressible_program(size, number))
    server = Server(hill)
    stopped = []
    try:
        for number in range(4):
            clone = subprocess.Popen(
                ["git", "clone", "--quiet", f"{server.url}/hill.git", tmp_path / f"slow{number}"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(0.3)  # its request sent, its answer coming
            clone.send_signal(signal.SIGSTOP)
            stopped.append(clone)
        started = time.monotonic()
        git("clone", "--quiet", f"{server.url}/hill.git", tmp_path / "reader")
        print(f"a clone beside 4 stopped ones: {time.monotonic() - started:.1f} s")
        assert (tmp_path / "reader" / "big.p2.bfjoust").stat().st_size == size + 14
    finally:
        for clone in stopped:
            clone.kill()
            clone.wait()
        server.stop()
        hill.close()


def trickle(url: str, stop: threading.Event) -> bytes:
    """A fetch whose body comes a byte every 0.2 s (of 100,000 announced),
    until the server answers or `stop`; the answer."""
    host, port = url.removeprefix("http://").split(":")
    head = (
        "POST /hill.git/git-upload-pack HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        "Content-Type: application/x-git-upload-pack-request\r\nContent-Length: 100000\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(head.encode())
        while not stop.is_set():
            if select.select([connection], [], [], 0.2)[0]:
                break
            try:
                connection.sendall(b"0")
            except OSError:
                break
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := connection.recv(65536):
                answer += chunk
    return answer


def test_clients_that_send_slowly_hold_no_turn(served, monkeypatch, tmp_path: Path) -> None:
    """8 fetches trickling their request (twice the turns at git) take no
    turn from a clone beside them; each is cut off with a 408 once it has
    taken BODY_SECONDS."""
    server, hill = served
    monkeypatch.setattr(git_http, "BODY_SECONDS", 5.0)
    stop = threading.Event()
    with ThreadPoolExecutor(8) as pool:
        trickling = [pool.submit(trickle, server.url, stop) for _ in range(8)]
        try:
            time.sleep(1)
            started = time.monotonic()
            clone = tmp_path / "clone"
            git("clone", "--quiet", f"{server.url}/hill.git", clone)
            took = time.monotonic() - started
            still = sum(not t.done() for t in trickling)
            answers = [t.result(timeout=30) for t in trickling]
        finally:
            stop.set()
    print(f"a clone beside 8 trickling fetches: {took:.1f} s")
    assert commits(clone) == commits(hill.settings.data_dir / "hill-repo")
    assert still == 8  # they were all there while it cloned
    assert all(a.startswith(b"HTTP/1.1 408 ") for a in answers), [a[:100] for a in answers]


def test_the_writers_refs_are_not_served(served, tmp_path: Path) -> None:
    """refs/hill/* (a history the writer set aside) are neither listed nor
    fetched by name, nor mirrored."""
    server, hill = served
    origin = hill.settings.data_dir / "hill-repo"
    aside = git("commit-tree", "-p", "HEAD", "-m", "set aside", "HEAD^{tree}", cwd=origin).strip()
    git("update-ref", "refs/hill/diverged-1", aside, cwd=origin)
    try:
        clone = tmp_path / "clone"
        git("clone", "--quiet", f"{server.url}/hill.git", clone)
        for protocol in ("0", "2"):
            said = git(
                "-c",
                f"protocol.version={protocol}",
                "fetch",
                "origin",
                "refs/hill/diverged-1",
                cwd=clone,
                check=False,
            )
            assert "couldn't find remote ref" in said, said
        mirror = tmp_path / "mirror"
        git("clone", "--quiet", "--mirror", f"{server.url}/hill.git", mirror)
        assert "refs/hill/" not in git("for-each-ref", cwd=mirror)
        assert "refs/heads/main" in git("for-each-ref", cwd=mirror)
    finally:
        git("update-ref", "-d", "refs/hill/diverged-1", cwd=origin)
