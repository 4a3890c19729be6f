"""Browsing the hill's history: a hill built with the command line (real
processes), served by `bfjoust web`, cloned with a stock git over HTTP and
read in headless Chromium: commit pages with diffs, every version of a
program, the raw code, the Atom feed, and bad SHAs and paths."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from support.reference import warrior_path
from support.webhill import WebProcess, get, git

from hill.config import HillSettings, WebSettings
from hill.engine import code_hash
from hill.store.queries import HillQueries
from hill.web.server import SECURITY_HEADERS, create_app

RUSH = b"(>)*9([-]>)*21"
RUSH_2 = b"(>)*8([+]>)*21"
TRAIL = b">(+)*10>(-)*10(>)*6([+]>)*21"
DEFENDER = b"(+)*30<(-)*30>([-]+)*10000"
LUGH = warrior_path("esohill-20241026/Lymia.lugh.bfjoust").read_bytes()
# changed in two places (comments: the new version must parse too)
LUGH_2 = LUGH[:1000] + b"X" + LUGH[1000:400000] + b"ab" + LUGH[400000:]
ATOM = "{http://www.w3.org/2005/Atom}"


def bfjoust(*args: str | Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "hill", *map(str, args)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@dataclass
class Served:
    folder: Path
    web: WebProcess
    url: str
    repository: Path
    queries: HillQueries
    pushed_off: str  # by lymia.lugh's arrival
    withdrawn: str

    def commit_of(self, title: str) -> str:
        """The sha of the (last) commit whose title matches `title`."""
        found = git("log", "-1", "--format=%H", f"--grep=^{title}$", cwd=self.repository).strip()
        assert found, title
        return found


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Nine changes, each `bfjoust hill ...` as a process (its options on
    either side): arrivals, an update, the 800 KB program arriving (pushing
    one off a hill of 4) and changed, a withdrawal and a rescore."""
    folder = tmp_path_factory.mktemp("history")
    data = folder / "var"
    config = folder / "cli.toml"
    config.write_text('[hill]\ndata_dir = "var"\nsize = 4\n')
    files = folder / "files"
    files.mkdir()
    bfjoust("hill", "--config", config, "init")
    for owner, name, code in (
        ("alice", "rush", RUSH),
        ("bob", "trail", TRAIL),
        ("carol", "defend", DEFENDER),
        ("dave", "idle", b"[]"),
        ("alice", "rush", RUSH_2),
        ("lymia", "lugh", LUGH),
        ("lymia", "lugh", LUGH_2),
    ):
        path = files / f"{owner}.{name}.bfjoust"
        path.write_bytes(code)
        bfjoust("hill", "submit", path, "--owner", owner, "--name", name, "--config", config)
    queries = HillQueries.open(data, "markov")
    changes = queries.changes()
    pushed_off = next(c.displaced for c in changes if c.kind == "challenge")
    staying = [e.program for e in queries.standings().entries]
    withdrawn = next(p for p in staying if p.owner not in ("alice", "lymia"))
    bfjoust("--config", config, "hill", "withdraw", withdrawn.name, "--owner", withdrawn.owner)
    bfjoust("hill", "rescore", "--config", config)
    web = WebProcess(folder)  # `bfjoust web` on folder/var
    try:
        yield Served(
            folder, web, web.url, data / "hill-repo", queries, pushed_off, withdrawn.full_name
        )
    finally:
        queries.close()
        assert web.stop() == 0, web.log()


def log(repository: Path) -> list[str]:
    """Every commit: sha, author, email, time, tree and the whole message."""
    fields = "%H%x1f%an%x1f%ae%x1f%at%x1f%T%x1f%B%x1e"
    return git("log", f"--format={fields}", cwd=repository).split("\x1e")[:-1]


def test_a_clone_has_every_commit_and_a_push_changes_nothing(served: Served, tmp_path) -> None:
    clone = tmp_path / "clone"
    git("clone", "--quiet", f"{served.url}/hill.git", clone)
    commits = log(clone)
    assert commits == log(served.repository)
    assert len(commits) == 9
    changes = served.queries.changes()
    assert [c.commit for c in reversed(changes)] == [c.split("\x1f")[0].strip() for c in commits]
    assert (clone / "lymia.lugh.bfjoust").read_bytes() == LUGH_2
    assert (clone / "alice.rush.bfjoust").read_bytes() == RUSH_2
    # the footer of every page says how to clone it
    assert f"git clone {served.url}/hill.git" in get(served.url + "/").text
    # a push is refused and the hill's repository does not change
    before = git("for-each-ref", cwd=served.repository)
    (clone / "evil.bfjoust").write_text("[]")
    git("add", "evil.bfjoust", cwd=clone)
    git("commit", "--quiet", "-m", "evil", cwd=clone)
    pushed = git("push", "origin", "HEAD:main", cwd=clone, check=False)
    assert "403" in pushed and "read-only" in pushed
    assert git("for-each-ref", cwd=served.repository) == before
    assert log(served.repository) == commits


def test_every_commit_has_a_page_that_git_agrees_with(served: Served) -> None:
    for entry in log(served.repository):
        sha, author, email, seconds, _tree, message = entry.lstrip("\n").split("\x1f")
        for given in (sha, sha[:7], sha[:12].upper()):
            data = get(f"{served.url}/api/commit/{given}").json()
            assert data["commit"]["sha"] == sha, given
        commit = data["commit"]
        assert (commit["author"], commit["email"]) == (author, email)
        when = dt.datetime.fromtimestamp(int(seconds), dt.UTC)
        assert commit["time"] == when.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert commit["message"] == message
        assert commit["title"] == message.split("\n")[0]
        assert data["event"]["commit"] == sha
        page = get(f"{served.url}/commit/{sha[:7]}")
        assert page.status == 200 and sha in page.text
        assert page.headers["Content-Type"].startswith("text/html")


def test_an_update_shows_both_versions_and_who_moved(served: Served) -> None:
    sha = served.commit_of("Updating alice.rush")
    data = get(f"{served.url}/api/commit/{sha}").json()
    (program,) = data["programs"]
    assert program["program"] == "alice.rush" and program["status"] == "modified"
    assert program["old"] == {"bytes": len(RUSH), "hash": code_hash(RUSH)}
    assert program["new"] == {"bytes": len(RUSH_2), "hash": code_hash(RUSH_2)}
    (hunk,) = program["diff"]["hunks"]
    assert hunk["old"]["text"] == RUSH.decode() and hunk["new"]["text"] == RUSH_2.decode()
    assert data["other_files"] == [{"path": "report.txt", "status": "modified"}]
    moves = {m["program"]: m for m in data["standings"]["moves"]}
    assert set(moves) == {"alice.rush", "bob.trail", "carol.defend", "dave.idle"}
    assert [m["program"] for m in data["standings"]["moves"] if m["updated"]] == ["alice.rush"]
    before = served.queries.standings_at(data["standings"]["before"])
    after = served.queries.standings_at(data["event"]["id"])
    for entry in after.entries:
        move = moves[entry.program.full_name]
        assert move["after"] == entry.rank
        assert move["before"] == before.find(entry.program.full_name).rank
        assert move["places"] == move["before"] - move["after"]


def test_an_arrival_that_pushes_one_off(served: Served) -> None:
    gone = served.pushed_off
    sha = served.commit_of(f"Replacing {gone} by lymia.lugh")
    data = get(f"{served.url}/api/commit/{sha}").json()
    status = {p["program"]: p["status"] for p in data["programs"]}
    assert status == {"lymia.lugh": "added", gone: "deleted"}
    moves = {m["program"]: m["move"] for m in data["standings"]["moves"]}
    assert moves["lymia.lugh"] == "new" and moves[gone] == "left"
    # the 800 KB program arriving: its diff is cut, with a link to its code
    lugh = next(p for p in data["programs"] if p["program"] == "lymia.lugh")
    assert lugh["diff"]["truncated"] and lugh["diff"]["inserted"] == len(LUGH)
    shown = sum(len(h["new"]["text"]) for h in lugh["diff"]["hunks"])
    assert 0 < shown <= 20_000
    page = get(f"{served.url}/commit/{sha}").text
    assert "The diff is cut here" in page and f'href="/code/{code_hash(LUGH)}"' in page
    code = get(f"{served.url}/code/{code_hash(LUGH)}")
    assert code.body == LUGH and code.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_the_800_kb_program_changed_shows_its_changes_in_context(served: Served) -> None:
    sha = served.commit_of("Updating lymia.lugh")
    reply = get(f"{served.url}/api/commit/{sha}")
    (lugh,) = reply.json()["programs"]
    diff = lugh["diff"]
    assert not diff["truncated"] and (diff["deleted"], diff["inserted"]) == (0, 3)
    first, second = diff["hunks"]
    assert first["new"]["column"] > 900 and second["new"]["column"] > 399_000
    assert len(reply.body) < 10_000  # excerpts, not 1.6 MB of code
    assert f'href="/code/{code_hash(LUGH_2)}"' not in get(f"{served.url}/commit/{sha}").text


def test_a_withdrawal_and_a_rescore(served: Served) -> None:
    gone = served.withdrawn
    data = get(f"{served.url}/api/commit/{served.commit_of(f'Withdrawing {gone}')}").json()
    assert [(p["program"], p["status"]) for p in data["programs"]] == [(gone, "deleted")]
    assert {m["program"]: m["move"] for m in data["standings"]["moves"]}[gone] == "left"
    data = get(f"{served.url}/api/commit/{served.commit_of('Rescoring the hill')}").json()
    assert data["programs"] == [] and data["commit"]["author"] == "admin"
    assert "No program changed" in get(f"{served.url}/commit/{data['commit']['sha']}").text


def test_every_version_of_a_program_with_its_diff_and_code(served: Served) -> None:
    data = get(f"{served.url}/api/breakdown/alice.rush").json()
    first, second = data["versions"]
    assert (first["number"], second["number"]) == (1, 2)
    assert (first["hash"], second["hash"]) == (code_hash(RUSH), code_hash(RUSH_2))
    assert first["diff"] is None and first["status"] == "left" and first["left_reason"] == "updated"
    assert first["event"]["kind"] == "join" and first["rank"] == 1
    assert second["event"]["kind"] == "update" and second["status"] == "hill"
    assert second["event"]["summary"].startswith("alice.rush: points ")
    (hunk,) = second["diff"]["hunks"]
    assert (hunk["old"]["text"], hunk["new"]["text"]) == (RUSH.decode(), RUSH_2.decode())
    page = get(f"{served.url}/program/alice.rush").text
    assert page.count('class="version"') == 2 and "What changed from version 1" in page
    for version, code in ((first, RUSH), (second, RUSH_2)):
        assert f'href="/code/{version["hash"]}"' in page
        assert f'href="/commit/{version["event"]["commit"]}"' in page
        assert get(f"{served.url}/code/{version['hash']}").body == code
    # the 800 KB program's versions: the diff in excerpts
    lugh = get(f"{served.url}/api/breakdown/lymia.lugh").json()["versions"]
    assert [v["bytes"] for v in lugh] == [len(LUGH), len(LUGH_2)]
    assert lugh[1]["diff"]["inserted"] == 3


def test_the_history_page_links_each_commit(served: Served) -> None:
    page = get(f"{served.url}/history").text
    for change in served.queries.changes():
        assert f'href="/commit/{change.commit}"' in page
    state = get(f"{served.url}/").text
    assert f'href="/commit/{served.queries.latest_state()[1]}"' in state


def test_the_atom_feed(served: Served) -> None:
    reply = get(f"{served.url}/history.atom")
    assert reply.headers["Content-Type"] == "application/atom+xml; charset=utf-8"
    feed = ElementTree.fromstring(reply.body)
    assert feed.tag == f"{ATOM}feed"
    assert feed.find(f"{ATOM}link[@rel='self']").get("href") == f"{served.url}/history.atom"
    entries = feed.findall(f"{ATOM}entry")
    changes = served.queries.changes()[::-1]
    assert len(entries) == len(changes) == 9
    ids = [e.findtext(f"{ATOM}id") for e in entries]
    assert len(set(ids)) == 9 and all(i.startswith("urn:uuid:") for i in ids)
    assert feed.findtext(f"{ATOM}updated") == entries[0].findtext(f"{ATOM}updated")
    for entry, change in zip(entries, changes, strict=True):
        assert entry.findtext(f"{ATOM}title").startswith(f"#{change.id} ")
        assert entry.findtext(f"{ATOM}summary") == change.summary
        assert entry.findtext(f"{ATOM}author/{ATOM}name") == change.actor
        link = entry.find(f"{ATOM}link").get("href")
        assert link == f"{served.url}/commit/{change.commit}"
        assert get(link).status == 200
    # the same ids on the next read: stable
    again = ElementTree.fromstring(get(f"{served.url}/history.atom").body)
    assert [e.findtext(f"{ATOM}id") for e in again.findall(f"{ATOM}entry")] == ids
    for path in ("/", "/history", "/matrix", f"/commit/{changes[0].commit}"):
        assert (
            '<link rel="alternate" type="application/atom+xml" title="BF Joust hill: changes" '
            'href="/history.atom">'
        ) in get(served.url + path).text


@pytest.mark.parametrize(
    ("path", "kind", "says"),
    [
        ("/commit/0000000", "text/html", "no commit 0000000"),
        ("/commit/123456", "text/html", "7 to 40 hexadecimal digits"),
        ("/commit/" + "a" * 41, "text/html", "7 to 40"),
        ("/commit/HEAD", "text/html", "no commit id"),
        ("/commit/main", "text/html", "no commit id"),
        ("/commit/..%2F..%2Fhill.sqlite3", "text/html", "no commit id"),
        ("/commit/%2e%2e", "text/html", "no commit id"),
        ("/api/commit/g000000", "application/json", "no commit id"),
        ("/code/" + "0" * 64, "text/plain", "no program with code"),
        ("/code/..%2Fhill.sqlite3", "text/plain", "no code hash"),
        ("/code/%3Cscript%3E", "text/plain", "no code hash"),
        ("/commit/a/b", "text/html", "no such page"),
    ],
)
def test_bad_shas_and_paths_get_a_clear_404(served: Served, path: str, kind: str, says) -> None:
    reply = get(served.url + path)
    assert reply.status == 404
    assert reply.headers["Content-Type"].startswith(kind)
    assert says in reply.text and "Traceback" not in reply.text
    if kind == "text/html":  # text answers may say it as it is: they are never rendered
        assert "<script>" not in reply.text


def test_every_route_sends_the_security_headers(served: Served) -> None:
    """Each route the application has, with good and bad parameters, errors and
    static files and git's answers included."""
    sha = served.commit_of("Updating alice.rush")
    good = {
        "name": "alice.rush",
        "other": "lymia.lugh",
        "sha": sha[:9],
        "hash": code_hash(RUSH_2),
        "file": "style.css",
        "path": "info/refs?service=git-upload-pack",
        "token": "x" * 20,
        "id": "1",  # a tournament (there is none: a 404)
        "round": "1",
    }
    app = create_app(served.queries, HillSettings(data_dir=served.folder / "var"), WebSettings())
    paths = set()
    for resource in app.router.resources():
        canonical = resource.canonical
        paths.add(re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: good[m.group(1)], canonical))
        paths.add(re.sub(r"\{(\w+)(:[^}]*)?\}", "%3Cbad%3E", canonical))
    paths |= {"/nothing", "/static/nothing.js", "/hill.git/config"}
    statuses = set()
    for path in sorted(paths):
        reply = get(served.url + path)
        statuses.add(reply.status)
        for header, value in SECURITY_HEADERS.items():
            assert reply.headers.get(header) == value, (path, header)
    assert {200, 404} <= statuses


def test_the_commit_page_in_chromium_shows_both_versions_marked(
    served: Served, browser: webdriver.Chrome
) -> None:
    driver = browser
    driver.get(f"{served.url}/history")
    sha = served.commit_of("Updating alice.rush")
    driver.find_element(By.CSS_SELECTOR, f'a[href="/commit/{sha}"]').click()
    WebDriverWait(driver, 10).until(lambda d: "/commit/" in d.current_url)
    text = driver.find_element(By.TAG_NAME, "body").text
    assert RUSH.decode() in text and RUSH_2.decode() in text
    assert "Updating alice.rush" in text and "Standings before and after" in text
    marked = driver.execute_script(
        "return [CSS.highlights.get('diff-old').size, CSS.highlights.get('diff-new').size]"
    )
    assert marked == [2, 2]  # the 9 and the -, the 8 and the +
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    # the program page: its versions, the latest diff open, the code one click away
    driver.get(f"{served.url}/program/{quote('alice.rush')}")
    versions = driver.find_elements(By.CSS_SELECTOR, "article.version")
    assert len(versions) == 2
    assert RUSH.decode() in versions[0].text and RUSH_2.decode() in versions[0].text
    versions[1].find_element(By.LINK_TEXT, "its code").click()
    WebDriverWait(driver, 10).until(lambda d: "/code/" in d.current_url)
    assert driver.find_element(By.TAG_NAME, "body").text == RUSH.decode()
