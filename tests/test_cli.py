"""The `bfjoust` command line, run as a real process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from support.reference import warrior_path


def bfjoust(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hill", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_joust_prints_the_classic_line(tmp_path: Path) -> None:
    rush = write(tmp_path, "rush.bf", "(>)*9([-]>)*21")
    idle = write(tmp_path, "idle.bf", "")
    result = bfjoust("joust", rush, idle)
    assert result.returncode == 0
    assert result.stdout == "<<<<<<<<<<<<<<<<<<<<< <<<<<<<<<<<<<<<<<<<<< 42\n"


def test_joust_stats_prints_one_json_line_a_battle(tmp_path: Path) -> None:
    """docs/analytics.md's contract, worked by hand for a rush against a
    program that does nothing: 9 moves, then [-] on the flag (128): the `[`
    and 128 rounds of `-` and `]`; the flag is zero at the end of cycle 265
    and of cycle 266, which ends the battle (so heat counts 265 cycles)."""
    rush = write(tmp_path, "rush.bf", "(>)*9([-]>)*21")
    idle = write(tmp_path, "idle.bf", "")
    result = bfjoust("joust", rush, idle, "--stats")
    assert result.returncode == 0, result.stderr
    battles = [json.loads(line) for line in result.stdout.splitlines()]
    expected_order = [(p, t) for p in ("sieve", "kettle") for t in range(10, 31)]
    assert [(b["polarity"], b["tape"]) for b in battles] == expected_order
    assert all(b["outcome"] == 1 for b in battles)
    first = battles[0]
    assert set(first) == {"tape", "polarity", "outcome", "cycles", "tape_end", "heat", "decoy"}
    assert first["cycles"] == 9 + 1 + 2 * 128
    assert first["tape_end"] == [-128] + [0] * 9  # the left flag untouched, 128 read signed
    assert first["heat"] == [[0] + [1] * 8 + [265 - 8], [0] * 9 + [265]]
    assert first["decoy"] == [[128] + [0] * 9, [0] * 10]  # the idle program never moves


def test_matrix_matches_the_reference_format(
    reference_names: list[str], reference_results: list[str]
) -> None:
    chosen = [0, 13, 47, 60, 87, 97]  # both hills and the wiki set
    files = [warrior_path(reference_names[i]) for i in chosen]
    result = bfjoust("matrix", "--jobs", "2", *files)
    assert result.returncode == 0, result.stderr
    expected = [reference_results[i * 98 + j] for i in chosen for j in chosen]
    assert result.stdout.splitlines() == expected


def test_matrix_with_a_bad_file_prints_nothing_and_fails(tmp_path: Path) -> None:
    good = write(tmp_path, "good.bf", "+")
    bad = write(tmp_path, "bad.bf", "+\n  ]")
    result = bfjoust("matrix", good, bad)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == f"{bad}:2:3: unmatched ']': no '[' opens it"


def test_missing_file_is_reported(tmp_path: Path) -> None:
    result = bfjoust("joust", tmp_path / "nope.bf", tmp_path / "nope.bf")
    assert result.returncode == 1
    assert "nope.bf: cannot read" in result.stderr
    assert "Traceback" not in result.stderr


def test_check_reports_each_file(tmp_path: Path) -> None:
    good = write(tmp_path, "good.bf", "(>)*9")
    bad = write(tmp_path, "bad.bf", "(+{)*5")
    result = bfjoust("check", good, bad)
    assert result.returncode == 1
    assert result.stdout.startswith(f"{good}: ok")
    assert f"{bad}:1:3:" in result.stderr


def test_trace_text_and_json(tmp_path: Path) -> None:
    left = write(tmp_path, "left.bf", "(>)*9[-]")
    right = write(tmp_path, "right.bf", "(-)*10")
    text = bfjoust("trace", left, right, "--tape", "10", "--polarity", "kettle")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert "A80" in lines[3] and "B80" in lines[3]  # state 0: both flags, both pointers
    assert lines[-1].startswith("left wins after")
    data = json.loads(bfjoust("trace", left, right, "--tape", "10", "--json").stdout)
    assert data["winner"] == "left"
    assert len(data["tapes"]) == data["cycles"] + 1
    assert len(data["left_source"]) == data["cycles"]


def test_trace_rejects_a_bad_tape_length(tmp_path: Path) -> None:
    program = write(tmp_path, "p.bf", "+")
    result = bfjoust("trace", program, program, "--tape", "31")
    assert result.returncode == 2
    assert "10..30" in result.stderr


def test_check_accepts_every_reference_program(reference_names: list[str]) -> None:
    files = [warrior_path(name) for name in reference_names]
    result = bfjoust("check", *files)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(files) == 98
    assert all(line.startswith(f"{path}: ok, ") for line, path in zip(lines, files, strict=True))


def test_servers_say_why_they_cannot_start(tmp_path: Path) -> None:
    """A taken port is a one-line message and exit status 1, not a traceback."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write(
            tmp_path,
            "config.toml",
            f'[hill]\ndata_dir = "var"\n[web]\nport = {port}\n[irc]\nport = {port}\n',
        )
        web = bfjoust("web", "--config", config)
        assert web.returncode == 1
        assert web.stderr.startswith("bfjoust web: ") and "Traceback" not in web.stderr
        bot = bfjoust("bot", "--config", config)
        assert bot.returncode == 1
        assert bot.stderr.splitlines()[-1].startswith("bfjoust bot: ")
        assert "Traceback" not in bot.stderr


def test_an_option_given_only_dashes_is_refused_in_a_line(tmp_path: Path) -> None:
    """`--owner=--` (argparse reads '--' as the end of the options) was a
    TypeError traceback; a contest time past year 9999 in UTC an OverflowError."""
    program = write(tmp_path, "p.bf", "(>)*9([-]>)*21")
    done = bfjoust("contest", "enter", "--data", tmp_path, "zz2", program, "--owner=--")
    assert done.returncode == 2
    assert "--owner got no value" in done.stderr and "Traceback" not in done.stderr
    done = bfjoust(
        "contest", "create", "--data", tmp_path, "zz2", "--closes", "9999-12-31T23:59:59-14:00"
    )
    assert done.returncode == 1
    assert "is too far off" in done.stderr and "Traceback" not in done.stderr
