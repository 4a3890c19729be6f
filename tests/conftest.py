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
