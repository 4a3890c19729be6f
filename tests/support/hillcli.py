"""Running `bfjoust` as a real process on a data folder, and reading a
hill back the way an operator does (`bfjoust hill history`, `report`,
`git log`), to compare two hills."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hill.layout import DataFolder


def bfjoust(
    *args: str | Path, check: bool = True, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "hill", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        **kwargs,
    )
    if check:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def history(data: Path) -> list[str]:
    """`bfjoust hill history`: every event with its commit, oldest first."""
    return bfjoust("hill", "--data", data, "history").stdout.splitlines()


def report(data: Path) -> dict[str, Any]:
    """`bfjoust hill report --format json`: the standings now."""
    return json.loads(bfjoust("hill", "--data", data, "report", "--format", "json").stdout)


def commits(data: Path, branch: str = "main") -> list[str]:
    """The branch's commit ids, oldest first (`git log`)."""
    git_dir = DataFolder(data).repository / ".git"
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "log", "--reverse", "--format=%H", branch],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()
