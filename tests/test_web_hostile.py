"""Hostile requests to a real bot's web report (the bot process with its web
report and a real ngircd): malformed uploads (a truncated body, a multipart
without a boundary, real curl's `-F 'code=(...'`, a gzip body that is not
gzip) and malformed requests to /hill.git are each a 4xx with a one-line
reason and one log line; a multipart bomb on one's own upload link
costs the bot next to nothing and uses the link up; the Host header is
never reflected into absolute links; static files and thumbnails are not
logged at INFO.  No assertion on speed: IRC answering at all while the web
is attacked is asserted, its latency is printed."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ircservers
from support.botharness import CHANNEL, run
from support.botprocess import BotProcess
from support.webbot import (
    cpu_seconds,
    player,
    rank_latency,
    raw_http,
    status_of,
    upload_link,
    web_bot,
    web_up,
)

from bot.ircd import Ngircd

ngircd = ircservers.ngircd  # the fixture
RUSH = "(>)*9([-]>)*21"
TRAIL = ">(+)*10>(-)*10(>)*6([+]>)*21"
# a real BF Joust program that starts with "(", as many do
PAREN = "(>)*8(>[(+)*5[-]])*21"
CURL_STATUS = ("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}")


@pytest.fixture(scope="module")
def hillbot(tmp_path_factory: pytest.TempPathFactory, ngircd: Ngircd) -> Iterator[BotProcess]:
    """The bot with its web report, with the default limits (1 MB programs)."""
    bot, url = web_bot(tmp_path_factory.mktemp("hostile"), ngircd.port, "hostilebot")
    bot.url = url  # type: ignore[attr-defined]
    bot.start()
    try:
        web_up(url)
        yield bot
    finally:
        bot.stop()


def url_of(bot: BotProcess) -> str:
    return bot.url  # type: ignore[attr-defined,no-any-return]


def log_since(bot: BotProcess, offset: int) -> list[str]:
    return bot.log.read_bytes()[offset:].decode(errors="replace").splitlines()


def multipart_request(
    path: str, body: bytes, content_type: str, length: int | None = None, more: str = ""
) -> bytes:
    """A POST of `body` (`more`: more header lines, each ending in CRLF)."""
    size = len(body) if length is None else length
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {size}\r\n{more}\r\n"
    )
    return head.encode() + body


def form_body(boundary: str, **fields: str) -> bytes:
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in fields.items()
    ]
    return ("".join(parts) + f"--{boundary}--\r\n").encode()


def test_malformed_uploads_are_4xx_with_a_reason(hillbot: BotProcess) -> None:
    assert shutil.which("curl"), "curl is needed"

    async def scenario() -> None:
        alice = await player("alice", hillbot.port, hillbot.nick)
        link = await upload_link(alice, hillbot.nick, hillbot.nick, "parens")
        path = "/" + link.split("/", 3)[3]
        good = form_body("XyZ", code=PAREN)
        start = hillbot.log.stat().st_size

        def attacks() -> dict[str, tuple[int, bytes]]:
            answers = {}
            # the body ends before its Content-Length and the client leaves:
            # nobody to answer, and nothing to log but one line
            cut_short = multipart_request(
                path, good[:40], "multipart/form-data; boundary=XyZ", len(good)
            )
            assert raw_http(link, cut_short, half_close=True) == b""
            # the whole body sent, but the multipart stops mid-part
            cut = good[: good.index(b"\r\n--XyZ--")]
            answers["truncated multipart"] = raw_http(
                link, multipart_request(path, cut, "multipart/form-data; boundary=XyZ")
            )
            answers["no boundary"] = raw_http(
                link, multipart_request(path, good, "multipart/form-data")
            )
            answers["not a form"] = raw_http(
                link, multipart_request(path, PAREN.encode(), "text/plain")
            )
            gzipped = "Content-Encoding: gzip\r\n"
            answers["gzip that is not"] = raw_http(
                link,
                multipart_request(path, good, "multipart/form-data; boundary=XyZ", more=gzipped),
            )
            # and git's endpoint: a body that is not git's protocol, or not gzip
            git = "application/x-git-upload-pack-request"
            answers["git: not git's protocol"] = raw_http(
                link, multipart_request("/hill.git/git-upload-pack", b"hello", git)
            )
            answers["git: gzip that is not"] = raw_http(
                link,
                multipart_request("/hill.git/git-upload-pack", b"hello", git, more=gzipped),
            )
            curl = subprocess.run(
                ["curl", "-s", "-i", "-F", f"code={PAREN}", link],
                capture_output=True,
                timeout=60,
            )
            answers["curl -F 'code=(...'"] = curl.stdout
            return {what: (status_of(answer), answer) for what, answer in answers.items()}

        answers = await asyncio.to_thread(attacks)
        for what, (status, answer) in answers.items():
            assert 400 <= status < 500, (what, answer[:300])
            assert b"Traceback" not in answer and b"went wrong" not in answer, what
            if what.startswith("git"):  # in plain text, as git shows it to its user
                reason = answer.split(b"\r\n\r\n", 1)[1]
                assert reason.count(b"\n") == 1 and b"<" not in reason, (what, reason)
        assert b"protocol error" in answers["git: not git's protocol"][1]  # git's own reason
        assert b"--form-string" in answers["curl -F 'code=(...'"][1]  # says what to do
        lines = log_since(hillbot, start)
        bad = [line for line in lines if "bad request" in line]
        assert len(answers) <= len(bad) <= len(answers) + 1, "\n".join(lines)
        assert len(lines) <= len(answers) + 4, "\n".join(lines)  # and IRC's few
        assert all(len(line) < 400 for line in bad)
        assert not any("Traceback" in line or "Error handling" in line for line in lines)
        # what the hint says works, and the link was still good for it
        sent = await asyncio.to_thread(
            subprocess.run,
            [*CURL_STATUS, "--form-string", f"code={PAREN}", link],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert sent.stdout == "303"
        said = await alice.reply(hillbot.nick, "alice.parens", 60)
        assert "alice.parens" in said

    run(scenario(), timeout=180)


def bomb(boundary: str, parts: int) -> bytes:
    part = f'--{boundary}\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n'.encode()
    return part * parts + f"--{boundary}--\r\n".encode()


def chunked(path: str, body: bytes, boundary: str) -> bytes:
    """The body in chunks of 64 KB, with no Content-Length to refuse it by."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    return head + b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"


def test_a_multipart_bomb_on_ones_own_link(hillbot: BotProcess) -> None:
    """4 posts of 200,000 tiny parts, two with a Content-Length, two chunked;
    the bot's CPU and IRC's answers meanwhile; the link is used up after
    too many failed posts."""
    assert hillbot.process is not None
    pid = hillbot.process.pid

    async def scenario() -> None:
        eve = await player("eve", hillbot.port, hillbot.nick)
        eve.say(CHANNEL, f"!bfjoust bombed {RUSH}")
        await eve.reply(hillbot.nick, "eve.bombed", 60)
        link = await upload_link(eve, hillbot.nick, hillbot.nick, "bomb")
        path = "/" + link.split("/", 3)[3]
        body = bomb("B", 200_000)
        posts = [
            multipart_request(path, body, "multipart/form-data; boundary=B"),
            chunked(path, body, "B"),
        ] * 2
        cpu = cpu_seconds(pid)
        attack = asyncio.gather(*(asyncio.to_thread(raw_http, link, post) for post in posts))
        latencies = []
        while not attack.done():
            latencies.append(await rank_latency(eve, hillbot.nick, "eve.bombed", 30))
            await asyncio.sleep(0.2)
        answers = await attack
        used = cpu_seconds(pid) - cpu
        print(
            f"4 posts of 200,000 parts ({len(body) >> 20} MB each): statuses"
            f" {[status_of(a) for a in answers]}; the bot's CPU {used:.2f} s;"
            f" IRC answers {[round(x, 2) for x in latencies]}"
        )
        assert all(status_of(a) == 413 for a in answers), [a[:200] for a in answers]
        # more failed posts use the link up (it took 4 already)
        statuses = []
        for _ in range(8):
            answer = await asyncio.to_thread(
                raw_http, link, multipart_request(path, b"junk", "multipart/form-data")
            )
            statuses.append(status_of(answer))
        assert statuses[:5] == [400] * 5 and 429 in statuses, statuses
        assert statuses[-1] == 410, statuses
        good = form_body("G", code=TRAIL)
        answer = await asyncio.to_thread(
            raw_http, link, multipart_request(path, good, "multipart/form-data; boundary=G")
        )
        assert status_of(answer) == 410  # even a good upload: ask for a new link

    run(scenario(), timeout=300)


def test_the_host_header_is_not_reflected(hillbot: BotProcess) -> None:
    """Without [web] public_url, absolute links are the address the bot
    serves on, whatever Host the client sends."""
    url = url_of(hillbot)

    def fetch(path: str) -> str:
        request = urllib.request.Request(url + path, headers={"Host": "evil.example:666"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read().decode()

    for path in ("", "history", "history.atom", "matrix"):
        page = fetch(path)
        assert "evil.example" not in page, path
    assert url + "hill.git" in fetch("")  # the clone command in the footer
    assert f'href="{url}' in fetch("history.atom")
    request = b"GET /hill.git/nothing HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
    answer = raw_http(url, request)
    assert b"evil.example" not in answer and (url + "hill.git").encode() in answer


def test_static_files_and_thumbnails_are_not_logged(hillbot: BotProcess) -> None:
    url = url_of(hillbot)

    async def scenario() -> None:
        bob = await player("bob", hillbot.port, hillbot.nick)
        for name, code in (("one", RUSH), ("two", TRAIL)):
            bob.say(CHANNEL, f"!bfjoust {name} {code}")
            await bob.reply(hillbot.nick, f"bob.{name}", 60)

    run(scenario(), timeout=120)
    left, right = (hashlib.sha256(code.encode()).hexdigest() for code in (RUSH, TRAIL))
    thumbnail = f"thumbnail?left_code={left}&right_code={right}&tape=10&polarity=sieve"
    start = hillbot.log.stat().st_size
    for _ in range(20):
        for path in ("static/style.css", thumbnail):
            with urllib.request.urlopen(url + path, timeout=30) as response:
                assert response.status == 200
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
    lines = log_since(hillbot, start)
    assert len(lines) <= 3, "\n".join(lines)  # the page's own line, and no more


def test_git_hides_the_writers_refs(hillbot: BotProcess) -> None:
    """refs/hill/* (a diverged history the writer keeps) are not served."""
    repository = Path(hillbot.data) / "hill-repo"
    head = subprocess.run(
        ["git", "-C", str(repository), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert head
    subprocess.run(
        ["git", "-C", str(repository), "update-ref", "refs/hill/diverged-test", head], check=True
    )
    for protocol in ("0", "2"):
        listed = subprocess.run(
            [
                "git",
                "-c",
                f"protocol.version={protocol}",
                "ls-remote",
                f"{url_of(hillbot)}hill.git",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert listed.returncode == 0, listed.stderr
        assert "refs/heads/" in listed.stdout and "refs/hill/" not in listed.stdout, listed.stdout
