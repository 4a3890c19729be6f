"""The Lab (/lab) in a real headless Chromium, with the hill's engine compiled
to WebAssembly (hill/web/static/lab/engine.js), on a full hill of 12
reference programs served by the real server; and its two endpoints (a
state's programs and matrix, the ranking of outcomes played in the browser)
over HTTP.  LAB.md's contract for tools: the fragment's plain form,
#joust-result, #hill-rank and #hill-points.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from support.webhill import Reply, Server, build_hill, get, load, reference_programs

from hill import engine
from hill.config import HillSettings
from hill.errors import ParseError
from hill.writers.hill import Hill

SIZE = 12  # the hill is full: a test pushes its last program off
ENGINE = Path(__file__).parents[1] / "hill/web/static/lab/engine.wasm"
DEBUGGER = ENGINE.with_name("debugger.js")  # another part's (mounted when a battle opens)
pytestmark = pytest.mark.skipif(not ENGINE.exists(), reason="make setup builds engine.wasm")
RUSH = "(>)*8(>[-])*21"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("labhill")
    server = Server(build_hill(data, reference_programs()[:SIZE], size=SIZE))
    yield server
    server.stop()


def b64(code: str) -> str:
    """LAB.md's plain form: unpadded base64url of the UTF-8 bytes."""
    return base64.urlsafe_b64encode(code.encode()).decode().rstrip("=")


def names(served: Server) -> list[str]:
    return [e.program.full_name for e in served.hill.queries.standings().entries]


def code_of(served: Server, name: str) -> bytes:
    return dict(reference_programs())[name.split(".", 1)[1]]


def classic(left: bytes | str, right: bytes | str) -> str:
    return str(engine.joust(engine.compile_program(left), engine.compile_program(right)))


def text(driver: webdriver.Chrome, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).get_attribute("textContent") or ""


def open_lab(driver: webdriver.Chrome, served: Server, fragment: str, width: int = 1366) -> None:
    driver.set_window_size(width, 1000)
    driver.get("about:blank")  # a new page, not a new fragment of the last one
    load(driver, f"{served.url}/lab#{fragment}")


def wait_for(driver: webdriver.Chrome, element_id: str, seconds: float = 60) -> str:
    """The text of `element_id` once it has some."""
    WebDriverWait(driver, seconds).until(lambda d: text(d, element_id).strip())
    return text(driver, element_id)


def status(driver: webdriver.Chrome) -> str:
    return text(driver, "lab-status")


def page_errors(driver: webdriver.Chrome) -> list[str]:
    """Errors the page logged, but the debugger's module being absent (it
    is another part's, static/lab/debugger.js) and the favicon."""
    return [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE" and "debugger.js" not in e["message"]
    ]


def test_a_pair_of_hill_programs(browser: webdriver.Chrome, served: Server) -> None:
    left, right = names(served)[3], names(served)[7]
    open_lab(browser, served, f"left={left}&right={right}")
    line = wait_for(browser, "joust-result")
    assert line == classic(code_of(served, left), code_of(served, right))
    # the grid: 42 battles, each saying how it ended
    cells = browser.find_elements(By.CSS_SELECTOR, "#joust-grid button.cell")
    assert len(cells) == engine.BATTLES
    assert all(c.find_element(By.CSS_SELECTOR, ".end").text in "⚑↧∞" for c in cells)
    labels = [c.get_attribute("aria-label") for c in cells]
    assert all(re.search(r"(flag|off the tape|cycle limit)", label) for label in labels)
    assert page_errors(browser) == []


def test_a_custom_program_against_a_hill_program(browser: webdriver.Chrome, served: Server) -> None:
    right = names(served)[0]
    open_lab(browser, served, f"left-code={b64(RUSH)}&right={right}")
    assert wait_for(browser, "joust-result") == classic(RUSH, code_of(served, right))
    # the editor shows the code, coloured
    assert browser.find_element(By.ID, "left-code").get_attribute("value") == RUSH
    assert browser.find_elements(By.CSS_SELECTOR, "#left-layer .k-rep")


def test_opening_a_battle_keeps_it_in_the_link(browser: webdriver.Chrome, served: Server) -> None:
    right = names(served)[1]
    open_lab(browser, served, f"left-code={b64(RUSH)}&right={right}")
    wait_for(browser, "joust-result")
    cell = browser.find_elements(By.CSS_SELECTOR, "#joust-grid button.cell")[21 + 2]
    cell.click()
    WebDriverWait(browser, 10).until(lambda d: "tape=12&polarity=kettle" in d.current_url)
    assert browser.find_element(By.ID, "debug").is_displayed()
    assert "tape 12, kettle" in text(browser, "debug-battle")
    # the link reopens the same battle (at its cycle, when the debugger is there)
    link = browser.find_element(By.ID, "share-link").get_attribute("value")
    browser.get("about:blank")
    load(browser, f"{link}&cycle=40")
    WebDriverWait(browser, 30).until(lambda d: text(d, "debug-battle") == "tape 12, kettle")
    if DEBUGGER.exists():
        WebDriverWait(browser, 30).until(lambda d: "cycle 40 of" in text(d, "debugger"))
    else:
        assert "not available" in wait_for(browser, "debugger-placeholder")


def hill_test(served: Server, code: str, tmp_path: Path) -> tuple[str, Hill]:
    """What `bfjoust hill test` prints for `code` on a copy of the hill, and
    that copy (tested once more in-process, for the figures' every digit)."""
    copy = tmp_path / "copy"
    shutil.copytree(served.hill.settings.data_dir, copy)
    config = tmp_path / "hill.toml"
    config.write_text(f"[hill]\nsize = {SIZE}\n")
    program = tmp_path / "program.bfjoust"
    program.write_text(code)
    command = [sys.executable, "-m", "hill", "hill", "test", "--config", str(config)]
    command += ["--data", str(copy), str(program), "--owner", "lab", "--name", "program"]
    printed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return printed, Hill(HillSettings(data_dir=copy, size=SIZE))


def test_a_custom_program_against_the_whole_hill(
    browser: webdriver.Chrome, served: Server, tmp_path: Path
) -> None:
    open_lab(browser, served, f"left-code={b64(RUSH)}&vs=hill")
    rank = wait_for(browser, "hill-rank")
    points = text(browser, "hill-points")
    printed, copy = hill_test(served, RUSH, tmp_path)
    said = re.match(r"lab\.program: points (\S+), score (\S+), rank (\d+/\d+)", printed)
    assert said, printed
    assert rank == said[3] and points == said[1]
    assert text(browser, "hill-score") == said[2]
    assert text(browser, "hill-summary") == printed.splitlines()[0]
    # to the last digit: the same code on the same hill, in-process
    report = copy.challenge("lab", "program", RUSH.encode(), test_only=True)
    entry = report.standings.find("lab.program")
    assert entry is not None
    shown = browser.find_element(By.ID, "hill-points").get_attribute("data-value")
    score = browser.find_element(By.ID, "hill-score").get_attribute("data-value")
    assert abs(float(shown) - entry.points) < 1e-9
    assert abs(float(score) - entry.scores[report.standings.method]) < 1e-9
    rows = browser.find_elements(By.CSS_SELECTOR, "#hill-table tbody tr")
    assert len(rows) == SIZE


def test_a_malformed_program_shows_its_error_at_its_place(
    browser: webdriver.Chrome, served: Server
) -> None:
    bad = "(>)*8\n(>[-]*21"  # the second '(' is never closed
    open_lab(browser, served, f"left-code={b64(bad)}&right={names(served)[0]}")
    said = wait_for(browser, "left-check")
    with pytest.raises(ParseError) as native:
        engine.compile_program(bad)
    assert said.startswith(str(native.value)), said  # the engine's own words and place
    assert said.startswith("line 2, column 1: unmatched '('")
    marked = browser.find_elements(By.CSS_SELECTOR, "#left-layer .err")
    assert [m.get_attribute("textContent") for m in marked] == ["("]
    assert not browser.find_element(By.ID, "joust").is_displayed()
    # "show it" puts the caret there
    browser.find_element(By.CSS_SELECTOR, "#left-check button").click()
    caret = browser.execute_script("return document.getElementById('left-code').selectionStart")
    assert caret == native.value.offset == bad.index("\n") + 1


def test_deep_nesting_is_an_error_at_its_place(browser: webdriver.Chrome, served: Server) -> None:
    deep = "(" * 20000 + "+" + ")*2" * 20000
    open_lab(browser, served, f"left-code={b64(deep)}&right={names(served)[0]}")
    said = wait_for(browser, "left-check")
    with pytest.raises(ParseError) as native:
        engine.compile_program(deep)
    assert said.startswith(str(native.value)) and "line 1, column 4097" in said


def test_hostile_input_stays_responsive_and_stops(
    browser: webdriver.Chrome, served: Server
) -> None:
    # 800 KB of code that toggles its flag, never letting it rest at zero
    hostile = "+-" * 400_000 + "(>)*9([-]>)*21"
    open_lab(browser, served, "left-code=Kw&vs=hill")
    wait_for(browser, "hill-rank")
    browser.execute_script(
        "const t = document.getElementById('left-code');"
        "t.value = arguments[0]; t.dispatchEvent(new Event('input'));",
        hostile,
    )
    select = browser.find_element(By.ID, "tune-number")
    WebDriverWait(browser, 60).until(lambda d: "*9" in select.get_attribute("textContent"))
    browser.find_element(By.ID, "tune-from").clear()
    browser.find_element(By.ID, "tune-from").send_keys("0")
    browser.find_element(By.ID, "tune-to").clear()
    browser.find_element(By.ID, "tune-to").send_keys("200")
    browser.find_element(By.ID, "tune-run").click()
    bar = browser.find_element(By.ID, "lab-progress")
    WebDriverWait(browser, 60).until(
        lambda d: bar.is_displayed() and float(bar.get_attribute("value") or 0) > 0
    )
    # the page answers while the worker plays: the other side changes, its
    # editor shows, and the tuning goes on
    browser.find_element(By.ID, "right-kind").send_keys("my code")
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "right-code").is_displayed())
    before = float(bar.get_attribute("value"))
    WebDriverWait(browser, 60).until(lambda d: float(bar.get_attribute("value")) > before)
    done, total = float(bar.get_attribute("value")), float(bar.get_attribute("max"))
    assert done < total and "Tuning" in status(browser)
    browser.find_element(By.ID, "lab-stop").click()
    WebDriverWait(browser, 10).until(lambda d: status(d) == "Stopped.")
    assert not browser.find_element(By.ID, "lab-stop").is_displayed()
    # the big program is shown plain (no colouring) and the engine still works
    assert browser.find_elements(By.CSS_SELECTOR, "#left-code.plain")
    browser.find_element(By.ID, "hill-run").click()
    WebDriverWait(browser, 120).until(lambda d: "rank" in status(d))


def test_a_100000_cycle_tie(browser: webdriver.Chrome, served: Server) -> None:
    open_lab(browser, served, f"left-code={b64('[]')}&right-code={b64('[]')}")
    line = wait_for(browser, "joust-result")
    assert line == classic("[]", "[]") == f"{'X' * 21} {'X' * 21} 0"
    ends = browser.find_elements(By.CSS_SELECTOR, "#joust-grid button.cell .end")
    assert {e.text for e in ends} == {"∞"}


def test_phone_width(browser: webdriver.Chrome, served: Server) -> None:
    open_lab(browser, served, f"left-code={b64(RUSH)}&right={names(served)[0]}", width=390)
    wait_for(browser, "joust-result")
    width = browser.execute_script("return document.documentElement.scrollWidth")
    inner = browser.execute_script("return window.innerWidth")
    assert width <= inner
    for element_id in ("left-code", "right-code", "hill-run", "tune-run", "share-link"):
        box = browser.find_element(By.ID, element_id).rect
        assert box["x"] >= 0 and box["x"] + box["width"] <= inner, element_id


def tab_to(driver: webdriver.Chrome, element_id: str, limit: int = 80) -> None:
    """Press Tab until `element_id` has the focus."""
    for _ in range(limit):
        if driver.execute_script("return document.activeElement.id") == element_id:
            return
        ActionChains(driver).send_keys(Keys.TAB).perform()
    raise AssertionError(f"Tab never reached #{element_id}")


def test_keyboard_only(browser: webdriver.Chrome, served: Server) -> None:
    open_lab(browser, served, f"left-code={b64('>')}&right={names(served)[0]}")
    WebDriverWait(browser, 30).until(lambda d: status(d) == "Ready.")
    tab_to(browser, "left-code")
    ActionChains(browser).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).perform()
    ActionChains(browser).send_keys(RUSH).perform()
    tab_to(browser, "hill-run")
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert re.fullmatch(r"\d+/12", wait_for(browser, "hill-rank"))
    expected = classic(RUSH, code_of(served, names(served)[0]))
    WebDriverWait(browser, 30).until(lambda d: text(d, "joust-result") == expected)
    # a battle opens from the keyboard too
    tab_to(browser, "share-link")
    ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    first = browser.find_elements(By.CSS_SELECTOR, "#joust-grid button.cell")[0]
    first.send_keys(Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: "tape=10&polarity=sieve" in d.current_url)


# ---- the endpoints


def state_url(served: Server, event: int | None = None) -> str:
    query = f"?event={event}" if event is not None else ""
    return f"{served.url}/api/lab/state{query}"


def post(url: str, body: bytes) -> Reply:
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return Reply(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as error:
        return Reply(error.code, dict(error.headers), error.read())


def test_a_state_is_sent_once_gzipped_with_an_etag(served: Server) -> None:
    event = served.hill.queries.latest_state()[0]
    reply = get(state_url(served, event), {"Accept-Encoding": "gzip"})
    assert reply.status == 200 and reply.headers["Content-Encoding"] == "gzip"
    assert "immutable" in reply.headers["Cache-Control"]
    data = reply.json()
    assert [p["name"] for p in data["programs"]] == names(served)
    assert data["programs"][0]["code"].encode() == code_of(served, names(served)[0])
    matrix = served.hill.queries.standings().outcomes
    sent = base64.b64decode(data["outcomes"])
    assert sent == matrix.astype("int8").tobytes()
    again = get(state_url(served, event), {"If-None-Match": reply.headers["ETag"]})
    assert again.status == 304
    current = get(state_url(served))
    assert current.headers["Cache-Control"] == "no-cache"
    assert current.headers["ETag"] == reply.headers["ETag"]


def rank_body(rows: list[str], **extra: object) -> bytes:
    return json.dumps({"runs": [rows], **extra}).encode()


def native_rows(served: Server, code: bytes | str) -> list[str]:
    """The rank endpoint's rows for `code` against the hill, played natively."""
    tested = engine.compile_program(code)
    symbols = {1: "+", 0: "0", -1: "-"}
    return [
        "".join(symbols[o] for o in engine.joust(tested, engine.compile_program(c)).outcomes)
        for c in (code_of(served, n) for n in names(served))
    ]


def test_ranking_is_the_tests(served: Server, tmp_path: Path) -> None:
    """The endpoint ranks outcomes as `-test` does (played here natively)."""
    rows = native_rows(served, RUSH)
    reply = post(f"{served.url}/api/lab/rank", rank_body(rows, name="lab.program"))
    assert reply.status == 200, reply.text
    answer = reply.json()["results"][0]
    printed, _ = hill_test(served, RUSH, tmp_path)
    assert answer["summary"] == printed.splitlines()[0]


def test_a_newcomer_tying_a_program_is_ranked_as_the_test_ranks_it(
    served: Server, tmp_path: Path
) -> None:
    """A copy of a hill program ties it on score: the tie is broken by the
    time of submission, and the newcomer's was an aware datetime beside the
    stored naive ones (a 500, "can't compare offset-naive and offset-aware")."""
    hill = names(served)
    copy = code_of(served, hill[len(hill) // 2])
    rows = native_rows(served, copy)
    reply = post(f"{served.url}/api/lab/rank", rank_body(rows, name="lab.program"))
    assert reply.status == 200, reply.text
    printed, _ = hill_test(served, copy.decode(), tmp_path)
    assert reply.json()["results"][0]["summary"] == printed.splitlines()[0]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"not json", "JSON"),
        (b"[]", "body must be"),
        (json.dumps({"runs": []}).encode(), "1 to"),
        (json.dumps({"runs": [["+" * 42]]}).encode(), "12 rows"),
        (json.dumps({"runs": [["+" * 41] * 12]}).encode(), "42 characters"),
        (json.dumps({"runs": [["+" * 41 + "x"] * 12]}).encode(), "42 characters"),
        (json.dumps({"runs": [[1] * 12]}).encode(), "42 characters"),
        (json.dumps({"runs": [["+" * 42] * 12], "name": "no dot"}).encode(), "full name"),
        (json.dumps({"runs": [["+" * 42] * 12], "more": 1}).encode(), "body must be"),
        (json.dumps({"runs": [["+" * 42] * 12] * 202}).encode(), "1 to 201"),
    ],
)
def test_ranking_refuses_malformed_input(served: Server, body: bytes, why: str) -> None:
    reply = post(f"{served.url}/api/lab/rank", body)
    assert reply.status == 400
    assert why in reply.json()["error"]


def test_a_long_program_goes_compressed_in_the_link(
    browser: webdriver.Chrome, served: Server
) -> None:
    long = "\n".join(f"{RUSH} line {i}: a comment to make it long" for i in range(200))
    open_lab(browser, served, f"left-code={b64(long)}")
    WebDriverWait(browser, 30).until(lambda d: "left-z=" in d.current_url)
    link = browser.current_url
    assert len(link) < len(long) // 4
    browser.get("about:blank")
    load(browser, link)
    code = browser.find_element(By.ID, "left-code")
    WebDriverWait(browser, 30).until(lambda d: code.get_attribute("value") == long)
    # too long for an IRC line: the bot's upload link instead
    assert text(browser, "submit-line") == "!bfjoust-upload myprogram"


def test_a_short_program_is_an_irc_line(browser: webdriver.Chrome, served: Server) -> None:
    open_lab(browser, served, f"left-code={b64(RUSH + chr(10) + '(-)*3')}")
    name = browser.find_element(By.ID, "submit-name")
    name.clear()
    name.send_keys("rush")
    WebDriverWait(browser, 30).until(lambda d: "rush" in text(d, "submit-line"))
    assert text(browser, "submit-line") == f"!bfjoust rush {RUSH} (-)*3"


def test_a_program_of_a_past_state_and_its_versions(
    browser: webdriver.Chrome, served: Server
) -> None:
    """The left side: the program that ranked first in state 3 (of three
    programs), by name and state; the versions list has its version."""
    history = served.hill.queries.changes()
    third = history[2]
    first = third.entries[0]["name"]
    open_lab(browser, served, f"left={first}&left-event={third.id}&right={names(served)[0]}")
    code = browser.find_element(By.ID, "left-code")
    want = code_of(served, first).decode()
    WebDriverWait(browser, 30).until(lambda d: code.get_attribute("value") == want)
    assert code.get_attribute("readOnly") == "true"
    assert browser.find_element(By.ID, "left-event").get_attribute("value") == str(third.id)
    version = browser.find_element(By.ID, "left-version")
    version.click()  # its versions load when it is opened
    WebDriverWait(browser, 30).until(lambda d: "version 1" in version.get_attribute("textContent"))


def test_against_an_earlier_hill_state(browser: webdriver.Chrome, served: Server) -> None:
    """The hill as it stood with 3 programs (not full: the program joins)."""
    third = served.hill.queries.changes()[2]
    open_lab(browser, served, f"left-code={b64(RUSH)}&vs=hill")
    wait_for(browser, "hill-rank")
    browser.find_element(By.ID, "hill-event").send_keys(str(third.id), Keys.ENTER)
    WebDriverWait(browser, 30).until(lambda d: f"event={third.id}#" in d.current_url)
    assert "vs=hill" in browser.current_url
    WebDriverWait(browser, 60).until(lambda d: text(d, "hill-rank").endswith("/4"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#hill-table tbody tr")) == 3
    # the link holds the state: opened without ?event=, it opens that state
    fragment = browser.current_url.split("#", 1)[1]
    assert f"event={third.id}" in fragment.split("&")
    browser.get("about:blank")
    load(browser, f"{served.url}/lab#{fragment}")
    WebDriverWait(browser, 30).until(lambda d: f"?event={third.id}#" in d.current_url)
    WebDriverWait(browser, 60).until(lambda d: text(d, "hill-rank").endswith("/4"))


def test_a_matrix_cell_opens_the_lab(browser: webdriver.Chrome, served: Server) -> None:
    browser.get("about:blank")
    load(browser, f"{served.url}/matrix")
    browser.find_element(By.ID, "cells-open-lab").click()
    cell = browser.find_elements(By.CSS_SELECTOR, "#matrix tbody td a")[2]
    ActionChains(browser).move_to_element(cell).click().perform()
    WebDriverWait(browser, 30).until(lambda d: "/lab" in d.current_url)
    a, b = browser.current_url.split("#")[1].split("&")[:2]
    assert a.startswith("left=") and b.startswith("right=")
    assert wait_for(browser, "joust-result")


def test_the_lab_is_linked_from_the_pages(served: Server) -> None:
    a, b = names(served)[0], names(served)[1]
    quoted = urllib.parse.quote
    pair = get(f"{served.url}/program/{quoted(a, safe='')}/vs/{quoted(b, safe='')}").text
    assert "/lab?event=" in pair and "tape=10&amp;polarity=sieve" in pair
    assert "/lab?event=" in get(f"{served.url}/matrix").text
    assert "/lab?event=" in get(f"{served.url}/program/{quoted(a, safe='')}").text
    assert "/lab" in get(f"{served.url}/battle").text


def test_a_test_page_opens_the_lab_against_the_hill(
    browser: webdriver.Chrome, served: Server
) -> None:
    """Last: a trial is an event of the module's hill (it changes nothing else)."""
    report = served.hill.challenge("erin", "probe", RUSH.encode(), test_only=True)
    browser.get("about:blank")
    load(browser, f"{served.url}/test/{report.page}")
    browser.find_element(By.ID, "test-lab").click()
    assert "vs=hill" in browser.current_url and "left-hash=" in browser.current_url
    entry = report.standings.find("erin.probe")
    assert entry is not None
    assert wait_for(browser, "hill-rank") == f"{entry.rank}/{report.standings.size}"
    assert text(browser, "hill-points") == f"{entry.points:.2f}"
