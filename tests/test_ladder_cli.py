"""`bfjoust ladder run` as a real process: the JSON contract and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.reference import REFERENCE

from hill import engine
from hill.cli.engine import full_matrix
from hill.rules import scoring
from hill.rules.statistics import STATS_FIELDS

WIKI = sorted(str(p) for p in (REFERENCE / "warriors" / "wiki").glob("*.bfjoust"))


def ladder(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hill", "ladder", "run", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_json_contract() -> None:
    done = ladder(*WIKI, "--budget", "0.4", "--seed", "3", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    n = len(WIKI)
    assert data["pool"] == n and data["pairs"] == n * (n - 1) // 2
    assert data["jousts_played"] == round(0.4 * 55) == len(data["played"])
    seen = set()
    for a, b, margin in data["played"]:
        assert a in WIKI and b in WIKI and a != b and frozenset((a, b)) not in seen
        seen.add(frozenset((a, b)))
        joust = engine.joust(*(engine.compile_program(Path(p).read_bytes()) for p in (a, b)))
        assert margin == joust.score
    ranking = data["ranking"]
    assert [r["rank"] for r in ranking] == list(range(1, n + 1))
    assert sorted(r["name"] for r in ranking) == WIKI
    for row in ranking:
        assert list(row) == [
            "rank",
            "name",
            "rating",
            "rating_low",
            "rating_high",
            "jousts",
            "stats",
        ]
        assert row["rating_low"] <= row["rating"] <= row["rating_high"]
        assert list(row["stats"]) == list(STATS_FIELDS)
        assert row["jousts"] == row["stats"]["jousts"]
        assert row["stats"]["rank_low"] <= row["stats"]["rank_high"]
    assert sum(r["jousts"] for r in ranking) == 2 * data["jousts_played"]
    ratings = [r["rating"] for r in ranking]
    assert ratings == sorted(ratings, reverse=True)
    # the same seed plays the same ladder
    assert ladder(*WIKI, "--budget", "0.4", "--seed", "3", "--json").stdout == done.stdout


def test_a_full_budget_ranks_by_markov() -> None:
    done = ladder(*WIKI[:6], "--budget", "1", "--json")
    data = json.loads(done.stdout)
    assert data["jousts_played"] == 15
    programs = [engine.compile_program(Path(p).read_bytes()) for p in WIKI[:6]]
    markov = scoring.markov(scoring.battle_wins(full_matrix(programs, jobs=1)), engine.BATTLES)
    by_name = {r["name"]: r["rating"] for r in data["ranking"]}
    for i, name in enumerate(WIKI[:6]):
        assert by_name[name] == round(float(markov[i]), 4)


def test_text_output() -> None:
    done = ladder(*WIKI[:4], "--budget", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("6 of 6 jousts played (4 programs)\n")
    assert sum(name in done.stdout for name in WIKI[:4]) == 4


def test_bad_input_gets_clear_messages(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bfjoust"
    bad.write_text("(>)*9\n[-]>)*21\n")
    cases = {
        (): "the pool is empty",
        (WIKI[0],): "the pool has one program",
        (WIKI[0], WIKI[0]): "a file is given twice",
        (WIKI[0], str(tmp_path / "missing.bfjoust")): "missing.bfjoust: cannot read",
        (WIKI[0], str(bad)): f"{bad}:2:5: unmatched ')'",
        (*WIKI[:3], "--budget", "0"): "must be within (0, 1], not 0",
        (*WIKI[:3], "--budget", "1.5"): "must be within (0, 1], not 1.5",
        (*WIKI[:3], "--budget", "half"): "not a number: 'half'",
    }
    for args, message in cases.items():
        done = ladder(*args)
        assert done.returncode != 0, args
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stdout == ""
