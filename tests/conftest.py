"""Shared test fixtures: the reference data beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
REFERENCE = SHARED / "reference"


@pytest.fixture(scope="session")
def reference_names() -> list[str]:
    return (REFERENCE / "index.txt").read_text().split()


@pytest.fixture(scope="session")
def reference_results() -> list[str]:
    return (REFERENCE / "results.txt").read_text().splitlines()


def warrior_path(name: str) -> Path:
    return REFERENCE / "warriors" / name
