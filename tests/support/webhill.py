"""Helpers of the web tests: the 2013 hill's 47 programs in a real hill, served
by the real server on a free port, and Debian's headless Chromium to look at it.

The hill is built once per test session (about 10 s) whichever web test
module asks first; tests must not change it (they make their own small hills).
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import gzip
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from bot.ircd import free_port, listening
from hill import engine
from hill.config import HillSettings, WebSettings
from hill.rules.names import from_file
from hill.rules.standings import Standings
from hill.web.server import start_web
from hill.writers.hill import Hill
from support.reference import REFERENCE, warrior_path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_OPTIONS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def reference_programs() -> list[tuple[str, bytes]]:
    """(name, code) of the 2013 hill's programs, in the order they are submitted."""
    fixture = json.loads((REFERENCE / "scores-esohill-20131008.json").read_text())
    return [(from_file(p), warrior_path(p).read_bytes()) for p in fixture["programs"]]


def build_hill(
    data_dir: Path, programs: list[tuple[str, bytes]], owner: str = "esohill", size: int = 47
) -> Hill:
    hill = Hill(HillSettings(data_dir=data_dir, size=size), jobs=2)
    for name, code in programs:
        hill.challenge(owner, name, code)
    return hill


class Server:
    """The web report of a hill, served by `start_web` on its own event loop
    in a thread, as the bot runs it beside itself."""

    def __init__(self, hill: Hill) -> None:
        self.hill = hill
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        settings = WebSettings(bind="127.0.0.1", port=0)
        serving = start_web(hill.queries, hill.settings, settings)
        starting = asyncio.run_coroutine_threadsafe(serving, self.loop)
        self.runner = starting.result(timeout=30)
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class WebProcess:
    """`bfjoust web` serving the hill in folder/var from a process of its
    own (as beside a bot), its log in folder/web.log; `stop()` ends it."""

    def __init__(self, folder: Path, web_settings: str = "") -> None:
        port = free_port()
        config = folder / "hill.toml"
        config.write_text(f'[hill]\ndata_dir = "var"\n\n[web]\nport = {port}\n{web_settings}')
        self.log_path = folder / "web.log"
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "hill", "web", "--config", str(config)],
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        self.url = f"http://127.0.0.1:{port}"
        assert self.process.stdout is not None
        assert f"{self.url}/" in self.process.stdout.readline()
        for _ in range(100):
            if listening("127.0.0.1", port):
                break
            time.sleep(0.1)

    def rss(self) -> int:
        """The process's resident memory, in bytes."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0]) * 1024

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> int:
        """SIGTERM; the exit status."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            assert self.process.stdout is not None
            self.process.stdout.close()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    raw: bytes  # the body as sent (gzipped, if the headers say so)

    @property
    def body(self) -> bytes:
        """The body, unzipped as a browser would."""
        zipped = self.headers.get("Content-Encoding") == "gzip"
        return gzip.decompress(self.raw) if zipped else self.raw

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


def get(url: str, headers: dict[str, str] | None = None) -> Reply:
    """A plain HTTP GET; error statuses are replies too."""
    try:
        request = urllib.request.Request(url, headers=headers or {})
        with urllib.request.urlopen(request, timeout=60) as response:
            return Reply(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as error:
        return Reply(error.code, dict(error.headers), error.read())


def git(*args: str | Path, cwd: Path | None = None, check: bool = True) -> str:
    """A stock git command (with an identity to commit with); what it said."""
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


@dataclass
class Battle:
    """A battle as the viewer rebuilds it from /api/trace's pieces."""

    about: dict[str, Any]  # what the first piece says of the whole battle
    pieces: list[dict[str, Any]]
    tapes: np.ndarray
    left_pointer: np.ndarray
    right_pointer: np.ndarray
    left_source: np.ndarray
    right_source: np.ndarray


def _array(field: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(field), dtype=dtype)


def piece_tapes(piece: dict[str, Any]) -> np.ndarray:
    """A piece's states: its first one, then each later one as the one
    before with its changed cells (README: the trace format)."""
    n = piece["tape_length"]
    tapes = np.empty((piece["count"], n), dtype=np.uint8)
    tapes[0] = _array(piece["tape"], "u1")
    changes = _array(piece["changes"], "u1")
    cells, values = _array(piece["cells"], "u1"), _array(piece["values"], "u1")
    at = 0
    for k in range(1, piece["count"]):
        tapes[k] = tapes[k - 1]
        for _ in range(changes[k - 1]):
            tapes[k, cells[at]] = values[at]
            at += 1
    assert at == len(cells) == len(values)
    return tapes


def fetch_battle(url: str) -> Battle:
    """Every piece of the battle at `url` (an /api/trace URL), in order."""
    first = get(url).json()
    pieces = [first] + [
        get(f"{url}&from={i * first['piece_states']}").json() for i in range(1, first["pieces"])
    ]
    for i, piece in enumerate(pieces):
        assert piece["from"] == i * first["piece_states"]
        assert piece["count"] <= first["piece_states"]

    def joined(key: str, dtype: str) -> np.ndarray:
        return np.concatenate([_array(p[key], dtype) for p in pieces])

    return Battle(
        about=first,
        pieces=pieces,
        tapes=np.concatenate([piece_tapes(p) for p in pieces]),
        left_pointer=joined("left_pointer", "i1"),
        right_pointer=joined("right_pointer", "i1"),
        left_source=joined("left_source", "<i4"),
        right_source=joined("right_source", "<i4"),
    )


def same_battle(battle: Battle, expected: engine.Trace) -> bool:
    """Whether the pieces rebuild exactly the engine's arrays."""
    return (
        battle.about["cycles"] == expected.cycles
        and np.array_equal(battle.tapes, expected.tapes)
        and np.array_equal(battle.left_pointer, expected.left_pointer)
        and np.array_equal(battle.right_pointer, expected.right_pointer)
        and np.array_equal(battle.left_source, expected.left_source)
        and np.array_equal(battle.right_source, expected.right_source)
    )


def battle_query(left: str, right: str, tape: int, polarity: str) -> str:
    """The query of /battle and /api/trace for one battle."""
    return urllib.parse.urlencode(
        {"left": left, "right": right, "tape": tape, "polarity": polarity},
        quote_via=urllib.parse.quote,
    )


def long_battles(standings: Standings) -> Iterator[tuple[str, str, int, str, engine.Trace]]:
    """The battles of a hill of reference programs that run to the cycle
    limit (left, right, tape, polarity, trace), found with the engine."""
    codes = dict(reference_programs())
    compiled: dict[str, engine.Program] = {}
    for a, b, i in zip(*np.nonzero(standings.outcomes == 0), strict=True):
        if a < b:
            left, right = standings.entries[a].program, standings.entries[b].program
            tape, polarity = engine.battle_config(int(i))
            for p in (left, right):
                if p.name not in compiled:
                    compiled[p.name] = engine.compile_program(codes[p.name])
            battle = engine.trace(compiled[left.name], compiled[right.name], tape, polarity)
            if battle.cycles == engine.MAX_CYCLES:
                yield left.full_name, right.full_name, tape, polarity, battle


def longest_battle(standings: Standings) -> tuple[str, str, int, str, engine.Trace]:
    """One battle of the hill that runs to the cycle limit."""
    return next(long_battles(standings))


_shared: dict[str, Any] = {}


def shared_server() -> Server:
    """The 47-program hill, served; built once for the whole session."""
    if "server" not in _shared:
        data_dir = Path(tempfile.mkdtemp(prefix="webhill-"))
        server = _shared["server"] = Server(build_hill(data_dir, reference_programs()))
        atexit.register(shutil.rmtree, data_dir, ignore_errors=True)
        atexit.register(server.stop)
    return _shared["server"]


def chromium(profile: Path) -> webdriver.Chrome:
    """Debian's Chromium, headless, with a fresh profile in the folder `profile`."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for option in CHROMIUM_OPTIONS:
        options.add_argument(option)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_window_size(1366, 900)
    return driver


def load(driver: webdriver.Chrome, url: str) -> None:
    """Open `url` and wait until the page has loaded."""
    driver.get(url)
    WebDriverWait(driver, 10).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )


def console_errors(driver: webdriver.Chrome) -> list[str]:
    """Errors the page logged: scripts failing, CSP refusals, missing files."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def css(driver: webdriver.Chrome, selector: str) -> list:
    return driver.find_elements(By.CSS_SELECTOR, selector)
