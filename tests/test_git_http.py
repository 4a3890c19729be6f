"""The hill's history over HTTP: a stock git client clones, fetches and
pulls it from the web report, shallow or whole, and can never push."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.webhill import Server, build_hill, get, git, reference_programs


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    hill = build_hill(tmp_path_factory.mktemp("hill"), reference_programs()[:6], size=5)
    server = Server(hill)
    yield server, hill
    server.stop()
    hill.close()


def commits(repository: Path) -> list[str]:
    return git("log", "--format=%H %an %at %s", cwd=repository).splitlines()


def test_a_clone_holds_every_commit_of_the_hill(served, tmp_path: Path) -> None:
    server, hill = served
    clone = tmp_path / "clone"
    git("clone", "--quiet", f"{server.url}/hill.git", clone)
    origin = hill.settings.data_dir / "hill-repo"
    assert commits(clone) == commits(origin)
    assert len(commits(clone)) == 6
    assert git("status", "--porcelain", cwd=clone) == ""
    assert (clone / "report.txt").read_text() == (origin / "report.txt").read_text()


def test_a_shallow_clone_then_fetch_and_pull_get_new_commits(served, tmp_path: Path) -> None:
    server, hill = served
    clone = tmp_path / "shallow"
    git("clone", "--quiet", "--depth", "1", f"{server.url}/hill.git", clone)
    assert len(commits(clone)) == 1
    hill.challenge("newcomer", "rush", b"(>)*9([-]>)*21")
    git("pull", "--quiet", "--ff-only", cwd=clone)
    assert "by newcomer.rush" in commits(clone)[0]
    assert (clone / "newcomer.rush.bfjoust").read_bytes() == b"(>)*9([-]>)*21"
    git("fetch", "--quiet", "--unshallow", cwd=clone)
    assert commits(clone) == commits(hill.settings.data_dir / "hill-repo")


def test_a_push_is_refused_and_changes_nothing(served, tmp_path: Path) -> None:
    server, hill = served
    origin = hill.settings.data_dir / "hill-repo"
    before = commits(origin)
    clone = tmp_path / "pusher"
    git("clone", "--quiet", f"{server.url}/hill.git", clone)
    (clone / "evil.bfjoust").write_text("[]")
    git("add", "evil.bfjoust", cwd=clone)
    git("commit", "--quiet", "-m", "evil", cwd=clone)
    pushed = subprocess.run(
        ["git", "push", "origin", "HEAD:main"], cwd=clone, capture_output=True, text=True
    )
    assert pushed.returncode != 0
    assert "403" in pushed.stderr
    assert commits(origin) == before
    refused = get(f"{server.url}/hill.git/info/refs?service=git-receive-pack")
    assert refused.status == 403 and "read-only" in refused.text


@pytest.mark.parametrize(
    "path",
    [
        "/hill.git/config",
        "/hill.git/HEAD",
        "/hill.git/objects/info/packs",
        "/hill.git/info/refs",  # the dumb protocol is not served
        "/hill.git/..%2Fhill.sqlite3",
        "/hill.git/%2e%2e/%2e%2e/hill.sqlite3",
        "/hill.git/info/refs?service=git-upload-archive",
    ],
)
def test_nothing_but_the_read_side_of_git_is_reachable(served, path: str) -> None:
    server, _ = served
    reply = get(server.url + path)
    assert reply.status == 404
    assert reply.headers["Content-Type"].startswith("text/plain")
    assert "git clone" in reply.text


def test_an_empty_hill_clones_as_an_empty_repository(tmp_path: Path) -> None:
    hill = build_hill(tmp_path / "hill", [])
    server = Server(hill)
    try:
        said = git("clone", f"{server.url}/hill.git", tmp_path / "empty")
        assert "empty repository" in said
    finally:
        server.stop()
        hill.close()
