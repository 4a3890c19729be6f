"""Pools: the programs a tournament plays, by entrant name.

For now a pool is a list of files (the entrant names are the paths exactly
as given); the hill's pools (the hill now or at an event, the archive) come
with the tournament tables. A pool is checked whole before anything is
played: every problem is reported at once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from hill import engine
from hill.errors import TournamentError


def file_pool(paths: Sequence[str]) -> dict[str, bytes]:
    """Each file's code by its path as given; TournamentError if any is unusable."""
    if not paths:
        raise TournamentError("the pool is empty: give the program files to play (two or more)")
    if len(paths) == 1:
        raise TournamentError(f"one entrant ({paths[0]}): a tournament needs two or more")
    problems, programs, seen = [], {}, {}
    for path in paths:
        try:
            code = Path(path).read_bytes()
            identity = os.stat(path)
        except OSError as error:
            problems.append(f"{path}: cannot read: {error.strerror or error}")
            continue
        same = seen.setdefault((identity.st_dev, identity.st_ino), path)
        if same != path or path in programs:
            problems.append(f"{path}: the same file as {same}: each entrant once")
            continue
        try:
            engine.compile_program(code)
        except engine.ParseError as error:
            problems.append(error.located(path))
            continue
        programs[path] = code
    if problems:
        raise TournamentError("\n".join(problems) + "\nthe tournament did not start")
    return programs
