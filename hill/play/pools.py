"""Pools: the programs a tournament plays, by entrant name.

A pool of files names its entrants by the paths exactly as given, or by
their stems (`contests/spring/alice.bfjoust` is `alice`, as a contest names
its entrants); the hill's pools (the hill now or at an event, the archive)
are hill.store.pools'. A pool is checked whole before anything is played:
every problem is reported at once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from hill import engine
from hill.errors import TournamentError

NAMINGS = ("path", "stem")  # an entrant is named by its file's path as given, or its stem


def file_pool(paths: Sequence[str], naming: str = "path") -> dict[str, bytes]:
    """Each file's code by its path as given (or its stem, the name without
    folder and last extension); TournamentError if any is unusable."""
    if not paths:
        raise TournamentError("the pool is empty: give the program files to play (two or more)")
    if len(paths) == 1:
        raise TournamentError(f"one entrant ({paths[0]}): a tournament needs two or more")
    problems: list[str] = []
    programs: dict[str, bytes] = {}
    seen: dict[tuple[int, int], str] = {}  # each file once: by device and inode
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
    if naming == "stem":
        programs, problems = _by_stem(programs)
    if problems:
        raise TournamentError("\n".join(problems) + "\nthe tournament did not start")
    return programs


def _by_stem(programs: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """The programs named by their files' stems; the stems two files share."""
    named: dict[str, str] = {}
    problems = []
    for path in programs:
        stem = Path(path).stem
        if stem in named:
            problems.append(f"{path}: named {stem}, as {named[stem]} is: each name once")
        named.setdefault(stem, path)
    return {stem: programs[path] for stem, path in named.items()}, problems
