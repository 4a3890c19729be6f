"""The Lab's debugger (hill/web/static/lab/debugger.js) in a real headless
Chromium, with the real engine (engine.js + engine.wasm in a module worker):
mounted alone on a harness page (tests/data/lab) served over plain HTTP, and
checked against the native engine's trace (hill.engine.trace) cycle by cycle.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from support.labpage import ENGINE, HARNESS, WASM, serve
from support.reference import warrior_path
from support.webhill import console_errors

from hill import engine
from hill.errors import ParseError

pytestmark = pytest.mark.skipif(
    not (ENGINE.exists() and WASM.exists()),
    reason="the Lab's engine (engine.js, engine.wasm) is not built: run make setup",
)

ALLEGRO = "esohill-20131008/Deewiant_allegro.bfjoust"
DEFEND = "esohill-20131008/Gregor_return_of_ehird_defend8mwahahaha.bfjoust"
SELF_DEFENSE = "esohill-20131008/Arc_Koen_self_defense.bfjoust"
LEGIT = "esohill-20131008/JWinslow23_maybethisislegitimate_.bfjoust"

# what the page shows, read from the DOM
SHOWN = """
const root = document.querySelector('.dbg');
const cells = (selector) =>
  Array.from(root.querySelectorAll(selector), (c) => Number(c.dataset.cell));
const pane = (side) => root.querySelector(`.dbg-source.${side}`);
return {
  cycle: Number(root.querySelector('.dbg-now')?.textContent ?? -1),
  cycles: Number(root.querySelector('.dbg-cycles')?.textContent ?? -1),
  outcome: root.querySelector('.dbg-outcome')?.textContent ?? '',
  values: Array.from(root.querySelectorAll('.dbg-cell:not(.off)'), (c) => Number(c.dataset.value)),
  left: cells('.dbg-cell.left-here'),
  right: cells('.dbg-cell.right-here'),
  offsets: Array.from(root.querySelectorAll('.dbg-where'), (w) => Number(w.dataset.offset)),
  current: ['left', 'right'].map((s) => pane(s).querySelector('.current')?.textContent ?? null),
  counters: ['left', 'right'].map((s) => Array.from(pane(s).querySelectorAll('sup.counter'),
    (b) => ({open: Number(b.dataset.open), value: Number(b.textContent)}))),
  countersCycle: Number(root.dataset.countersCycle ?? -1),
  busy: root.getAttribute('aria-busy'),
  progress: root.querySelector('.dbg-progress').hidden ? '' :
    root.querySelector('.dbg-progress').textContent,
  hit: root.querySelector('.dbg-hit').textContent,
};
"""


def source(name: str) -> str:
    return warrior_path(name).read_text()


@pytest.fixture(scope="module")
def page(browser: webdriver.Chrome) -> Iterator[webdriver.Chrome]:
    with serve() as url:
        browser.get(url + HARNESS)
        WebDriverWait(browser, 20).until(lambda d: d.execute_script("return !!window.harnessReady"))
        yield browser


def shown(driver: webdriver.Chrome) -> dict[str, Any]:
    return driver.execute_script(SHOWN)


def settled(driver: webdriver.Chrome, cycle: int | None = None) -> dict[str, Any]:
    """What the page shows once traced, drawn at `cycle` and with its counters."""

    def ready(d: webdriver.Chrome) -> dict[str, Any] | None:
        now = shown(d)
        if now["busy"] != "false" or now["cycle"] < 0:
            return None
        if cycle is not None and now["cycle"] != cycle:
            return None
        return now if now["countersCycle"] == now["cycle"] else None

    return WebDriverWait(driver, 30).until(ready)


def mount(
    driver: webdriver.Chrome, left: str, right: str, tape: int, polarity: str, **options: Any
) -> None:
    driver.set_window_size(1366, 900)
    driver.execute_script(
        "harness.mount(arguments[0])",
        {
            "left": {"name": "L", "source": left},
            "right": {"name": "R", "source": right},
            "tapeLength": tape,
            "polarity": polarity,
            **options,
        },
    )


def native(left: str, right: str, tape: int, polarity: str) -> engine.Trace:
    return engine.trace(engine.compile_program(left), engine.compile_program(right), tape, polarity)


def expect_state(now: dict[str, Any], trace: engine.Trace, cycle: int) -> None:
    """The page at `cycle` shows the native trace's state after `cycle` cycles."""
    assert now["cycle"] == cycle
    assert now["values"] == trace.tapes[cycle].tolist()
    assert now["left"] == [int(trace.left_pointer[cycle])]
    assert now["right"] == [int(trace.right_pointer[cycle])]
    if cycle < trace.cycles:
        assert now["offsets"] == [int(trace.left_source[cycle]), int(trace.right_source[cycle])]


def click(driver: webdriver.Chrome, label: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f'.dbg button[aria-label="{label}"]').click()


def test_steps_forward_and_back_show_the_native_state(page: webdriver.Chrome) -> None:
    left, right = source(ALLEGRO), source(DEFEND)
    trace = native(left, right, 17, "kettle")
    assert trace.cycles == 11805
    mount(page, left, right, 17, "kettle", cycle=2000)
    now = settled(page, 2000)
    expect_state(now, trace, 2000)
    assert now["cycles"] == trace.cycles
    assert now["outcome"].endswith(trace.reason)
    assert "right wins" in now["outcome"]
    click(page, "1000 cycles on")
    expect_state(settled(page, 3000), trace, 3000)
    for label, cycle in (("1 cycle on", 3001), ("10 cycles on", 3011), ("100 cycles on", 3111)):
        click(page, label)
        expect_state(settled(page, cycle), trace, cycle)
    for label, cycle in (("100 cycles back", 3011), ("10 cycles back", 3001)):
        click(page, label)
        expect_state(settled(page, cycle), trace, cycle)
    click(page, "1 cycle back")
    click(page, "1000 cycles back")
    expect_state(settled(page, 2000), trace, 2000)
    click(page, "the last cycle (End)")
    expect_state(settled(page, trace.cycles), trace, trace.cycles)
    assert shown(page)["current"] == [None, None]  # the battle is over: no next instruction
    # seek with the number box and with the slider
    box = page.find_element(By.CSS_SELECTOR, ".dbg-cycle")
    box.clear()
    box.send_keys("7777", Keys.ENTER)
    expect_state(settled(page, 7777), trace, 7777)
    page.execute_script(
        "const s = document.querySelector('.dbg-slider'); s.value = 5000;"
        "s.dispatchEvent(new Event('input'));"
    )
    expect_state(settled(page, 5000), trace, 5000)
    assert console_errors(page) == []


def test_counters_are_the_engines(page: webdriver.Chrome) -> None:
    left, right = source(ALLEGRO), source(DEFEND)
    mount(page, left, right, 17, "kettle", cycle=40)
    seen = 0
    for cycle in (40, 41, 300, 1234, 5000, 5001):
        page.execute_script("harness.setState({cycle: arguments[0]})", cycle)
        now = settled(page, cycle)
        expected = page.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "harness.counters(...arguments[0]).then(done, (e) => done(String(e)));",
            [left, right, 17, "kettle", cycle],
        )
        assert now["counters"] == [
            [{"open": c["open"], "value": c["value"]} for c in side] for side in expected
        ]
        seen += sum(len(side) for side in expected)
        # each counter sits right after its '(' (or '{' / '}') in the source
        for side, text in zip(expected, (left, right), strict=True):
            assert all(text.encode()[c["open"]] in b"({}" for c in side)
    assert seen > 0


def test_utf8_offsets_highlight_the_right_character(page: webdriver.Chrome) -> None:
    # comments with characters of 2, 3 and 4 bytes move the byte offsets
    left = "é ☃ 𝄞 naïve\n" + source(ALLEGRO)
    right = "« ünïcödé » " + source(SELF_DEFENSE)
    trace = native(left, right, 12, "sieve")
    mount(page, left, right, 12, "sieve", cycle=25)
    now = settled(page, 25)
    expect_state(now, trace, 25)
    for text, offset, char in zip((left, right), now["offsets"], now["current"], strict=True):
        assert char == text.encode()[offset : offset + 1].decode()
        assert char in "+-<>.[]"


def first(fires: np.ndarray, after: int, otherwise: int | None = None) -> int:
    """The first cycle after `after` where a breakpoint fires (else `otherwise`)."""
    hits = np.flatnonzero(fires)
    hits = hits[hits > after]
    assert len(hits) or otherwise is not None
    return int(hits[0]) if len(hits) else int(otherwise or 0)


def last(fires: np.ndarray, before: int, otherwise: int | None = None) -> int:
    hits = np.flatnonzero(fires)
    hits = hits[hits < before]
    assert len(hits) or otherwise is not None
    return int(hits[-1]) if len(hits) else int(otherwise or 0)


def reaching(holds: np.ndarray) -> np.ndarray:
    """Where a condition (per state) starts to hold: true at c, false at c - 1."""
    fires = np.zeros_like(holds)
    fires[1:] = holds[1:] & ~holds[:-1]
    return fires


def test_each_breakpoint_kind_stops_where_the_native_trace_says(page: webdriver.Chrome) -> None:
    left, right = source(ALLEGRO), source(DEFEND)
    trace = native(left, right, 17, "kettle")
    start = 3000
    # a position: the instruction the right program runs after 3500 cycles
    offset = int(trace.right_source[3500])
    positions = np.append(trace.right_source == offset, False)
    assert right[offset] in "+-<>.[]" and positions[3000:9000].sum() > 2
    cell = reaching(trace.tapes[:, 16] == 200)
    flag = reaching(trace.tapes[:, 0] == 0)
    pointer = reaching(trace.right_pointer == 5)
    kinds = [
        ({"kind": "position", "side": "right", "offset": offset}, positions),
        ({"kind": "cell", "cell": 16, "value": -56}, cell),
        ({"kind": "flag", "side": "left"}, flag),
        ({"kind": "pointer", "side": "right", "cell": 5}, pointer),
    ]
    for breakpoint, fires in kinds:
        mount(page, left, right, 17, "kettle", cycle=start, breakpoints=[breakpoint])
        settled(page, start)
        click(page, "run to a breakpoint (])")
        ahead = first(fires, start)
        assert settled(page, ahead)["hit"].startswith("Stopped at"), breakpoint
        click(page, "run to a breakpoint (])")
        settled(page, first(fires, ahead, trace.cycles))
        page.execute_script("harness.setState({cycle: arguments[0]})", 9000)
        settled(page, 9000)
        click(page, "run back to a breakpoint ([)")
        settled(page, last(fires, 9000, 0))
    # the end, and all of them at once: the nearest wins
    mount(page, left, right, 17, "kettle", cycle=start, breakpoints=[{"kind": "end"}])
    settled(page, start)
    click(page, "run to a breakpoint (])")
    settled(page, trace.cycles)
    every = np.logical_or.reduce([fires for _, fires in kinds])
    page.execute_script(
        "harness.setState({cycle: 100, breakpoints: arguments[0]})", [b for b, _ in kinds]
    )
    settled(page, 100)
    click(page, "run to a breakpoint (])")
    settled(page, first(every, 100))


def test_breakpoints_from_the_page(page: webdriver.Chrome) -> None:
    left, right = source(ALLEGRO), source(DEFEND)
    trace = native(left, right, 17, "kettle")
    mount(page, left, right, 17, "kettle", cycle=500)
    settled(page, 500)
    # click the right program's current instruction: a position breakpoint there
    offset = int(trace.right_source[500])
    page.find_element(By.CSS_SELECTOR, ".dbg-source.right .ch.current").click()
    state = page.execute_script("return harness.state()")
    assert state["breakpoints"] == [{"kind": "position", "side": "right", "offset": offset}]
    assert page.execute_script("return harness.changes.at(-1)") == state
    click(page, "run to a breakpoint (])")
    settled(page, first(np.append(trace.right_source == offset, False), 500))
    # the form: a flag at zero
    form = page.find_element(By.CSS_SELECTOR, ".dbg-break-form")
    form.find_element(By.CSS_SELECTOR, "select").send_keys("a flag")
    form.find_element(By.CSS_SELECTOR, "button").click()
    assert page.execute_script("return harness.state().breakpoints.length") == 2
    # clicking the position again clears it
    page.execute_script("harness.setState({cycle: 500})")
    settled(page, 500)
    page.find_element(By.CSS_SELECTOR, ".dbg-source.right .ch.current").click()
    assert page.execute_script("return harness.state().breakpoints") == [
        {"kind": "flag", "side": "left"}
    ]


def test_state_round_trip(page: webdriver.Chrome) -> None:
    left, right = source(ALLEGRO), source(DEFEND)
    state = {
        "tapeLength": 21,
        "polarity": "sieve",
        "cycle": 321,
        "breakpoints": [
            {"kind": "cell", "cell": 3, "value": 128},
            {"kind": "pointer", "side": "right", "cell": 4},
            {"kind": "position", "side": "left", "offset": 17},
            {"kind": "end"},
        ],
    }
    mount(page, left, right, 17, "kettle", cycle=10)
    settled(page, 10)
    page.execute_script("harness.setState(arguments[0])", state)
    now = settled(page, 321)
    assert page.execute_script("return harness.state()") == state
    assert page.execute_script("return harness.changes.at(-1)") == state
    expect_state(now, native(left, right, 21, "sieve"), 321)
    mount(
        page,
        left,
        right,
        state["tapeLength"],
        state["polarity"],
        **{k: state[k] for k in ("cycle", "breakpoints")},
    )
    settled(page, 321)
    assert page.execute_script("return harness.state()") == state
    listed = [e.text for e in page.find_elements(By.CSS_SELECTOR, ".dbg-break-list li")]
    line, column = engine.line_column(left.encode(), 17)
    assert f"L at line {line}, column {column} \u00d7" in listed
    # what makes no sense is dropped, a signed value made 0..255
    page.execute_script(
        "harness.setState({breakpoints: [{kind: 'cell', cell: 99, value: 1},"
        " {kind: 'nonsense'}, {kind: 'cell', cell: 2, value: -1}]})"
    )
    assert page.execute_script("return harness.state().breakpoints") == [
        {"kind": "cell", "cell": 2, "value": 255}
    ]


def test_other_programs_in_the_same_debugger(page: webdriver.Chrome) -> None:
    mount(page, source(ALLEGRO), source(DEFEND), 14, "sieve", cycle=200)
    settled(page, 200)
    left, right = source(SELF_DEFENSE), source(ALLEGRO)
    page.execute_script(
        "harness.setPrograms({name: 'New', source: arguments[0]},"
        " {name: 'Other', source: arguments[1]})",
        left,
        right,
    )
    expect_state(settled(page, 200), native(left, right, 14, "sieve"), 200)
    names = [e.text for e in page.find_elements(By.CSS_SELECTOR, ".dbg-pane .dbg-marker")]
    assert names == ["New", "Other"]


def test_keyboard_only(page: webdriver.Chrome) -> None:
    left, right = source(ALLEGRO), source(DEFEND)
    trace = native(left, right, 17, "kettle")
    mount(page, left, right, 17, "kettle", cycle=2000)
    settled(page, 2000)
    page.execute_script("document.activeElement.blur(); window.focus()")
    keys = ActionChains(page)
    for _ in range(40):  # Tab from the top of the page to the first step button
        keys.send_keys(Keys.TAB).perform()
        if page.execute_script("return document.activeElement.matches('.dbg-controls button')"):
            break
    focused = page.switch_to.active_element
    assert focused.get_attribute("aria-label") == "the first cycle (Home)"
    assert focused.value_of_css_property("outline-style") == "solid"  # focus is visible

    def press(*chord: str) -> None:
        action = ActionChains(page)
        for modifier in chord[:-1]:
            action.key_down(modifier)
        action.send_keys(chord[-1])
        for modifier in reversed(chord[:-1]):
            action.key_up(modifier)
        action.perform()

    cycle = 2000
    for chord, step in (
        ((Keys.ARROW_RIGHT,), 1),
        ((".",), 1),
        ((Keys.SHIFT, Keys.ARROW_RIGHT), 10),
        ((Keys.CONTROL, Keys.ARROW_RIGHT), 100),
        ((Keys.CONTROL, Keys.SHIFT, Keys.ARROW_RIGHT), 1000),
        ((Keys.CONTROL, Keys.SHIFT, Keys.ARROW_LEFT), -1000),
        ((Keys.CONTROL, ","), -100),
        ((Keys.ARROW_LEFT,), -1),
    ):
        press(*chord)
        cycle += step
        expect_state(settled(page, cycle), trace, cycle)
    press(Keys.END)
    settled(page, trace.cycles)
    press(Keys.HOME)
    settled(page, 0)
    press(Keys.ARROW_RIGHT)
    settled(page, 1)
    press("b")  # a breakpoint at the left program's instruction
    offset = int(trace.left_source[1])
    assert page.execute_script("return harness.state().breakpoints") == [
        {"kind": "position", "side": "left", "offset": offset}
    ]
    press(Keys.HOME)
    settled(page, 0)
    press("]")
    settled(page, first(np.append(trace.left_source == offset, False), 0))
    press(Keys.END)
    settled(page, trace.cycles)
    press("[")
    settled(page, last(np.append(trace.left_source == offset, False), trace.cycles))
    press("g")
    assert page.switch_to.active_element.get_attribute("aria-label") == "go to cycle"
    page.switch_to.active_element.send_keys(Keys.CONTROL, "a")
    page.switch_to.active_element.send_keys("4321", Keys.ENTER)
    expect_state(settled(page, 4321), trace, 4321)


def test_phone_width(page: webdriver.Chrome) -> None:
    left, right = source(ALLEGRO), source(DEFEND)
    mount(page, left, right, 30, "sieve", cycle=100)
    page.set_window_size(390, 844)
    settled(page, 100)
    sizes = page.execute_script(
        "const wrap = document.querySelector('.dbg-tape-wrap');"
        "return {page: document.documentElement.scrollWidth,"
        " view: document.documentElement.clientWidth,"
        " tape: wrap.scrollWidth, shown: wrap.clientWidth,"
        " bar: getComputedStyle(wrap).overflowX,"
        " widest: Math.max(...Array.from(document.querySelectorAll('.dbg *'),"
        "   (e) => e.closest('.dbg-tape-wrap') ? 0 : e.getBoundingClientRect().right))}"
    )
    assert sizes["page"] <= sizes["view"]  # nothing sticks out sideways
    assert sizes["widest"] <= sizes["view"] + 1
    assert sizes["tape"] > sizes["shown"]  # the 30 cells scroll...
    assert sizes["bar"] == "scroll"  # ...with the bar always shown
    page.execute_script("document.querySelector('.dbg-tape-wrap').scrollLeft = 10000")
    assert page.execute_script(
        "const r = document.querySelector('.dbg-cell[data-cell=\"29\"]').getBoundingClientRect();"
        "return r.right <= document.documentElement.clientWidth"
    )
    # the tape follows a pointer that moves out of sight
    trace = native(left, right, 30, "sieve")
    far = int(np.flatnonzero(trace.left_pointer >= 25)[0])
    page.execute_script("document.querySelector('.dbg-tape-wrap').scrollLeft = 0")
    page.execute_script("harness.setState({cycle: arguments[0]})", far)
    settled(page, far)
    assert page.execute_script(
        "const wrap = document.querySelector('.dbg-tape-wrap').getBoundingClientRect();"
        "const cell = document.querySelector('.dbg-cell.left-here').getBoundingClientRect();"
        "return cell.left >= wrap.left && cell.right <= wrap.right"
    )
    page.set_window_size(1366, 900)


def test_flags_and_their_meaning_are_shown(page: webdriver.Chrome) -> None:
    mount(page, source(ALLEGRO), source(DEFEND), 10, "sieve", cycle=0)
    settled(page, 0)
    flags = page.find_elements(By.CSS_SELECTOR, ".dbg-cell.flag .dbg-second")
    assert [f.text for f in flags] == ["128 · -128", "128 · -128"]
    legend = page.find_element(By.CSS_SELECTOR, ".dbg-legend").text
    assert "starts at 128" in legend and "0\u2013255" in legend and "\u2212128" in legend


def test_parse_error_at_its_place(page: webdriver.Chrome) -> None:
    bad = "é+++ comment\n>>(-)*3] ☃"
    with pytest.raises(ParseError) as error:
        engine.compile_program(bad)
    mount(page, bad, source(DEFEND), 10, "sieve")
    text = WebDriverWait(page, 20).until(
        lambda d: (t := d.find_element(By.CSS_SELECTOR, ".dbg-progress").text).startswith("L") and t
    )
    where = f"line {error.value.line}, column {error.value.column}"
    assert text == f"L: {error.value.message} at {where}"
    marked = page.find_element(By.CSS_SELECTOR, ".dbg-source.left .ch.error")
    assert marked.text == "]"


def test_a_100000_cycle_tie_loads_and_steps_back_at_once(page: webdriver.Chrome) -> None:
    left, right = source(SELF_DEFENSE), source(LEGIT)
    trace = native(left, right, 17, "kettle")
    assert trace.cycles == 100000 and trace.outcome == 0
    started = time.perf_counter()
    mount(page, left, right, 17, "kettle", cycle=100000)
    settled(page, 100000)
    print(f"\n100000-cycle tie traced and shown in {time.perf_counter() - started:.2f} s")
    expect_state(shown(page), trace, 100000)
    took = page.execute_async_script(STEP, "1000 cycles back", -1000)
    print(
        f"stepping back 1000 cycles from the end: drawn in {took['drawn']:.1f} ms, "
        f"counters in {took['counters']:.1f} ms"
    )
    expect_state(settled(page, 99000), trace, 99000)


# click a step button (its label, its step); how long until the new cycle is
# drawn, and until its counters are shown
STEP = """
const [label, step, done] = arguments;
const root = document.querySelector('.dbg');
const target = Number(root.querySelector('.dbg-now').textContent) + step;
const started = performance.now();
root.querySelector(`button[aria-label="${label}"]`).click();
let drawn = null;
const wait = () => {
  if (drawn === null && Number(root.querySelector('.dbg-now').textContent) === target)
    drawn = performance.now() - started;
  if (drawn !== null && Number(root.dataset.countersCycle) === target)
    return done({drawn, counters: performance.now() - started});
  requestAnimationFrame(wait);
};
requestAnimationFrame(wait);
"""


def test_hostile_800_kb_program_keeps_the_page_responsive(page: webdriver.Chrome) -> None:
    huge = "(>)*8" + "+-" * 400_000 + "[-]"
    assert len(huge.encode()) > 800_000
    mount(page, huge, source(LEGIT), 20, "kettle")
    # the page answers while the worker traces, and shows that it is tracing
    started = time.perf_counter()
    early = shown(page)
    print(f"\nthe page answered {1000 * (time.perf_counter() - started):.0f} ms after mounting")
    assert early["busy"] == "true" and early["progress"].startswith("tracing")
    now = settled(page)
    assert now["cycles"] > 0
    window = page.execute_script(
        "return document.querySelector('.dbg-source.left').textContent.length"
    )
    assert window < 20_000  # a window around the instruction, not 800 KB of DOM
    assert "window around" in page.find_element(By.CSS_SELECTOR, ".dbg-pane.left").text
    click(page, "the last cycle (End)")
    settled(page, now["cycles"])


def test_cancel_a_trace(page: webdriver.Chrome) -> None:
    huge = "+-" * 400_000
    # a tie to the limit with an 800 KB program: long enough to cancel
    page.execute_script(
        "harness.mount(arguments[0]);document.querySelector('.dbg-progress button').click();",
        {
            "left": {"name": "L", "source": huge},
            "right": {"name": "R", "source": source(LEGIT)},
            "tapeLength": 30,
            "polarity": "sieve",
        },
    )
    now = shown(page)
    assert now["progress"].startswith("Tracing cancelled")
    page.find_element(By.XPATH, "//button[text()='Trace again']").click()
    assert settled(page)["cycles"] == 100000


def test_deep_nesting(page: webdriver.Chrome) -> None:
    depth = engine.MAX_NEST
    deep = "(" * depth + "+" + ")*2" * depth
    left, right = deep, source(SELF_DEFENSE)
    trace = native(left, right, 10, "sieve")
    mount(page, left, right, 10, "sieve", cycle=3)
    now = settled(page, 3)
    expect_state(now, trace, 3)
    expected = page.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "harness.counters(...arguments[0]).then(done, (e) => done(String(e)));",
        [left, right, 10, "sieve", 3],
    )
    assert len(expected[0]) == depth
    # the innermost hundred beside their '(', and how many there are
    assert now["counters"] == [expected[0][-100:], expected[1]]
    note = page.find_element(By.CSS_SELECTOR, ".dbg-pane.left .dbg-window").text
    assert f"the 100 innermost of {depth} live repeats" in note
    took = page.execute_async_script(STEP, "1 cycle back", -1)
    print(f"\none cycle back with {depth} live counters: drawn in {took['drawn']:.1f} ms")
    expect_state(settled(page, 2), trace, 2)
    assert console_errors(page) == []
