"""The writer's start brings git in line with the database without ever
rewriting what agrees: the commits that record the database's changes in
order keep their shas, a lost or rebuilt commit comes back with its very
sha, and a history that disagrees is kept under refs/hill/diverged-... and
reported, never silently started over (a real SQLite file, a real git)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from hill.config import HillSettings
from hill.writers.hill import Hill

RUSH = b"(>)*9([-]>)*21"
IDLE = b"[]"
DECOY = b">(+)*30>(-)*30(>)*7([-]>)*21"
TRAIL = b">(+)*10>(-)*10(>)*6([+]>)*21"


def open_hill(data: Path) -> Hill:
    return Hill(HillSettings(data_dir=data), jobs=2)


def git(data: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=data / "hill-repo", capture_output=True, text=True, check=True
    )
    return done.stdout


def shas(data: Path) -> list[str]:
    """The branch's commits, oldest first (a fresh git)."""
    return git(data, "rev-list", "--reverse", "HEAD").split()


def noted(data: Path) -> list[str | None]:
    """The commit each hill change is noted with, in order."""
    with contextlib.closing(sqlite3.connect(data / "hill.sqlite3")) as db:
        rows = db.execute("SELECT [commit] FROM events WHERE kind != 'test' ORDER BY id")
        return [sha for (sha,) in rows]


def change_database(data: Path, *statements: tuple[str, tuple[object, ...]]) -> None:
    with contextlib.closing(sqlite3.connect(data / "hill.sqlite3")) as db, db:
        for statement, values in statements:
            db.execute(statement, values)


def diverged(data: Path) -> list[str]:
    """The refs of the histories set aside (kept beside the served repository)."""
    assert git(data, "for-each-ref", "refs/hill/") == "", "never in the served repository"
    aside = data / "hill-repo-diverged.git"
    if not aside.exists():
        return []
    return aside_git(data, "for-each-ref", "--format=%(refname)", "refs/hill/").split()


def aside_git(data: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(data / "hill-repo-diverged.git"), *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def served(data: Path, sha: str) -> bool:
    """Whether a fetch of `sha` by id from the served repository gets it
    (git protocol v2 serves any object the repository holds)."""
    fetch = subprocess.run(
        ["git", "-c", "protocol.version=2", "fetch", "--quiet",
         (data / "hill-repo").as_uri(), sha],
        cwd=make_clone_target(data),
        capture_output=True,
        text=True,
    )  # fmt: skip
    return fetch.returncode == 0


def make_clone_target(data: Path) -> Path:
    target = data.parent / "fetcher"
    if not target.exists():
        subprocess.run(["git", "init", "--quiet", str(target)], check=True)
    return target


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A hill of three changes, closed."""
    data = tmp_path / "var"
    hill = open_hill(data)
    for name, code in (("rush", RUSH), ("idle", IDLE), ("decoy", DECOY)):
        hill.challenge("alice", name, code)
    hill.close()
    return data


def test_a_lost_or_rebuilt_history_comes_back_with_the_same_shas(data: Path) -> None:
    before = shas(data)
    assert noted(data) == before
    git(data, "reset", "--hard", "--quiet", "HEAD~2")  # as a repository put back from a backup
    open_hill(data).close()
    assert shas(data) == before and noted(data) == before
    shutil.rmtree(data / "hill-repo")  # lost
    open_hill(data).close()
    assert shas(data) == before and noted(data) == before
    assert diverged(data) == []


def test_commits_the_database_did_not_note_are_found_not_made_again(data: Path) -> None:
    before = shas(data)
    # as a kill between the commit and its note in the database
    change_database(
        data, ("UPDATE events SET [commit] = NULL WHERE id = (SELECT max(id) FROM events)", ())
    )
    hill = open_hill(data)
    hill.challenge("bob", "trail", TRAIL)
    hill.close()
    assert shas(data)[:3] == before and len(shas(data)) == 4
    assert noted(data) == shas(data)


def test_a_history_that_looks_empty_to_a_dead_helper_is_not_committed_again(
    data: Path,
) -> None:
    """The cause of the duplicated history: GitPython's `git cat-file`
    helpers died with a Ctrl-C, HEAD then looked invalid, and the whole
    history was committed again.  Here they die by SIGKILL mid-run."""
    hill = open_hill(data)
    before = shas(data)
    assert hill.repository.recorded_event() == 3
    assert hill.repository.log()[0].hexsha == before[-1]  # (GitPython's helpers start)
    killed = kill_children("cat-file")
    assert killed, "no git cat-file helper was running"
    hill.challenge("bob", "trail", TRAIL)
    assert hill.repository.recorded_event() == 4
    hill.close()
    assert shas(data)[:3] == before and len(shas(data)) == 4 == len(noted(data))


def kill_children(command: str) -> list[int]:
    """SIGKILL this process's children running git `command`."""
    killed = []
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError):
            ppid = int(status.read_text().split("PPid:")[1].split()[0])
            cmdline = (status.parent / "cmdline").read_bytes().split(b"\0")
            if ppid == os.getpid() and command.encode() in cmdline:
                os.kill(int(status.parent.name), signal.SIGKILL)
                killed.append(int(status.parent.name))
    return killed


def test_a_duplicated_history_is_set_aside_and_the_first_copy_kept(
    data: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A repository damaged by the old bug (every change committed twice,
    the database noting the copies) goes back to the first copy."""
    first = shas(data)
    for sha in first:  # the same changes again on top, as the bug made them
        message = git(data, "log", "-1", "--format=%B", sha)
        git(data, "commit", "--quiet", "--allow-empty", "-m", message)
    copies = shas(data)[3:]
    renote = "UPDATE events SET [commit] = ? WHERE id = ?"
    change_database(data, *((renote, (sha, event)) for event, sha in enumerate(copies, 1)))
    with caplog.at_level(logging.WARNING):
        open_hill(data).close()
    assert shas(data) == first and noted(data) == first
    (ref,) = diverged(data)
    assert aside_git(data, "rev-parse", ref).strip() == copies[-1]  # nothing lost
    assert "disagrees with its database" in caplog.text and ref in caplog.text


def test_a_history_ahead_of_its_database_is_kept_and_reported(
    data: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A database put back from an older backup: the newer commits are not
    the database's; they stay under a ref, the next change follows on."""
    backup = tmp_path / "backup.sqlite3"
    with (
        contextlib.closing(sqlite3.connect(data / "hill.sqlite3")) as db,
        contextlib.closing(sqlite3.connect(backup)) as copy,
    ):
        db.backup(copy)
    hill = open_hill(data)
    hill.challenge("bob", "trail", TRAIL)
    hill.close()
    ahead = shas(data)
    shutil.copy(backup, data / "hill.sqlite3")
    for suffix in ("-wal", "-shm"):
        (data / f"hill.sqlite3{suffix}").unlink(missing_ok=True)
    with caplog.at_level(logging.ERROR):
        hill = open_hill(data)
    assert shas(data) == ahead[:3]
    (ref,) = diverged(data)
    assert aside_git(data, "rev-parse", ref).strip() == ahead[-1]
    assert "disagrees with its database" in caplog.text
    hill.challenge("carol", "trail", TRAIL)
    hill.close()
    assert shas(data)[:3] == ahead[:3] and noted(data) == shas(data)


def test_a_commit_made_by_hand_is_set_aside(data: Path, caplog: pytest.LogCaptureFixture) -> None:
    before = shas(data)
    (data / "hill-repo" / "notes.txt").write_text("mine")
    git(data, "add", "notes.txt")
    git(data, "commit", "--quiet", "-m", "a note of my own")
    mine = shas(data)[-1]
    with caplog.at_level(logging.ERROR):
        open_hill(data).close()
    assert shas(data) == before and not (data / "hill-repo" / "notes.txt").exists()
    (ref,) = diverged(data)
    assert aside_git(data, "rev-parse", ref).strip() == mine
    assert f"commit {mine} records no event" in caplog.text
    # kept, but not in the served repository: no fetch by id brings it (issue 33.7)
    assert served(data, before[-1]) and not served(data, mine)
    blob = aside_git(data, "rev-parse", f"{mine}:notes.txt").strip()
    missing = subprocess.run(["git", "cat-file", "-e", blob], cwd=data / "hill-repo")
    assert missing.returncode != 0


def test_the_repository_is_never_one_found_in_a_parent_folder(tmp_path: Path) -> None:
    """A hill-repo without its .git inside another repository is rebuilt,
    not mistaken for the outer one."""
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    data = tmp_path / "var"
    (data / "hill-repo").mkdir(parents=True)
    hill = open_hill(data)
    hill.challenge("alice", "rush", RUSH)
    hill.close()
    assert len(shas(data)) == 1
    outer = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=tmp_path)
    assert outer.returncode != 0  # the outer repository got no commit
