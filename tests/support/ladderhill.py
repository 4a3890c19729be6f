"""Hills with an archive for the ladder's tests: programs that left the hill
(pushed off by a small hill), so that the archive holds pairs never jousted."""

from __future__ import annotations

from pathlib import Path

from hill.config import HillSettings
from hill.rules.names import from_file
from hill.writers.hill import Hill
from support.reference import REFERENCE, warrior_path


def reference(count: int, start: int = 0) -> list[tuple[str, bytes]]:
    """(name, code) of reference programs, in the order of index.txt."""
    index = (REFERENCE / "index.txt").read_text().split()[start : start + count]
    return [(from_file(name), warrior_path(name).read_bytes()) for name in index]


def archive_hill(data_dir: Path, count: int, size: int, owner: str = "ref") -> Hill:
    """A hill of `size` that has seen `count` reference programs, one at a
    time: those pushed off met only the hill of their day."""
    hill = Hill(HillSettings(data_dir=data_dir, size=size), jobs=2)
    for name, code in reference(count):
        hill.challenge(owner, name, code)
    return hill
