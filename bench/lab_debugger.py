"""Benchmark: the Lab's debugger in headless Chromium on a 100000-cycle battle.

Mounts the debugger (hill/web/static/lab/debugger.js, the real engine in its
worker) alone on the test harness page (tests/data/lab), on a tie that runs to
the cycle limit, then times in the page, from the click to the drawn state:
stepping back 1000 cycles from the end and on (goal: under 50 ms), the same
forward, and a breakpoint search over the whole battle; and how long the
worker takes to answer the live repeat counters of the new cycle (a replay
from its nearest snapshot).  It prints the figures; it asserts nothing.

    .venv/bin/python bench/lab_debugger.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from selenium.webdriver.support.ui import WebDriverWait

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from support.labpage import HARNESS, serve  # noqa: E402
from support.reference import warrior_path  # noqa: E402
from support.webhill import chromium  # noqa: E402

LEFT = "esohill-20131008/Arc_Koen_self_defense.bfjoust"
RIGHT = "esohill-20131008/JWinslow23_maybethisislegitimate_.bfjoust"

# click a button of the debugger; milliseconds until the page shows `target`
# (drawn; -1: any other cycle) and until it shows that cycle's counters
TIMED_CLICK = """
const [label, wanted, done] = arguments;
const root = document.querySelector('.dbg');
const now = () => Number(root.querySelector('.dbg-now').textContent);
const from = now();
const started = performance.now();
root.querySelector(`button[aria-label="${label}"]`).click();
let drawn = null;
let target = wanted;
const wait = () => {
  if (drawn === null && (wanted < 0 ? now() !== from : now() === target)) {
    drawn = performance.now() - started;
    target = now();
  }
  if (drawn !== null && Number(root.dataset.countersCycle) === target)
    return done({drawn, counters: performance.now() - started, cycle: target});
  requestAnimationFrame(wait);
};
requestAnimationFrame(wait);
"""


def report(name: str, samples: list[float]) -> None:
    print(
        f"{name:<42} median {statistics.median(samples):6.1f} ms"
        f"  max {max(samples):6.1f} ms  ({len(samples)} times)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with serve() as url, tempfile.TemporaryDirectory() as profile:
        driver = chromium(Path(profile))
        try:
            driver.get(url + HARNESS)
            WebDriverWait(driver, 20).until(
                lambda d: d.execute_script("return !!window.harnessReady")
            )
            started = time.perf_counter()
            driver.execute_script(
                "harness.mount(arguments[0])",
                {
                    "left": {"name": "left", "source": warrior_path(LEFT).read_text()},
                    "right": {"name": "right", "source": warrior_path(RIGHT).read_text()},
                    "tapeLength": 17,
                    "polarity": "kettle",
                    "cycle": 100000,
                },
            )
            WebDriverWait(driver, 60).until(
                lambda d: d.execute_script(
                    "const r = document.querySelector('.dbg');"
                    "return r.dataset.countersCycle === '100000'"
                )
            )
            print(f"the 100000-cycle tie traced and shown in {time.perf_counter() - started:.2f} s")
            back: dict[str, list[float]] = {"drawn": [], "counters": []}
            on: dict[str, list[float]] = {"drawn": [], "counters": []}
            cycle = 100000
            for _ in range(args.repeat):
                took = driver.execute_async_script(TIMED_CLICK, "1000 cycles back", cycle - 1000)
                cycle -= 1000
                for key in back:
                    back[key].append(took[key])
            for _ in range(args.repeat):
                took = driver.execute_async_script(TIMED_CLICK, "1000 cycles on", cycle + 1000)
                cycle += 1000
                for key in on:
                    on[key].append(took[key])
            report("1000 cycles back: drawn", back["drawn"])
            report("1000 cycles back: live counters shown", back["counters"])
            report("1000 cycles on: drawn", on["drawn"])
            report("1000 cycles on: live counters shown", on["counters"])
            # breakpoints that never fire in this battle: each search scans all
            # 100000 cycles
            driver.execute_script(
                "harness.setState({cycle: 0, breakpoints: [{kind: 'cell', cell: 8, value: 77},"
                " {kind: 'pointer', side: 'left', cell: 16},"
                " {kind: 'pointer', side: 'right', cell: 3}]})"
            )
            searches: list[float] = []
            stops: set[int] = set()
            for _ in range(5):
                for label in ("run to a breakpoint (])", "run back to a breakpoint ([)"):
                    took = driver.execute_async_script(TIMED_CLICK, label, -1)
                    searches.append(took["drawn"])
                    stops.add(took["cycle"])
            report("breakpoint search over 100000 cycles", searches)
            print(f"(the searches stopped at cycles {sorted(stops)}: none fired)")
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
