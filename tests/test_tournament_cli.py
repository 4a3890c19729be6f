"""`bfjoust tournament run`, as a real process: the JSON contract of
docs/tournaments.md over real programs, and bad input."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
from itertools import combinations, pairwise
from pathlib import Path

import pytest
from support.reference import REFERENCE
from support.tournament_watch import MatchCounts, wait_mid_round

from hill import engine
from hill.engine.varied import varied_pool

WARRIORS = REFERENCE / "warriors"
SWISS_ROW = ["rank", "name", "score", "buchholz", "neustadtl", "cumulative", "opp_cumulative",
             "wins", "draws", "losses", "byes"]  # fmt: skip
ROUND_ROBIN_ROW = ["rank", "name", "wins", "draws", "losses", "score", "points", "win_share"]


def tournament(
    *args: str | Path, cwd: Path = WARRIORS, stderr: int = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hill", "tournament", "run", *map(str, args)],
        stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=600, cwd=cwd,
    )  # fmt: skip


def reference(count: int, start: int = 0) -> list[str]:
    """Reference programs as paths relative to WARRIORS (the entrant names)."""
    return (REFERENCE / "index.txt").read_text().split()[start : start + count]


def margin(left: str, right: str) -> int:
    programs = [engine.compile_program((WARRIORS / name).read_bytes()) for name in (left, right)]
    return engine.joust(*programs).score


def test_swiss_prints_the_contract() -> None:
    files = reference(7, start=40)
    files[2] = "./" + files[2]  # names are the arguments exactly as given
    result = tournament("--format", "swiss", *files, "--json", "--seed", "7",
                        "--additional-rounds", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert list(out) == ["format", "seed", "entrants", "ended", "rounds", "standings"]
    assert (out["format"], out["seed"], out["entrants"], out["ended"]) == (
        "swiss",
        7,
        files,
        "complete",
    )
    assert [r["number"] for r in out["rounds"]] == [1, 2, 3, 4]  # ceil(log2 7) + 1
    byes = [r["bye"] for r in out["rounds"]]
    assert len(set(byes)) == 4 and set(byes) <= set(files)
    for round_ in out["rounds"]:
        assert list(round_) == ["number", "bye", "matches"]
        seated = [name for m in round_["matches"] for name in (m["a"], m["b"])]
        assert sorted([*seated, round_["bye"]]) == sorted(files)
        for match in round_["matches"]:
            assert list(match) == ["a", "b", "margin"]
            assert match["margin"] == margin(match["a"], match["b"])
    rows = out["standings"]
    assert [row["rank"] for row in rows] == list(range(1, 8))
    assert sorted(row["name"] for row in rows) == sorted(files)
    for row in rows:
        assert list(row) == SWISS_ROW
        assert row["wins"] + row["draws"] + row["losses"] + row["byes"] == 4
        assert row["score"] == row["wins"] + row["draws"] / 2 + row["byes"]
    assert [row["score"] for row in rows] == sorted((row["score"] for row in rows), reverse=True)
    again = tournament("--format", "swiss", *files, "--json", "--seed", "7",
                       "--additional-rounds", "1")  # fmt: skip
    assert again.stdout == result.stdout


def test_without_a_seed_one_is_chosen_and_reported() -> None:
    files = reference(6, start=10)
    first = json.loads(tournament("--format", "swiss", *files, "--json").stdout)
    assert isinstance(first["seed"], int)
    again = tournament("--format", "swiss", *files, "--json", "--seed", str(first["seed"]))
    assert json.loads(again.stdout) == first


def test_criteria_order_decides_the_standings() -> None:
    files = reference(8, start=60)
    base = ("--format", "swiss", *files, "--json", "--seed", "3", "--additional-rounds", "2")
    by_default = json.loads(tournament(*base).stdout)
    by_wins = json.loads(tournament(*base, "--criteria", "wins,cumulative").stdout)
    assert by_wins["rounds"][0] == by_default["rounds"][0]
    rows = by_wins["standings"]
    keys = [(-row["wins"], -row["cumulative"], row["name"]) for row in rows]
    assert keys == sorted(keys)


def read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the other side closed
            return
        if not data:
            return
        into.append(data)


def test_a_round_robin_of_reference_programs_matches_their_results() -> None:
    """Every margin equals the reference outcomes, for every third of the 98
    reference programs (33 programs, 528 matches on two local threads):
    tests/test_engine.py checks all 9604 jousts of the matrix one by one."""
    every = reference(98)
    picked = range(0, 98, 3)
    names = [every[i] for i in picked]
    lines = (REFERENCE / "results.txt").read_text().splitlines()
    result = tournament("--format", "round-robin", *names, "--json", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert list(out) == ["format", "seed", "entrants", "ended", "rounds", "standings",
                         "reality_show"]  # fmt: skip
    (round_,) = out["rounds"]
    assert round_["bye"] is None
    expected = {
        (every[i], every[j]): int(lines[i * 98 + j].split()[-1]) for i, j in combinations(picked, 2)
    }
    assert len(expected) == 528
    assert {(m["a"], m["b"]): m["margin"] for m in round_["matches"]} == expected
    rows = out["standings"]
    assert all(list(row) == ROUND_ROBIN_ROW for row in rows)
    assert sum(row["win_share"] for row in rows) == pytest.approx(100)
    stages = out["reality_show"]
    assert [len(stage) for stage in stages] == list(range(len(names), 0, -1))
    assert stages[0] == [row["name"] for row in rows]
    assert all(set(later) == set(stage[:-1]) for stage, later in pairwise(stages))


def test_a_run_longer_than_a_second_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """The bar waits a second (tqdm's delay), so the pool is one that takes
    several on one core: 200 varied programs, 19,900 matches (three
    seconds and more here, where the bar shows from the first second on)."""
    pool = varied_pool(200, seed=3)
    for name, source in pool:
        (tmp_path / f"{name}.bfjoust").write_bytes(source)
    files = [f"{name}.bfjoust" for name, _ in pool]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    seen: list[bytes] = []
    reader = threading.Thread(target=read_all, args=(master, seen))
    reader.start()
    try:
        result = tournament("--format", "round-robin", *files, "--jobs", "1",
                            cwd=tmp_path, stderr=slave)  # fmt: skip
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    assert result.returncode == 0
    bar = b"".join(seen).decode(errors="replace")
    assert "19900/19900" in bar and "match" in bar


def write(tmp_path: Path, name: str, code: str) -> str:
    (tmp_path / name).write_text(code)
    return name


def test_bad_pools_are_refused_with_a_clear_message(tmp_path: Path) -> None:
    a = write(tmp_path, "a.bf", "(>)*9([-]>)*21")
    write(tmp_path, "b.bf", "+\n  ]")
    cases = {
        (): "the pool is empty",
        (a,): "one entrant (a.bf): a tournament needs two or more",
        (a, "./a.bf"): "./a.bf: the same file as a.bf: each entrant once",
        (a, a): "a.bf: the same file as a.bf: each entrant once",
        (a, "b.bf"): "b.bf:2:3: unmatched ']': no '[' opens it",
        (a, "missing.bf"): "missing.bf: cannot read",
    }
    for files, message in cases.items():
        result = tournament("--format", "swiss", *files, "--json", cwd=tmp_path)
        assert result.returncode == 1, files
        assert message in result.stderr
        assert result.stdout == ""
        assert "Traceback" not in result.stderr


def test_bad_options_are_refused(tmp_path: Path) -> None:
    files = [write(tmp_path, f"{n}.bf", code) for n, code in (("a", "+"), ("b", "-"))]
    for option in (["--criteria", "score,elo"], ["--additional-rounds", "-1"], ["--format", "x"]):
        result = tournament("--format", "swiss", *files, *option, cwd=tmp_path)
        assert result.returncode == 2 and "error:" in result.stderr and not result.stdout
    result = tournament("--format", "round-robin", *files, "--allow-repeat", cwd=tmp_path)
    assert result.returncode == 0
    assert "--allow-repeat applies to swiss only" in result.stderr


def test_swiss_ending_early_says_why(tmp_path: Path) -> None:
    codes = {"r.bf": "(>)*9([-]>)*21", "s.bf": ">(+)*20<(>)*8(>[-])*21", "t.bf": "[]"}
    three = [write(tmp_path, name, code) for name, code in codes.items()]
    out = json.loads(tournament("--format", "swiss", *three, "--json", "--seed", "1",
                                "--additional-rounds", "2", cwd=tmp_path).stdout)  # fmt: skip
    assert len(out["rounds"]) == 3 and out["ended"].startswith("byes ran out")
    assert sorted(r["bye"] for r in out["rounds"]) == sorted(three)
    two = three[:2]
    base = ("--format", "swiss", *two, "--json", "--additional-rounds", "1")
    out = json.loads(tournament(*base, cwd=tmp_path).stdout)
    assert len(out["rounds"]) == 1 and out["ended"].startswith("deadlock")
    out = json.loads(tournament(*base, "--allow-repeat", cwd=tmp_path).stdout)
    assert len(out["rounds"]) == 2 and out["ended"] == "complete"
    assert out["rounds"][1]["matches"][0]["margin"] in (
        out["rounds"][0]["matches"][0]["margin"],
        -out["rounds"][0]["matches"][0]["margin"],
    )


def test_text_output_is_a_table(tmp_path: Path) -> None:
    files = reference(4)
    result = tournament("--format", "round-robin", *files)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["#", "name", "wins"]
    assert len(lines) == 1 + 4 + 1 and lines[-1] == "round-robin, 1 round: complete"


def test_a_state_file_resumes_after_sigkill_with_the_same_result(tmp_path: Path) -> None:
    """Kill the run twice mid-way (matches checked out, some committed); the
    third run finishes with exactly the uninterrupted run's output.  A Swiss
    tournament of 48 reference programs over 22 rounds (528 matches)."""
    files = reference(48)
    base = ["--format", "swiss", *files, "--json", "--seed", "3", "--additional-rounds", "16",
            "--jobs", "1"]  # fmt: skip
    whole = tournament(*base)
    assert whole.returncode == 0
    assert sum(len(r["matches"]) for r in json.loads(whole.stdout)["rounds"]) == 528
    state = tmp_path / "swiss.sqlite3"
    command = [sys.executable, "-m", "hill", "tournament", "run", *base, "--state", str(state)]
    with MatchCounts(state, "matches") as counts:
        for kill_at in (100, 250):
            process = subprocess.Popen(command, cwd=WARRIORS, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)  # fmt: skip
            # mid-round: results committed, and matches checked out without one
            wait_mid_round(process, counts, kill_at)
            process.kill()
            assert process.wait() == -signal.SIGKILL
    resumed = tournament(*base, "--state", state)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == whole.stdout
    again = tournament(*[a for a in base if a not in ("--seed", "3")], "--state", state)
    assert again.stdout == whole.stdout  # a finished state answers at once, its seed kept


def test_a_state_file_of_another_tournament_is_refused(tmp_path: Path) -> None:
    files = reference(4)
    state = tmp_path / "t.sqlite3"
    assert tournament("--format", "round-robin", *files, "--state", state).returncode == 0
    other = tournament("--format", "round-robin", *files[:3], "--state", state)
    assert other.returncode == 1
    assert f"{state} holds another tournament (its entrants, programs differ)" in other.stderr
    junk = tmp_path / "junk"
    junk.write_text("not a database" * 100)
    result = tournament("--format", "round-robin", *files, "--state", junk)
    assert result.returncode == 1 and f"{junk}: not a tournament state file" in result.stderr
