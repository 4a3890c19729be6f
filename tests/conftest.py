"""Shared test fixtures: the reference data kept in tests/data (see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent / "data" / "reference"


@pytest.fixture(scope="session")
def reference_names() -> list[str]:
    return (REFERENCE / "index.txt").read_text().split()


@pytest.fixture(scope="session")
def reference_results() -> list[str]:
    return (REFERENCE / "results.txt").read_text().splitlines()


def warrior_path(name: str) -> Path:
    return REFERENCE / "warriors" / name
