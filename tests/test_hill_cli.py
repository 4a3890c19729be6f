"""`bfjoust hill ...` as a real process on a real data folder: each command
a process of its own, forked from a server that has imported the command's
modules (support.forks), as `python -m hill` runs it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support import forks as forking
from support.forks import Commands, Forks
from support.reference import warrior_path

from hill.rules.programs import NO_INSTRUCTION
from hill.rules.statistics import STATS_FIELDS

forks = forking.forks  # the fixture
Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def bfjoust(forks: Forks) -> Run:
    """`python -m hill *args` (in the folder `cwd`), its output captured."""
    return Commands(forks)


@pytest.fixture
def hill(bfjoust: Run) -> Run:
    """`bfjoust hill --data DATA *args`."""

    def run(data: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return bfjoust("hill", "--data", data, *args)

    return run


def test_a_hill_from_the_command_line(tmp_path: Path, hill: Run) -> None:
    data = tmp_path / "var"
    seeded = hill(data, "init", "--seed")
    assert seeded.returncode == 0, seeded.stderr
    assert "(5 programs)" in seeded.stdout
    poke = warrior_path("wiki/poke.bfjoust")
    submitted = hill(data, "submit", poke, "--owner", "alice")
    assert submitted.returncode == 0, submitted.stderr
    assert submitted.stdout.startswith("alice.poke: points ")
    assert "rank " in submitted.stdout and "/6" in submitted.stdout

    tested = hill(data, "test", warrior_path("wiki/wiggle_clear.bfjoust"), "--owner", "bob")
    assert "test only, the hill is unchanged" in tested.stdout
    link = tested.stdout.splitlines()[-1]  # its page, as the bot links it
    assert link.startswith("full result: http://127.0.0.1:8080/test/") and len(link) == 62

    report = hill(data, "report")
    assert report.stdout.startswith("Rank/chg   Score  Points  Program\n")
    assert report.stdout.count("starter.") == 5 * 2  # ranking and matrix
    as_json = json.loads(hill(data, "report", "--format", "json").stdout)
    assert as_json["size"] == 6 and as_json["ranking_method"] == "markov"
    assert len(as_json["commit"]) == 40
    assert {p["full_name"] for p in as_json["programs"]} >= {"alice.poke", "starter.rush"}
    # the statistics of docs/statistics.md per program (hill.statistics)
    leader, *others = [p["stats"] for p in as_json["programs"]]
    assert list(leader) == list(STATS_FIELDS) and leader["games_behind"] == 0
    assert all(s["jousts"] == 5 and s["wins"] + s["ties"] + s["losses"] == 5 * 42 for s in others)

    detail = hill(data, "breakdown", "alice.poke")
    assert detail.stdout.startswith("alice.poke vs starter.")
    assert detail.stdout.count(" vs ") == 5

    withdrawn = hill(data, "withdraw", "poke", "--owner", "alice")
    assert withdrawn.stdout.startswith("alice.poke withdrawn")
    history = hill(data, "history").stdout.splitlines()
    assert len(history) == 8  # 5 starters, poke, the test, the withdrawal
    assert "test by bob" in history[6]
    assert len(hill(data, "history", "alice.poke").stdout.splitlines()) == 2

    rescored = hill(data, "rescore", "--rejoust")
    assert rescored.returncode == 0 and "after replaying every joust" in rescored.stdout


def test_errors_are_one_clear_line(tmp_path: Path, hill: Run, bfjoust: Run) -> None:
    data = tmp_path / "var"
    bad = tmp_path / "bad.bf"
    bad.write_text("[[")
    result = hill(data, "submit", bad, "--owner", "alice")
    assert result.returncode == 1
    assert (
        result.stderr.strip() == "parse error at line 1, column 2: unmatched '[': no ']' closes it"
    )
    words = tmp_path / "words.bf"
    words.write_text("just a comment")
    empty = hill(data, "submit", words, "--owner", "alice")
    assert empty.returncode == 1 and empty.stderr.strip() == NO_INSTRUCTION
    missing = hill(data, "breakdown", "nobody.nothing")
    assert missing.returncode == 1 and "there is no nobody.nothing" in missing.stderr
    config = tmp_path / "config.toml"
    config.write_text("[hill]\nsize = 'big'\n")
    wrong = bfjoust("hill", "--config", config, "report")
    assert wrong.returncode == 1
    assert "[hill] size" in wrong.stderr and "Traceback" not in wrong.stderr


def test_import_a_folder(tmp_path: Path, hill: Run) -> None:
    folder = tmp_path / "warriors"
    folder.mkdir()
    for name in ("poke", "wiggle_clear", "triplock"):
        source = warrior_path(f"wiki/{name}.bfjoust").read_bytes()
        (folder / f"{name}.bfjoust").write_bytes(source)
    (folder / "carol.turtle.bfjoust").write_text("(>+<)*3[]")
    long = "a_very_long_program_name_that_goes_on_and_on_past_the_limit_of_48"  # 67
    (folder / f"dave.{long}.bfjoust").write_text("(>)*9([-]>)*21")
    result = hill(tmp_path / "var", "import", folder, "--quiet")
    assert result.returncode == 0, result.stderr
    # a name shortened is said, not done without a word
    assert f"the name {long!r} is taken as {long[:48]!r}" in result.stdout
    report = hill(tmp_path / "var", "report", "--format", "json")
    names = {p["full_name"] for p in json.loads(report.stdout)["programs"]}
    assert names == {
        "import.poke", "import.wiggle_clear", "import.triplock", "carol.turtle", f"dave.{long[:48]}"
    }  # fmt: skip


def test_options_go_before_or_after_the_subcommand(tmp_path: Path, hill: Run, bfjoust: Run) -> None:
    """--data and --config are taken by `bfjoust`, by `bfjoust hill` and by
    each of its subcommands alike, and the last one given wins."""
    data, other = tmp_path / "var", tmp_path / "other"
    config = tmp_path / "config.toml"
    config.write_text('[hill]\ndata_dir = "other"\nsize = 3\n')
    rush = warrior_path("wiki/poke.bfjoust")
    assert hill(data, "init").returncode == 0
    after = bfjoust("hill", "submit", rush, "--owner", "alice", "--data", data)
    assert after.returncode == 0, after.stderr
    for argv in (
        ("hill", "--data", data, "report"),
        ("hill", "report", "--data", data),
        ("--data", data, "hill", "report"),
        ("hill", "--data", other, "report", "--data", data),
    ):
        report = bfjoust(*argv)
        assert report.returncode == 0, (argv, report.stderr)
        assert "alice.poke" in report.stdout, argv
    # --config anywhere: its data folder, unless --data says otherwise
    for argv in (
        ("hill", "--config", config, "init"),
        ("hill", "init", "--config", config),
        ("--config", config, "hill", "init"),
    ):
        made = bfjoust(*argv)
        assert made.returncode == 0 and str(other) in made.stdout, (argv, made.stderr)
    assert "alice.poke" in bfjoust("hill", "report", "--config", config, "--data", data).stdout
    # bot and web take them on either side too (a broken config shows it was read)
    config.write_text("[web]\nport = 'x'\n")
    for argv in (
        ("web", "--config", config),
        ("--config", config, "web"),
        ("--config", config, "bot"),
    ):
        refused = bfjoust(*argv)
        assert refused.returncode == 1 and "[web] port" in refused.stderr, argv
    unused = bfjoust("--data", data, "check", rush)
    assert unused.returncode == 2 and "check takes no --data" in unused.stderr


def test_a_data_folder_given_relative_to_the_working_folder(tmp_path: Path, bfjoust: Run) -> None:
    """`--data var` (as config.example.toml's data_dir = "var"): run after
    run the same repository grows, never set aside as broken."""

    def relative(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return bfjoust("hill", "--data", "var", *args, cwd=tmp_path)

    assert relative("init").returncode == 0
    for owner, warrior in (("alice", "wiki/poke.bfjoust"), ("bob", "wiki/wiggle_clear.bfjoust")):
        submitted = relative("submit", warrior_path(warrior), "--owner", owner)
        assert submitted.returncode == 0 and "unusable" not in submitted.stderr, submitted.stderr
    assert sorted(p.name for p in tmp_path.joinpath("var").iterdir() if "repo" in p.name) == [
        "hill-repo"
    ]
    log = subprocess.run(["git", "log", "--format=%s"], cwd=tmp_path / "var" / "hill-repo",
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert len(log.stdout.splitlines()) == 2, log.stdout
