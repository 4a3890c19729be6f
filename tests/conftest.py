"""Shared test fixtures: the reference data kept in tests/data (see its README;
tests/support/reference.py reads it)."""

from __future__ import annotations

import pytest
from support.reference import REFERENCE


@pytest.fixture(scope="session")
def reference_names() -> list[str]:
    return (REFERENCE / "index.txt").read_text().split()


@pytest.fixture(scope="session")
def reference_results() -> list[str]:
    return (REFERENCE / "results.txt").read_text().splitlines()


# the fixtures that start something, and the marker a test using one gets
# (directly or through another fixture): `make test-fast` leaves them out
STARTS = {"ngircd": "irc", "browser": "browser", "phone": "browser", "cluster": "cluster"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in sorted(set(getattr(item, "fixturenames", ())) & STARTS.keys()):
            item.add_marker(STARTS[fixture])
