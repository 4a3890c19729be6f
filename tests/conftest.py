"""Shared test fixtures: the reference data kept in tests/data (see its README;
tests/support/reference.py reads it)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from selenium import webdriver
from support.ircservers import NETWORKS, Inspircd, Network, start_inspircd, start_network
from support.reference import REFERENCE
from support.webhill import chromium

# The Ctrl-C tests send SIGINT to the commands they start, as a terminal does.
# A suite started in the background by a shell without job control (`make
# test &` in a script) runs with SIGINT ignored, which every process it starts
# would inherit (Python then installs no handler: the Ctrl-C does nothing), so
# the processes of the tests get the default a terminal's would have.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def reference_names() -> list[str]:
    return (REFERENCE / "index.txt").read_text().split()


@pytest.fixture(scope="session")
def reference_results() -> list[str]:
    return (REFERENCE / "results.txt").read_text().splitlines()


@pytest.fixture(scope="module", params=NETWORKS)
def every_network(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Network]:
    """Each of the servers networks run (InspIRCd, ngircd, ircd-hybrid), in turn."""
    network = start_network(request.param, tmp_path_factory.mktemp(request.param))
    yield network
    network.stop()


@pytest.fixture(scope="module")
def flood_inspircd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspircd]:
    """InspIRCd without services: a strict class for the bot, a lenient one for players."""
    server = start_inspircd(tmp_path_factory.mktemp("inspircd-flood"), services=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chromium_of_the_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    """One Chromium for each test worker (its start costs a second or two)."""
    driver = chromium(tmp_path_factory.mktemp("chromium"))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def browser(chromium_of_the_worker: webdriver.Chrome) -> webdriver.Chrome:
    """The worker's Chromium, as a module finds a fresh one: a blank page, no
    cookies, the desktop size, its console's past lines read (each module's
    pages are served from an origin of their own, so no storage is shared)."""
    driver = chromium_of_the_worker
    driver.get("about:blank")
    driver.delete_all_cookies()
    driver.set_window_size(1366, 900)
    driver.get_log("browser")
    return driver


# the fixtures that start something, and the marker a test using one gets
# (directly or through another fixture): `make test-fast` leaves them out
STARTS = {
    "ngircd": "irc",
    "every_network": "irc",
    "flood_inspircd": "irc",
    "browser": "browser",
    "phone": "browser",
    "cluster": "cluster",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in sorted(set(getattr(item, "fixturenames", ())) & STARTS.keys()):
            item.add_marker(STARTS[fixture])
