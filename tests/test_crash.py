"""Crash safety: kill -9 a real `bfjoust hill submit` at any point; the next
start shows the old hill or the new one, never a mix, and git agrees.  A kill
while git holds one of its lock files leaves the readers working and the
next writer repairs the repository by itself.  (Each `bfjoust` is a process
of its own, forked from a server that has imported the command's modules:
support.forks.)"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sqlalchemy import select
from support import forks as forking
from support.forks import Commands, ForkedProcess, Forks
from support.reference import warrior_path

from bot.ircd import free_port, listening, stop_process
from hill.config import HillSettings
from hill.store.tables import Event, ProgramRow
from hill.writers.hill import Hill

OPPONENTS = [
    "esohill-20131008/ais523_defend7.bfjoust",
    "esohill-20131008/Deewiant_allegro.bfjoust",
    "esohill-20131008/david_werecat_leviathan.bfjoust",
    "esohill-20241026/ais523.margins.bfjoust",
    "wiki/wiggle_clear.bfjoust",
]
CHALLENGER = "esohill-20131008/quintopia_poke.bfjoust"
SUBMIT = [sys.executable, "-m", "hill", "hill"]  # bfjoust hill
forks = forking.forks  # the fixture


def start_hill(data: Path) -> list[str]:
    hill = Hill(HillSettings(data_dir=data))
    for path in OPPONENTS:
        hill.challenge("seed", Path(path).stem.replace(".", "_"), warrior_path(path).read_bytes())
    names = [e.program.full_name for e in hill.queries.standings().entries]
    hill.close()
    return names


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The opponents' hill, made once for the module (closed: a folder)."""
    data = tmp_path_factory.mktemp("seeded") / "var"
    return data, start_hill(data)


def copy_of(seeded: tuple[Path, list[str]], tmp_path: Path) -> tuple[Path, list[str]]:
    """A test's own copy of the opponents' hill: its data folder, its programs."""
    data = tmp_path / "var"
    shutil.copytree(seeded[0], data, symlinks=True)
    return data, list(seeded[1])


def submit(forks: Forks, data: Path, crash_at: str | None = None) -> ForkedProcess:
    """`bfjoust hill submit` of the challenger, in a session of its own (its
    git children die with it: os.killpg)."""
    env = dict(os.environ)
    if crash_at:
        env["BFJOUST_CRASH_AT"] = crash_at
    return forks.popen(
        [
            *SUBMIT,
            "--data",
            data,
            "submit",
            warrior_path(CHALLENGER),
            "--owner",
            "crasher",
            "--name",
            "poke",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def check_consistent(data: Path, old: list[str]) -> bool:
    """Reopen the hill; return whether the submission landed."""
    hill = Hill(HillSettings(data_dir=data))
    names = [e.program.full_name for e in hill.queries.standings().entries]
    with hill.db.session() as session:
        rows = session.scalars(select(ProgramRow).where(ProgramRow.status == "hill"))
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
    # every change has its commit, one commit a change, in order
    changes = hill.queries.changes()
    log = hill.repository.log()
    assert [c.commit for c in reversed(changes)] == [c.hexsha for c in log]
    assert [f"Hill-Event: {c.id}" in str(commit.message) for c, commit in zip(
        reversed(changes), log, strict=True)] == [True] * len(log)  # fmt: skip
    assert not list((data / "hill-repo" / ".git").rglob("*.lock"))
    hill.close()
    return landed


@pytest.mark.parametrize(
    ("point", "lands"), [("jousted", False), ("stored", True), ("files-written", True)]
)
def test_kill_at_each_point_of_a_submission(
    tmp_path: Path, seeded: tuple[Path, list[str]], forks: Forks, point: str, lands: bool
) -> None:
    data, old = copy_of(seeded, tmp_path)
    process = submit(forks, data, point)
    assert process.wait(timeout=120) == -signal.SIGKILL
    assert check_consistent(data, old) is lands


def test_kill_at_moments_spread_over_a_submission(
    tmp_path: Path, seeded: tuple[Path, list[str]], forks: Forks
) -> None:
    data, old = copy_of(seeded, tmp_path)
    # how long a whole submission takes here (its fork server started before)
    forks.ready(SUBMIT)
    started = time.monotonic()
    assert submit(forks, data).wait(timeout=120) == 0
    duration = time.monotonic() - started
    assert check_consistent(data, old)
    landed = []
    for fraction in (0.15, 0.3, 0.45, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.1):
        # take it off again so that every kill hits a real submission
        hill = Hill(HillSettings(data_dir=data))
        if hill.queries.standings().find("crasher.poke"):
            hill.withdraw("crasher", "poke")
        hill.close()
        process = submit(forks, data)
        time.sleep(fraction * duration)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        landed.append(check_consistent(data, old))
    print("landed after each kill:", landed)


# --- kills while git holds its locks --------------------------------------------
# Git holds a lock file only for a moment; the tests widen that moment with
# git's own extension points, then kill the submission (and its git) from
# outside as soon as the lock file is there.  A clean filter runs while `git
# add` holds .git/index.lock; the reference-transaction hook runs while git
# holds the branch's ref lock; post-commit runs after the commit, before the
# hill notes it in the database.

SLOW = "sleep 60"
HOOKS = {
    "index.lock": None,
    # (a commit moves the branch; git reset --hard at the writer's start does not)
    "refs/heads/main.lock": '#!/bin/sh\n[ "$1" = prepared ] || exit 0\n'
    "while read old new ref; do\n"
    f'  [ "$ref" = refs/heads/main ] && [ "$old" != "$new" ] && {SLOW}\n'
    "done\nexit 0\n",
    "committed": f"#!/bin/sh\ntouch .git/committed\n{SLOW}\n",  # (hooks run in the work tree)
}
HOOK_NAMES = {"refs/heads/main.lock": "reference-transaction", "committed": "post-commit"}


def widen(git_dir: Path, moment: str) -> None:
    if moment == "index.lock":
        # only the challenger's file, so that nothing else waits on it
        (git_dir / "info" / "attributes").write_text("crasher.poke.bfjoust filter=slow\n")
        with (git_dir / "config").open("a") as config:
            config.write(f'[filter "slow"]\n\tclean = "{SLOW}; cat"\n')
        return
    hook = git_dir / "hooks" / HOOK_NAMES[moment]
    hook.write_text(HOOKS[moment] or "")
    hook.chmod(0o755)


def narrow(git_dir: Path) -> None:
    """Back to plain git: no filter, no hooks (the killed git left its lock)."""
    (git_dir / "info" / "attributes").unlink(missing_ok=True)
    subprocess.run(
        ["git", "config", "--remove-section", "filter.slow"], cwd=git_dir, capture_output=True
    )
    for name in HOOK_NAMES.values():
        (git_dir / "hooks" / name).unlink(missing_ok=True)


def kill_when(process: ForkedProcess, *paths: Path, timeout: float = 120) -> None:
    """SIGKILL the process and its children the moment all `paths` exist."""
    deadline = time.monotonic() + timeout
    while not all(path.exists() for path in paths):
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        assert time.monotonic() < deadline, f"{paths} never appeared"
        time.sleep(0.005)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def bfjoust(forks: Forks, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return Commands(forks)(*args, timeout=120)


def get_json(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def serve(forks: Forks, args: list[str], config: Path, ready: str) -> ForkedProcess:
    """`bfjoust web` or `bfjoust bot`, once it says it serves the web report."""
    process = forks.popen(
        [sys.executable, "-m", "hill", *args, "--config", config],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    while ready not in (line := process.stdout.readline()):
        assert line, f"bfjoust {args[0]} ended before serving"
    port = int(web_url(config).rstrip("/").rsplit(":", 1)[1])
    deadline = time.monotonic() + 30
    while not listening("127.0.0.1", port):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    return process


@pytest.mark.parametrize("moment", list(HOOKS))
def test_a_kill_while_git_holds_a_lock_is_repaired_by_the_next_writer(
    tmp_path: Path, seeded: tuple[Path, list[str]], forks: Forks, moment: str
) -> None:
    data, old = copy_of(seeded, tmp_path)
    git_dir = data / "hill-repo" / ".git"
    before = commits(data)
    widen(git_dir, moment)
    process = submit(forks, data)
    left = git_dir / moment
    # (the writer's start takes git's locks too: wait for the commit's files)
    kill_when(process, data / "hill-repo" / "crasher.poke.bfjoust", left)
    narrow(git_dir)
    if moment != "committed":
        assert left.exists()  # the killed git's lock is still there
    # readers never wait on git: the report and the history answer at once
    report = bfjoust(forks, "hill", "--data", data, "report")
    assert report.returncode == 0, report.stderr
    assert "crasher.poke" in report.stdout  # the database took the submission
    history = bfjoust(forks, "hill", "--data", data, "history")
    assert history.returncode == 0 and len(history.stdout.splitlines()) == len(old) + 1
    config = tmp_path / "config.toml"
    config.write_text(
        f'[hill]\ndata_dir = "{data}"\n[irc]\nport = {free_port()}\n[web]\nport = {free_port()}\n'
    )
    web = serve(forks, ["web"], config, "on the web at")
    try:
        url = web_url(config)
        changes = get_json(f"{url}api/history")["changes"]
        assert isinstance(changes, list) and len(changes) == len(old) + 1
    finally:
        stop_process(web)  # type: ignore[arg-type]
    # the bot, a writer, starts: it clears the lock and completes the history
    bot = serve(forks, ["bot"], config, "The web report is at")
    try:
        changes = get_json(f"{web_url(config)}api/history")["changes"]
        assert isinstance(changes, list) and all(c["commit"] for c in changes)
    finally:
        stop_process(bot)  # type: ignore[arg-type]
    assert moment == "committed" or not left.exists()  # (that one is the hook's marker)
    assert check_consistent(data, old)
    # repaired in place: the history before the kill is still there, one more commit
    assert commits(data)[:-1] == before and not list(data.glob("hill-repo.*"))
    assert bfjoust(forks, "hill", "--data", data, "history").stdout.count("[") == len(old) + 1


def commits(data: Path) -> list[str]:
    """The hill repository's commits, oldest first."""
    log = subprocess.run(
        ["git", "rev-list", "--reverse", "HEAD"],
        cwd=data / "hill-repo",
        capture_output=True,
        text=True,
        check=True,
    )
    return log.stdout.split()


def web_url(config: Path) -> str:
    port = config.read_text().split("[web]\nport = ")[1].split()[0]
    return f"http://127.0.0.1:{port}/"
