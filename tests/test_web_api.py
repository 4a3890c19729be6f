"""The web report over plain HTTP: the JSON API, sources, errors, headers, and
consistency while the hill changes."""

from __future__ import annotations

import base64
import html
import re
import threading
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
from support.webhill import (
    Server,
    WebProcess,
    battle_query,
    build_hill,
    fetch_battle,
    get,
    longest_battle,
    reference_programs,
    same_battle,
    shared_server,
)

from hill import engine
from hill.rules.reports import json_report

RUSH = b"(>)*9([-]>)*21"
IDLE = b"[]"
# a rush that wins before it reaches its comment
HOSTILE = b'(>)*9([-]>)*21 <script>alert("x")</script></pre><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def served() -> Server:
    return shared_server()


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def test_standings_are_the_json_report_with_ages(served: Server) -> None:
    hill = served.hill
    reply = get(f"{served.url}/api/standings")
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("application/json")
    data = reply.json()
    ages = {p["full_name"]: p["age"] for p in data["programs"]}
    changes = {p["full_name"]: p["change"] for p in data["programs"]}
    expected = json_report(hill.queries.standings(), hill.repository.head())
    programs = [{k: p[k] for k in expected["programs"][0]} for p in data.pop("programs")]
    assert programs == expected.pop("programs")
    assert {k: data[k] for k in expected} == expected
    assert data["size"] == 47 and data["ranking_method"] == "markov"
    assert data["event"]["id"] == hill.queries.latest_state()[0]
    # the i-th program submitted has survived the 46 - i challenges after it
    order = [f"esohill.{name}" for name, _ in reference_programs()]
    assert [ages[name] for name in order] == list(range(46, -1, -1))
    assert changes[order[-1]] is None  # the newcomer
    assert sum(c is not None and c != 0 for c in changes.values()) > 0


def test_matrix_margins(served: Server) -> None:
    data = get(f"{served.url}/api/matrix").json()
    standings = served.hill.queries.standings()
    assert data["programs"] == [e.program.full_name for e in standings.entries]
    margins = np.array(data["margins"])
    assert margins.shape == (47, 47)
    assert (margins == -margins.T).all() and (np.diag(margins) == 0).all()
    assert margins[0, 5] == int(standings.outcomes[0, 5].sum())
    # points are the row sums over 42: the standings agree with the matrix
    points = {
        p["full_name"]: p["points"] for p in get(f"{served.url}/api/standings").json()["programs"]
    }
    for name, row in zip(data["programs"], margins, strict=True):
        assert points[name] == pytest.approx(row.sum() / 42)


def test_breakdown_of_a_program(served: Server) -> None:
    standings = served.hill.queries.standings()
    name = standings.entries[3].program.full_name
    data = get(f"{served.url}/api/breakdown/{quote(name)}").json()
    assert data["program"] == name and data["rank"] == 4
    assert len(data["opponents"]) == 46
    assert name not in [o["program"] for o in data["opponents"]]
    first = data["opponents"][0]
    assert first["program"] == standings.entries[0].program.full_name
    assert first["outcomes"] == standings.outcomes[3, 0].tolist()
    assert first["line"] == engine.classic_line(first["outcomes"])
    # losses by battle, counted here from the stored outcomes
    rows = np.array([o["outcomes"] for o in data["opponents"]])
    losses = (rows == -1).sum(axis=0)
    assert data["losses"]["sieve"] == losses[:21].tolist()
    assert data["losses"]["kettle"] == losses[21:].tolist()
    worst = data["worst"][0]
    i = (0 if worst["polarity"] == "sieve" else 21) + worst["tape"] - 10
    assert worst["losses"] == losses.max() == losses[i]


def test_pair_breakdown(served: Server) -> None:
    standings = served.hill.queries.standings()
    a, b = standings.entries[0].program.full_name, standings.entries[1].program.full_name
    data = get(f"{served.url}/api/breakdown/{quote(a)}/{quote(b)}").json()
    assert (data["left"], data["right"]) == (a, b)
    assert [x["outcome"] for x in data["battles"]] == standings.outcomes[0, 1].tolist()
    assert data["battles"][0] == {
        "tape": 10,
        "polarity": "sieve",
        "outcome": data["battles"][0]["outcome"],
    }
    assert data["battles"][41]["tape"] == 30 and data["battles"][41]["polarity"] == "kettle"
    assert data["margin"] == int(standings.outcomes[0, 1].sum())


def test_trace_pieces_rebuild_the_engines_battle(served: Server) -> None:
    standings = served.hill.queries.standings()
    left, right = standings.entries[2].program, standings.entries[7].program
    codes = dict(reference_programs())
    expected = engine.trace(
        engine.compile_program(codes[left.name]),
        engine.compile_program(codes[right.name]),
        17,
        "kettle",
    )
    query = f"left={quote(left.full_name)}&right={quote(right.full_name)}&tape=17&polarity=kettle"
    battle = fetch_battle(f"{served.url}/api/trace?{query}")
    assert same_battle(battle, expected)
    data = battle.about
    assert data["outcome"] == expected.outcome and data["summary"] == expected.summary()
    # what the viewer shows is what the hill scored
    assert data["outcome"] == standings.outcomes[2, 7][engine.battle_index(17, "kettle")]
    # the overview samples every state of a short battle
    overview = data["overview"]
    assert overview["cycles"] == list(range(min(expected.cycles + 1, 960)))


def test_a_long_battle_comes_in_pieces_gzipped(served: Server) -> None:
    left, right, tape, polarity, expected = longest_battle(served.hill.queries.standings())
    url = f"{served.url}/api/trace?{battle_query(left, right, tape, polarity)}"
    battle = fetch_battle(url)
    assert same_battle(battle, expected)
    assert len(battle.pieces) == 11  # 100001 states, 10000 a piece
    assert all("overview" not in p for p in battle.pieces[1:])
    # the overview: 960 states, evenly spread, as the engine had them
    overview = battle.about["overview"]
    sampled = np.array(overview["cycles"])
    assert len(sampled) == 960 and sampled[0] == 0 and sampled[-1] == expected.cycles
    assert sampled[480] == round(480 * expected.cycles / 959)
    tapes = np.frombuffer(base64.b64decode(overview["tapes"]), "u1").reshape(960, tape)
    assert np.array_equal(tapes, expected.tapes[sampled])
    # sent gzipped to those who take it, the same data
    zipped = get(url, {"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert zipped.json() == battle.pieces[0]
    print(f"{expected.cycles} cycles: the first piece is {len(zipped.raw) / 1000:.1f} KB gzipped")
    # a cycle past the end is no piece; the piece holding cycle 54321 starts at 50000
    assert get(f"{url}&from=100001").status == 404
    assert get(f"{url}&from=54321").json()["from"] == 50000


def test_history_and_series(served: Server) -> None:
    data = get(f"{served.url}/api/history").json()
    changes = data["changes"]
    assert len(changes) == 47
    assert [c["id"] for c in changes] == sorted((c["id"] for c in changes), reverse=True)
    commits = [c.hexsha for c in served.hill.repository.log()]  # newest first
    assert [c["commit"] for c in changes] == commits
    first = changes[-1]
    assert first["kind"] == "join" and first["size"] == 1
    name = first["program"]
    series = get(f"{served.url}/api/history/{quote(name)}").json()
    assert len(series["points"]) == 47
    assert series["points"][-1]["rank"] == served.hill.queries.standings().find(name).rank
    assert get(f"{served.url}/api/history/nobody.nothing").status == 404


def test_history_says_who_replaced_whom(tmp_path: Path) -> None:
    hill = build_hill(tmp_path / "var", [("rush", RUSH), ("idle", IDLE)], size=2)
    hill.challenge("bob", "rush", RUSH + b".")  # the hill is full: the last one leaves
    hill.challenge("esohill", "rush", RUSH + b"..")  # a new version
    hill.withdraw("bob", "rush")
    server = Server(hill)
    try:
        changes = get(f"{server.url}/api/history").json()["changes"]
        assert [(c["kind"], c["program"], c["displaced"]) for c in changes] == [
            ("withdraw", None, "bob.rush"),
            ("update", "esohill.rush", "esohill.rush"),
            ("challenge", "bob.rush", "esohill.idle"),
            ("join", "esohill.idle", None),
            ("join", "esohill.rush", None),
        ]
        assert [c["commit"] for c in changes] == [c.hexsha for c in hill.repository.log()]
        # (names may break after their dots on a phone: <wbr>)
        page = get(f"{server.url}/history").text.replace("<wbr>", "")
        assert '>bob.rush</a> replaces <a class="displaced" href="/history/esohill.idle">' in page
        # the program keeps its chart across versions
        series = get(f"{server.url}/api/history/esohill.rush").json()["points"]
        assert [p["event"] for p in series] == [c["id"] for c in reversed(changes)]
    finally:
        server.stop()
        hill.close()


def test_past_states(served: Server) -> None:
    changes = get(f"{served.url}/api/history").json()["changes"]
    third = changes[-3]
    past = get(f"{served.url}/api/standings?event={third['id']}").json()
    assert past["size"] == 3 and past["event"]["id"] == third["id"]
    assert past["commit"] == third["commit"]
    expected = served.hill.queries.standings_at(third["id"])
    assert [p["full_name"] for p in past["programs"]] == [
        e.program.full_name for e in expected.entries
    ]
    page = get(f"{served.url}/?event={third['id']}")
    assert page.status == 200 and "A past state." in page.text
    # the way back to the current hill keeps the page, not the state
    first, second = (quote(p["full_name"]) for p in past["programs"][:2])
    pair = f"/program/{first}/vs/{second}"
    page = get(f"{served.url}{pair}?event={third['id']}").text
    assert f'<a href="{pair}">See the current hill</a>' in page
    latest = changes[0]["id"]
    assert "A past state." not in get(f"{served.url}/matrix?event={latest}").text


def test_sources_are_plain_text(served: Server) -> None:
    name, code = reference_programs()[5]
    reply = get(f"{served.url}/source/esohill.{name}")
    assert reply.status == 200 and reply.body == code
    assert reply.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    data = get(f"{served.url}/api/source/esohill.{name}").json()
    assert data["code"] == code.decode("utf-8", "replace") and data["bytes"] == len(code)


@pytest.mark.parametrize(
    "path",
    [
        "/nothing-here",
        "/program/nobody.nothing",
        "/program/esohill.ais523_stealth/vs/nobody.x",
        "/program/..%2F..%2Fetc%2Fpasswd",
        "/?event=abc",
        "/?event=%C2%B2",
        "/?event=99999",
        "/matrix?event=-1",
        "/battle?tape=99",
        "/battle?tape=0",
        "/battle?polarity=%3Cb%3E",
        "/battle?left=nobody.x",
        "/history/nobody.x",
        "/static/nothing.css",
    ],
)
def test_bad_urls_get_a_404_page(served: Server, path: str) -> None:
    reply = get(served.url + path)
    assert reply.status == 404
    assert "text/html" in reply.headers["Content-Type"]
    assert "Not found" in reply.text and "Traceback" not in reply.text


def test_a_text_endpoint_answers_errors_in_text(tmp_path: Path) -> None:
    hill = build_hill(tmp_path / "var", [("rush", RUSH), ("idle", IDLE)])
    before = hill.queries.latest_state()[0]
    hill.withdraw("esohill", "rush")
    server = Server(hill)
    try:
        for path in ("/source/esohill.rush", "/source/..%2Fhill.sqlite3", "/source/nobody.x"):
            reply = get(server.url + path)
            assert reply.status == 404, path
            assert reply.headers["Content-Type"] == "text/plain; charset=utf-8"
            assert reply.text.startswith("404: no program") and "<" not in reply.text
        # in the state before it was withdrawn, the code is there
        assert get(f"{server.url}/source/esohill.rush?event={before}").body == RUSH
    finally:
        server.stop()
        hill.close()


def test_a_trial_number_opens_the_hill_as_it_stood(tmp_path: Path) -> None:
    """`!bfjoust-test` trials take event ids but change nothing: /history does
    not list them and says why the numbers skip; their number still opens
    the state in force, on every page and in the API."""
    hill = build_hill(tmp_path / "var", [("rush", RUSH)])
    hill.challenge("carol", "trial", IDLE, test_only=True)
    hill.challenge("esohill", "idle", IDLE)
    server = Server(hill)
    try:
        changes = get(f"{server.url}/api/history").json()["changes"]
        first, second = changes[1]["id"], changes[0]["id"]
        trial = first + 1
        assert second == trial + 1  # the trial took the number between
        assert "numbers may skip" in get(f"{server.url}/history").text
        data = get(f"{server.url}/api/standings?event={trial}").json()
        assert data["event"]["id"] == first and data["size"] == 1
        page = get(f"{server.url}/?event={trial}")
        assert page.status == 200
        assert f"#{trial} was a trial" in page.text and f"State #{first}," in page.text
        assert get(f"{server.url}/matrix?event={trial}").status == 200
        assert get(f"{server.url}/?event={second + 1}").status == 404
    finally:
        server.stop()
        hill.close()


@pytest.mark.parametrize(
    "path",
    ["/api/breakdown/nobody.x", "/api/standings?event=0", "/api/trace?tape=5", "/api/nothing"],
)
def test_bad_api_urls_get_a_json_404(served: Server, path: str) -> None:
    reply = get(served.url + path)
    assert reply.status == 404
    assert reply.json()["status"] == 404


def test_security_headers_everywhere(served: Server) -> None:
    for path in ("/", "/api/matrix", "/static/style.css", "/nothing"):
        headers = get(served.url + path).headers
        csp = headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert headers["X-Content-Type-Options"] == "nosniff"


def test_hostile_names_and_code_are_escaped(tmp_path: Path) -> None:
    owner = "x[y]{z}|^`"  # every odd character an owner may have
    hill = build_hill(tmp_path / "var", [("hostile", HOSTILE), ("idle", IDLE)], owner=owner)
    server = Server(hill)
    try:
        full = f"{owner}.hostile"
        page = get(f"{server.url}/program/{quote(full)}")
        assert page.status == 200
        assert f'<h1><span class="rank-badge">#1</span> {owner}.hostile</h1>' in page.text
        source = get(f"{server.url}/source/{quote(full)}")
        assert source.body == HOSTILE and source.headers["Content-Type"].startswith("text/plain")
        for path in (
            "/",
            "/matrix",
            "/history",
            f"/program/{quote(full)}/vs/{quote(owner + '.idle')}",
        ):
            text = get(server.url + path).text
            assert "<script>alert" not in text and "onerror" not in text
        # every link of the pages leads somewhere, odd characters and all
        for path in ("/", "/matrix", "/history", f"/program/{quote(full)}"):
            for link in re.findall(r'href="(/[^"]*)"', get(server.url + path).text):
                assert get(server.url + html.unescape(link)).status == 200, link
        echo = get(f"{server.url}/program/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
        assert echo.status == 404 and "<script>alert" not in echo.text
        assert "&lt;script&gt;" in echo.text
    finally:
        server.stop()
        hill.close()


def test_pages_follow_the_hill_and_never_mix_states(tmp_path: Path) -> None:
    """A writer changes the hill while readers load pages: every page shows
    exactly one stored state, and the newest once the writer is done."""
    programs = reference_programs()
    hill = build_hill(tmp_path / "var", programs[:4])
    server = Server(hill)
    try:
        before = get(f"{server.url}/api/standings").json()
        assert before["size"] == 4
        seen: list[dict] = []
        writer = threading.Thread(
            target=lambda: [hill.challenge("esohill", n, c) for n, c in programs[4:9]]
        )
        writer.start()
        while writer.is_alive():
            seen.append(get(f"{server.url}/api/standings").json())
        writer.join()
        seen.append(get(f"{server.url}/api/standings").json())
        for data in seen:
            stored = hill.queries.standings_at(data["event"]["id"])
            assert [p["full_name"] for p in data["programs"]] == [
                e.program.full_name for e in stored.entries
            ]
            assert data["size"] == data["event"]["size"] == stored.size
        assert seen[-1]["size"] == 9 and seen[-1]["event"]["id"] == hill.queries.latest_state()[0]
        assert len({d["event"]["id"] for d in seen}) >= 2
        # the old state is still there, unchanged
        again = get(f"{server.url}/api/standings?event={before['event']['id']}").json()
        assert again == before
    finally:
        server.stop()
        hill.close()


def test_an_empty_hill_has_pages(tmp_path: Path) -> None:
    hill = build_hill(tmp_path / "var", [])
    server = Server(hill)
    try:
        for path in ("/", "/matrix", "/history"):
            reply = get(server.url + path)
            assert reply.status == 200, path
        assert get(f"{server.url}/api/standings").json()["size"] == 0
        assert get(f"{server.url}/battle").status == 404
    finally:
        server.stop()
        hill.close()


def test_bfjoust_web_serves_another_process_hill_until_sigterm(tmp_path: Path) -> None:
    programs = reference_programs()
    hill = build_hill(tmp_path / "var", programs[:2])
    web = WebProcess(tmp_path)
    try:
        assert get(f"{web.url}/api/standings").json()["size"] == 2
        hill.challenge("esohill", *programs[2])  # this process is the bot
        assert get(f"{web.url}/api/standings").json()["size"] == 3
    finally:
        assert web.stop() == 0, web.log()
        hill.close()
