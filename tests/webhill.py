"""Helpers of the web tests: the 2013 hill's 47 programs in a real hill, served
by the real server on a free port, and Debian's headless Chromium to look at it.

The hill is built once per test session (about 10 s) whichever web test
module asks first; tests must not change it (they make their own small hills).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import shutil
import tempfile
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import REFERENCE, warrior_path
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from hill.config import HillSettings, WebSettings
from hill.names import from_file
from hill.service import Hill
from hill.web.server import start_web

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


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


def get(url: str) -> Reply:
    """A plain HTTP GET; error statuses are replies too."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return Reply(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as error:
        return Reply(error.code, dict(error.headers), error.read())


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
