"""Crash safety: kill -9 a real `bfjoust hill submit` at any point; the next
start shows the old hill or the new one, never a mix, and git agrees."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import warrior_path
from sqlalchemy import select

from hill.config import HillSettings
from hill.service import Hill
from hill.storage import Event, Program

OPPONENTS = [
    "esohill-20131008/ais523_defend7.bfjoust",
    "esohill-20131008/Deewiant_allegro.bfjoust",
    "esohill-20131008/david_werecat_leviathan.bfjoust",
    "esohill-20241026/ais523.margins.bfjoust",
    "wiki/wiggle_clear.bfjoust",
]
CHALLENGER = "esohill-20131008/quintopia_poke.bfjoust"


def start_hill(data: Path) -> list[str]:
    hill = Hill(HillSettings(data_dir=data))
    for path in OPPONENTS:
        hill.challenge("seed", Path(path).stem.replace(".", "_"), warrior_path(path).read_bytes())
    names = [e.program.full_name for e in hill.queries.standings().entries]
    hill.close()
    return names


def submit(data: Path, crash_at: str | None = None) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    if crash_at:
        env["BFJOUST_CRASH_AT"] = crash_at
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hill",
            "hill",
            "--data",
            str(data),
            "submit",
            str(warrior_path(CHALLENGER)),
            "--owner",
            "crasher",
            "--name",
            "poke",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def check_consistent(data: Path, old: list[str]) -> bool:
    """Reopen the hill; return whether the submission landed."""
    hill = Hill(HillSettings(data_dir=data))
    names = [e.program.full_name for e in hill.queries.standings().entries]
    with hill.db.session() as session:
        rows = session.scalars(select(Program).where(Program.status == "hill"))
        on_hill = {p.full_name for p in rows}
        latest = session.scalars(select(Event).order_by(Event.id.desc())).first()
    assert on_hill == set(names)
    landed = "crasher.poke" in names
    assert sorted(names) == sorted([*old, "crasher.poke"] if landed else old)
    # git is back in line: its last commit records the last event, with the same programs
    assert latest is not None and hill.repository.recorded_event() == latest.id
    files = {b.path for b in hill.repository.repo.head.commit.tree.blobs}
    assert files == {f"{n}.bfjoust" for n in names} | {"report.txt"}
    assert not hill.repository.repo.is_dirty(untracked_files=True)
    hill.close()
    return landed


@pytest.mark.parametrize(
    ("point", "lands"), [("jousted", False), ("stored", True), ("files-written", True)]
)
def test_kill_at_each_point_of_a_submission(tmp_path: Path, point: str, lands: bool) -> None:
    data = tmp_path / "var"
    old = start_hill(data)
    process = submit(data, point)
    assert process.wait(timeout=120) == -signal.SIGKILL
    assert check_consistent(data, old) is lands


def test_kill_at_moments_spread_over_a_submission(tmp_path: Path) -> None:
    data = tmp_path / "var"
    old = start_hill(data)
    # how long a whole submission takes here
    started = time.monotonic()
    assert submit(data).wait(timeout=120) == 0
    duration = time.monotonic() - started
    assert check_consistent(data, old)
    landed = []
    for fraction in (0.15, 0.3, 0.45, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.1):
        # take it off again so that every kill hits a real submission
        hill = Hill(HillSettings(data_dir=data))
        if hill.queries.standings().find("crasher.poke"):
            hill.withdraw("crasher", "poke")
        hill.close()
        process = submit(data)
        time.sleep(fraction * duration)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        landed.append(check_consistent(data, old))
    print("landed after each kill:", landed)
