"""A command pointed at a folder without a hill (missing, or mistyped to
another folder) creates nothing: it says there is no hill there and exits
1.  Only the commands that bring programs or a contest make a new hill
(`hill init`, `submit`, `import`, `contest create`, and the bot), and
those that bring a whole hill back (`hill restore`, `rebuild`).  Every
command that takes `--data` is found in the parser, so a new one cannot
slip by unclassified."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.reference import warrior_path

from hill.cli import build_parser, main

POKE = str(warrior_path("wiki/poke.bfjoust"))
# the commands that may make a hill, and how the others are run here
CREATORS = {
    ("hill", "init"),
    ("hill", "submit"),
    ("hill", "import"),
    ("contest", "create"),
    ("bot",),
    ("hill", "restore"),
    ("hill", "rebuild"),
}
READERS = {
    ("hill", "report"): [],
    ("hill", "breakdown"): ["alice.poke"],
    ("hill", "history"): [],
    ("hill", "backup"): ["never-made-backup"],
    ("ladder", "show"): [],
    ("tournament", "list"): [],
    ("tournament", "show"): ["1"],
    ("contest", "list"): [],
    ("contest", "show"): ["spring"],
}
# they change a hill, but there is nothing to change in an empty one
WRITERS = {
    ("hill", "test"): [POKE],
    ("hill", "withdraw"): ["poke", "--owner", "alice"],
    ("hill", "remove"): ["alice.poke"],
    ("hill", "rescore"): [],
    ("ladder", "step"): [],
    ("tournament", "create"): ["archive", "--format", "swiss"],
    ("tournament", "resume"): ["1"],
    ("tournament", "cancel"): ["1"],
    ("hill", "stats"): [],
    ("contest", "enter"): ["spring", POKE, "--owner", "alice"],
    ("contest", "withdraw"): ["spring", "--owner", "alice"],
    ("contest", "close"): ["spring"],
}
SERVERS = {("web",)}  # tested as a process: it would serve if it did not refuse


def hill_commands() -> Iterator[tuple[str, ...]]:
    """Every command that takes the shared --data option."""

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        build = getattr(parser, "_built", None)
        if build is not None:
            build()
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and parser.get_default("takes_shared_options"):
            yield path
        for action in subs:
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))

    return walk(build_parser(), ())


def test_every_hill_command_is_classified() -> None:
    known = CREATORS | set(READERS) | set(WRITERS) | SERVERS
    assert set(hill_commands()) == known


def snapshot(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


@pytest.mark.parametrize("where", ["missing", "mistyped"])
@pytest.mark.parametrize(
    "command", sorted({**READERS, **WRITERS}.items()), ids=lambda c: " ".join(c[0])
)
def test_a_command_on_no_hill_creates_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: str,
    command: tuple[tuple[str, ...], list[str]],
) -> None:
    words, args = command
    data = tmp_path / "no-such-folder"
    if where == "mistyped":  # an existing folder that holds something else
        data = tmp_path / "notes"
        data.mkdir()
        (data / "todo.txt").write_text("not a hill\n")
    before = snapshot(tmp_path)
    status = main([*words, *args, "--data", str(data)])
    err = capsys.readouterr().err
    assert status == 1
    assert err.strip() == (
        f"there is no hill at {data}: `bfjoust hill init --data {data}` creates one"
    )
    assert snapshot(tmp_path) == before


def test_readers_as_processes_and_the_web(tmp_path: Path) -> None:
    """The real command line (and `bfjoust web`, which only ever read)."""
    data = tmp_path / "var-typo"
    for argv in (["hill", "report"], ["ladder", "show"], ["tournament", "list"], ["web"]):
        done = subprocess.run(
            [sys.executable, "-m", "hill", *argv, "--data", str(data)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1, (argv, done.stdout, done.stderr)
        assert "there is no hill" in done.stderr and "Traceback" not in done.stderr
        assert not data.exists(), argv


def test_the_creators_make_a_hill(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "new"
    assert main(["hill", "submit", POKE, "--owner", "alice", "--data", str(data)]) == 0
    assert (data / "hill.sqlite3").is_file() and (data / "hill-repo").is_dir()
    capsys.readouterr()
    # now the readers read it
    assert main(["hill", "report", "--data", str(data)]) == 0
    assert "alice.poke" in capsys.readouterr().out
    assert main(["tournament", "list", "--data", str(data)]) == 0
