"""`bfjoust hill rebuild` as a real process: a hill with arrivals, programs
pushed off, updates, a withdrawal, a removal, a rescore, a test and a
contest, its database deleted, rebuilt from a fresh `git clone` of its
history served by a real `bfjoust web` (and straight from that URL): the
same events, standings and commit ids."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from support.hillcli import bfjoust, commits, history, report
from support.webhill import WebProcess, git

from hill.engine.varied import varied_pool
from hill.layout import DataFolder


def build(folder: Path, config: Path) -> None:
    """A hill of at most four programs, through `bfjoust` as an operator runs it."""
    programs = folder / "programs"
    programs.mkdir()
    pool = varied_pool(10, seed=44, shares={"structured": 1.0})
    for name, code in pool:
        (programs / f"{name}.bfjoust").write_bytes(code)
    files = sorted(programs.iterdir())
    c = ("--config", config)
    # four join, then one pushes the last off and tops the hill (bo.poke-44-5)
    for i, path in enumerate([*files[:4], files[7]]):
        bfjoust("hill", *c, "submit", path, "--owner", ["ann", "bo", "cy"][i % 3])
    owner, _, name = report_names(folder / "var")[0].partition(".")
    bfjoust("hill", *c, "submit", files[8], "--owner", owner, "--name", name)  # an update
    bfjoust("hill", *c, "test", files[9], "--owner", "dee")  # an event, no commit
    # an update to the same code as another program on the hill has (cy's, files[2])
    bfjoust("hill", *c, "submit", files[2], "--owner", owner, "--name", name)
    first, second = report_names(folder / "var")[1:3]
    bfjoust("hill", *c, "withdraw", first.partition(".")[2], "--owner", first.partition(".")[0])
    bfjoust("hill", *c, "remove", second, "--actor", "root")
    bfjoust("hill", *c, "rescore", "--actor", "root")
    bfjoust(*c, "contest", "create", "spring", "--closes", "+1h", "--title", "Spring")
    for i, path in enumerate(files[:2]):  # a contest's fewest entries
        bfjoust(*c, "contest", "enter", "spring", path, "--owner", f"p{i}")
    bfjoust(*c, "contest", "close", "spring", "--jobs", "1")
    bfjoust("hill", *c, "submit", files[9], "--owner", "dee")  # after the contest


def report_names(data: Path) -> list[str]:
    return [p["full_name"] for p in report(data)["programs"]]


def same_report(original: dict[str, Any], rebuilt: dict[str, Any]) -> None:
    """The same standings; each program's submission time to the second (the
    history keeps times to the second, and the event came a moment after)."""
    original, rebuilt = copy.deepcopy(original), copy.deepcopy(rebuilt)
    for before, after in zip(original["programs"], rebuilt["programs"], strict=True):
        submitted = [dt.datetime.fromisoformat(p.pop("submitted")) for p in (before, after)]
        assert dt.timedelta(0) <= submitted[0] - submitted[1] < dt.timedelta(seconds=1)
    assert original == rebuilt


@pytest.mark.slow  # some 30 bfjoust processes
@pytest.mark.timeout(900)
def test_a_hill_rebuilt_from_a_clone_of_its_history(tmp_path: Path) -> None:
    config = tmp_path / "ops.toml"
    config.write_text('[hill]\ndata_dir = "var"\nsize = 4\n')
    build(tmp_path, config)
    data = tmp_path / "var"
    events = history(data)
    kinds = {line.split()[3] for line in events}
    assert {"join", "challenge", "update", "test", "withdraw", "remove", "rescore"} <= kinds
    assert {"contest-entries", "contest-results"} <= kinds
    standings, branch = report(data), commits(data)

    web = WebProcess(tmp_path)  # serves tmp_path/var, with a configuration of its own
    try:
        git("clone", "--quiet", f"{web.url}/hill.git", tmp_path / "clone")
        from_url = tmp_path / "from-url"
        bfjoust("hill", "--config", config, "--data", from_url, "rebuild", f"{web.url}/hill.git")
    finally:
        web.stop()
    (data / "hill.sqlite3").unlink()  # the database lost

    rebuilt = tmp_path / "rebuilt"
    done = bfjoust("hill", "--config", config, "--data", rebuilt, "rebuild", tmp_path / "clone")
    print(done.stdout, done.stderr[-300:])
    assert "every recomputed summary is its commit's" in done.stdout
    assert "%|" in done.stderr  # tqdm's bar
    for folder in (rebuilt, from_url):
        assert history(folder) == [line for line in events if " test by " not in line]
        same_report(standings, report(folder))
        assert commits(folder) == branch
        shown = bfjoust("--data", folder, "contest", "show", "spring").stdout
        assert "p0" in shown and "p1" in shown
    refused = bfjoust("hill", "--data", rebuilt, "rebuild", tmp_path / "clone", check=False)
    assert refused.returncode == 1 and "is not empty" in refused.stderr
    # the rebuilt hill goes on: its writer commits on top of the same history
    (mine,) = [p["full_name"] for p in standings["programs"] if p["full_name"].startswith("dee.")]
    bfjoust("hill", "--data", rebuilt, "withdraw", mine.partition(".")[2], "--owner", "dee")
    assert commits(rebuilt)[:-1] == branch


def test_the_ranking_method_is_read_from_the_history(tmp_path: Path) -> None:
    """A hill ranked by `trad` (its configuration), rebuilt with the default
    configuration (`markov`): each commit's report.txt shows its scores, so
    the rebuild ranks as the hill did."""
    config = tmp_path / "trad.toml"
    config.write_text('[hill]\nranking = "trad"\n')
    data = tmp_path / "var"
    bfjoust("hill", "--config", config, "--data", data, "init", "--seed")
    (tmp_path / "rush.bfjoust").write_text("(>)*8([-]>)*21\n")
    bfjoust("hill", "--config", config, "--data", data, "submit", tmp_path / "rush.bfjoust",
            "--owner", "ann")  # fmt: skip
    rebuilt = tmp_path / "rebuilt"
    done = bfjoust("hill", "--data", rebuilt, "rebuild", DataFolder(data).repository, "--quiet")
    assert "every recomputed summary is its commit's" in done.stdout
    assert history(rebuilt) == history(data)
    standings = report(rebuilt)
    same_report(report(data), standings)
    assert standings["scoringMethod"] == "trad"
