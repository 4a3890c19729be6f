"""The pages read at a glance (issue 32.4), in a real headless Chromium at a
phone's width (390 px) and a desktop's (1280 px), on a hill where programs
are easy to confuse: two owners' `slag` and `monolith`, three
`old_david.werecat_*` sharing a long prefix, and names of 40 characters.

What a person would notice: whole names, never clipped; a meaning and a
scale beside every statistic; a legend for every colour; tables that fit or
scroll in a box that says so; labels that do not overlap; the flags' -128
explained.
"""

from __future__ import annotations

import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait
from support.webhill import Server, console_errors, css, get, load, reference_programs

from hill.config import HillSettings
from hill.web.charts.bump import bump_chart
from hill.writers.hill import Hill

WIDTHS = {"phone": 390, "desktop": 1280}

# (owner, name, the reference program it plays)
PROGRAMS = [
    ("alice", "slag", "quintopia_poke"),
    ("bob", "slag", "Lymia_aurora"),
    ("alice", "monolith", "Deewiant_allegro"),
    ("bob", "monolith", "ais523_defend7"),
    ("old_david", "werecat_behemoth", "david_werecat_behemoth"),
    ("old_david", "werecat_dreadnought", "david_werecat_dreadnought"),
    ("old_david", "werecat_juggernaut", "david_werecat_juggernaut"),
    ("quintopia", "space_hotel", "quintopia_space_hotel"),
    (
        "Gregor",
        "furry_furry_leather_discipline_girls",
        "Gregor_furry_furry_leather_discipline_girls",
    ),
    ("myndzi", "slowrush", "myndzi_slowrush"),
]
FULL_NAMES = {f"{owner}.{name}" for owner, name, _ in PROGRAMS}


@pytest.fixture(scope="module")
def site() -> Iterator[Server]:
    codes = dict(reference_programs())
    folder = Path(tempfile.mkdtemp(prefix="glance-"))
    hill = Hill(HillSettings(data_dir=folder, size=len(PROGRAMS)), jobs=2)
    for owner, name, plays in PROGRAMS:
        hill.challenge(owner, name, codes[plays])
    server = Server(hill)
    yield server
    server.stop()
    hill.close()


@pytest.fixture(params=list(WIDTHS))
def sized(request: pytest.FixtureRequest, browser: webdriver.Chrome) -> Iterator[int]:
    width = WIDTHS[request.param]
    browser.set_window_size(width, 900)
    WebDriverWait(browser, 10).until(
        lambda d: d.execute_script("return window.innerWidth") == width
    )
    yield width
    browser.set_window_size(1366, 900)


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def shown_text(element: WebElement) -> str:
    """The text as drawn, the line breaks a narrow cell makes taken out."""
    return element.get_attribute("innerText").replace("\n", "").replace("\u200b", "")


def drawn_text(text: WebElement) -> str:
    """What an SVG text draws (its own text, not its tooltip's <title>)."""
    return text.parent.execute_script(
        "return Array.from(arguments[0].childNodes).filter((n) => n.nodeType === 3)"
        ".map((n) => n.textContent).join('').trim();",
        text,
    )


# JS: whether every element the selector finds holds its whole content
# (nothing cut off by its own box) and is drawn where it can be seen, or in
# a box that scrolls sideways (.scroll) whose hint is showing.
SEEN = """
const seen = (el) => {
  const r = el.getBoundingClientRect();
  if (r.width === 0 || el.scrollWidth > el.clientWidth + 1) return false;
  const box = el.closest('.scroll');
  const edge = box ? box.getBoundingClientRect().right + 0.5 : Infinity;
  if (r.left >= 0 && r.right <= Math.min(window.innerWidth, edge)) return true;
  if (!box || box.scrollWidth <= box.clientWidth) return false;
  const hint = box.closest('.table-box').querySelector('.scroll-hint');
  return hint.getBoundingClientRect().height > 0;
};
return Array.from(document.querySelectorAll(arguments[0]), seen);
"""


def all_seen(driver: webdriver.Chrome, selector: str) -> list[bool]:
    return driver.execute_script(SEEN, selector)


# JS: the pairs of SVG texts found by the selector whose boxes overlap by
# more than 3 px each way (a text's box is its font's whole line, taller than
# its letters: rows of names 12 px apart touch by a pixel or two)
OVERLAPS = """
const boxes = Array.from(document.querySelectorAll(arguments[0]), (t) => t.getBoundingClientRect());
const hits = [];
for (let i = 0; i < boxes.length; i++)
  for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    const s = 3;
    if (a.left < b.right - s && b.left < a.right - s
        && a.top < b.bottom - s && b.top < a.bottom - s)
      hits.push([i, j]);
  }
return hits;
"""


def overlaps(driver: webdriver.Chrome, selector: str) -> list[list[int]]:
    return driver.execute_script(OVERLAPS, selector)


def page_fits(driver: webdriver.Chrome) -> bool:
    """The page itself never scrolls sideways (wide things scroll in their box)."""
    return driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


def boxes_fit_or_say_they_scroll(driver: webdriver.Chrome) -> list[str]:
    """The tables and charts in scrolling boxes that overflow without a hint."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('.table-box'))"
        ".filter((box) => { const s = box.querySelector('.scroll');"
        " const hint = box.querySelector('.scroll-hint').getBoundingClientRect().height > 0;"
        " return s.getBoundingClientRect().right > window.innerWidth + 0.5"
        " || (s.scrollWidth > s.clientWidth + 1) !== hint; })"
        ".map((box) => box.querySelector('table, svg').id || box.outerHTML.slice(0, 80));"
    )


def test_the_standings_name_each_program_whole(
    browser: webdriver.Chrome, site: Server, sized: int
) -> None:
    load(browser, site.url + "/")
    assert console_errors(browser) == []
    cells = css(browser, "#standings tbody td.program a:first-child")
    names = [shown_text(a) for a in cells]
    assert sorted(names) == sorted(FULL_NAMES)  # owner.name: two slags are told apart
    assert all(all_seen(browser, "#standings tbody td.program")), sized
    # in view without scrolling, even on a phone (the owner column is not)
    assert browser.execute_script(
        "return Array.from(document.querySelectorAll('#standings td.program a:first-child'),"
        " (a) => a.getBoundingClientRect().right <= window.innerWidth)"
    ) == [True] * len(PROGRAMS)
    assert page_fits(browser) and boxes_fit_or_say_they_scroll(browser) == []
    # the statistics' columns come with what each means and which way is good
    key = browser.find_element(By.ID, "stat-key")
    assert not key.is_displayed()
    browser.find_element(By.CSS_SELECTOR, "label.switch").click()
    assert key.is_displayed()
    terms = [dt.text for dt in key.find_elements(By.TAG_NAME, "dt")]
    heads = [th.text for th in css(browser, "#standings thead tr:last-child th.stat")]
    assert [t.upper() for t in terms] == heads
    for dd in key.find_elements(By.TAG_NAME, "dd"):
        assert any(w in dd.text for w in ("better", "luck", "surer", "further")), dd.text
    assert boxes_fit_or_say_they_scroll(browser) == []


def profile(browser: webdriver.Chrome, site: Server, name: str) -> None:
    """A program's page, once its battle statistics are in."""
    url = f"{site.url}/program/{quote(name)}"
    load(browser, url)
    for _ in range(60):
        if css(browser, "figure.duel-chart"):
            return
        time.sleep(0.5)  # statistics still being computed: look again
        load(browser, url)
    raise AssertionError("the profile never came")


def test_a_programs_statistics_say_what_they_mean_and_what_is_good(
    browser: webdriver.Chrome, site: Server, sized: int
) -> None:
    profile(browser, site, "alice.slag")
    stats = css(browser, "dl.stats > div")
    terms = [s.find_element(By.TAG_NAME, "dt").text for s in stats]
    assert {"TAPL", "TAZD", "QOOA", "PPRG"} <= set(terms)
    for stat in stats[2:]:  # after the rank and the battles: the statistics proper
        means = stat.find_element(By.CSS_SELECTOR, "dd.means").text
        scale = stat.find_element(By.CSS_SELECTOR, "dd.scale").text
        assert means and scale.startswith("Scale:"), stat.text
    # on the hill QOOA is 1: TAPL_q repeats TAPL, and says why
    tapl_q = next(s for s, t in zip(stats, terms, strict=True) if t.startswith("TAPL") and t[4:])
    assert "the same as TAPL here, as QOOA is 1" in tapl_q.text
    # the numbers the spec defines, as the API gives them
    st = next(
        p["stats"]
        for p in get(site.url + "/api/standings").json()["programs"]
        if p["full_name"] == "alice.slag"
    )
    tapl = browser.find_element(By.XPATH, "//dt[.='TAPL']/following-sibling::dd[1]").text
    assert tapl == f"{st['tapl']:.1f}"


def test_the_duel_chart_names_every_opponent_whole(
    browser: webdriver.Chrome, site: Server, sized: int
) -> None:
    profile(browser, site, "alice.slag")
    assert page_fits(browser) and boxes_fit_or_say_they_scroll(browser) == []
    names = [drawn_text(t) for t in css(browser, ".duel-chart text.name")]
    assert sorted(names) == sorted(FULL_NAMES - {"alice.slag"})
    assert overlaps(browser, ".duel-chart text") == []
    # no name drawn over a bar, a cap or a dot
    assert browser.execute_script(
        "const box = (e) => e.getBoundingClientRect();"
        "const names = Array.from(document.querySelectorAll('.duel-chart text.name'), box);"
        "const marks = Array.from(document.querySelectorAll("
        "'.duel-chart line.interval, .duel-chart line.cap, .duel-chart circle.dot'), box);"
        "return names.every((a) => marks.every((b) => a.right <= b.left || b.right <= a.left"
        " || a.bottom <= b.top + 1 || b.bottom <= a.top + 1));"
    )
    # the bars are in view at once, on a phone too (only a very long name may scroll)
    assert browser.execute_script(
        "const box = document.querySelector('.duel-chart .scroll').getBoundingClientRect();"
        "return Array.from(document.querySelectorAll('.duel-chart line.cap'),"
        " (l) => l.getBoundingClientRect().right <= Math.min(box.right, window.innerWidth));"
    ) == [True] * 2 * len(names)
    # the names themselves can be seen at once, even on a phone
    assert browser.execute_script(
        "return Array.from(document.querySelectorAll('.duel-chart text.name'),"
        " (t) => t.getBoundingClientRect().left >= 0"
        " && t.getBoundingClientRect().left < window.innerWidth / 2)"
    ) == [True] * len(names)


def test_the_strategy_map_has_whole_names_and_legends(
    browser: webdriver.Chrome, site: Server, sized: int
) -> None:
    load(browser, site.url + "/strategy")
    for _ in range(60):
        if css(browser, "figure.results text.name"):
            break
        time.sleep(0.5)  # statistics still being computed: look again
        load(browser, site.url + "/strategy")
    assert console_errors(browser) == []
    assert page_fits(browser) and boxes_fit_or_say_they_scroll(browser) == []
    for figure in ("results", "duels"):
        texts = css(browser, f"figure.{figure} text.name")
        assert sorted(map(drawn_text, texts)) == sorted(FULL_NAMES)
        assert overlaps(browser, f"figure.{figure} text") == []
        # the names end before the matrix starts
        assert browser.execute_script(
            "const f = document.querySelector(arguments[0]).querySelector('.scroll svg');"
            "const right = Math.max(...Array.from(f.querySelectorAll('text.name'),"
            " (t) => t.getBoundingClientRect().right));"
            "const left = Math.min(...Array.from(f.querySelectorAll('rect:not(.family)'),"
            " (r) => r.getBoundingClientRect().left));"
            "return right < left;",
            f"figure.{figure}",
        )
        # and start in view, beside the dendrogram, on a phone too
        starts = [t.rect["x"] for t in texts]
        assert all(0 <= x < sized / 2 for x in starts), starts
    # the duel lengths' colour scale: its tick labels apart, none cut
    ticks = [t.get_attribute("textContent") for t in css(browser, "figure.duels svg.legend text")]
    assert ticks == ["1", "10", "100", "1k", "10k", "100k"]
    assert overlaps(browser, "figure.duels svg.legend text") == []
    assert browser.execute_script(
        "const svg = document.querySelector('figure.duels svg.legend').getBoundingClientRect();"
        "return Array.from(document.querySelectorAll('figure.duels svg.legend text'),"
        " (t) => t.getBoundingClientRect())"
        ".every((r) => r.left >= svg.left && r.right <= svg.right);"
    )
    # the family colours have a legend: each colour drawn is named there, with its programs
    drawn = {r.get_attribute("fill") for r in css(browser, "figure.results rect.family")}
    keys = css(browser, "#families ul.family-key li")
    named = {k.find_element(By.CSS_SELECTOR, "svg.swatch rect").get_attribute("fill") for k in keys}
    assert drawn == named and len(keys) == len(named)
    listed = " ".join(shown_text(k) for k in keys)
    assert all(name in listed for name in FULL_NAMES)
    assert all(k.is_displayed() for k in keys)


def test_the_history_table_fits_or_scrolls_visibly(
    browser: webdriver.Chrome, site: Server, sized: int
) -> None:
    load(browser, site.url + "/history")
    assert page_fits(browser) and boxes_fit_or_say_they_scroll(browser) == []
    # every name whole in its cell; commits whole (in view, or in a box that says it scrolls)
    names = [shown_text(a) for a in css(browser, "#history td.what a")]
    assert set(names) == FULL_NAMES
    assert all(all_seen(browser, "#history td.what")), sized
    assert all(all_seen(browser, "#history td.commit")), sized
    commits = [shown_text(c) for c in css(browser, "#history td.commit code")]
    assert all(len(c) == 8 for c in commits)
    if sized >= 1280:  # a desktop shows the whole table, the commits in view
        assert browser.execute_script(
            "const s = document.querySelector('#history').closest('.scroll');"
            "return s.scrollWidth <= s.clientWidth;"
        )


def test_the_battle_viewer_says_how_cells_and_flags_show(
    browser: webdriver.Chrome, site: Server, sized: int
) -> None:
    load(
        browser,
        f"{site.url}/battle?left={quote('alice.slag')}&right={quote('bob.slag')}"
        "&tape=20&polarity=sieve",
    )
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element(By.ID, "viewer").get_attribute("data-ready")
    )
    flags = [c.text for c in css(browser, "#tape .c.flag .v")]
    assert flags == ["-128", "-128"]  # at cycle 0, as the key says
    key = browser.find_element(By.ID, "cell-key")
    assert key.is_displayed() and all(all_seen(browser, "#cell-key"))
    text = key.text
    assert "starts at 128" in text and "\u2212128" in text and "Values" in text
    assert page_fits(browser)


def test_the_bump_chart_leaves_room_for_whole_names() -> None:
    """A tournament's reality show: names are drawn whole, left of stage 1,
    however long (the room grows; short names keep the usual 190 px)."""
    long = ["old_david.werecat_juggernaut", "Gregor.furry_furry_leather_discipline_girls"]
    stages = [[*long, "a.b"], [long[1], "a.b"], ["a.b"]]
    chart = bump_chart(stages)
    first = chart.stage_ticks[0][0]
    assert first > 190 and chart.name_x < first
    # the longest label ("2. Gregor...", 46 characters) fits left of its text end at 11 px
    assert chart.name_x >= 46 * 6
    assert bump_chart([["a.b", "c.d"], ["a.b"]]).stage_ticks[0][0] == 190
