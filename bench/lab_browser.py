"""Benchmark: the Lab (/lab) in headless Chromium, a program against the
47-program hill of 2013: the 47 jousts played in the page's worker by the
hill's engine compiled to WebAssembly, then ranked by the server as
`-test` ranks them (goal: well under a second); then a repeat count tuned
over 11 values.  Prints the times the page measured.

    .venv/bin/python bench/lab_browser.py
"""

from __future__ import annotations

import base64
import shutil
import sys
import tempfile
import time
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.webhill import Server, build_hill, chromium, load, reference_programs

PROGRAM = "(>)*8(>[-])*21"
RUNS = 5


def figures(driver) -> dict[str, float]:
    answer = driver.find_element(By.ID, "hill-answer")
    return {key: float(answer.get_attribute(f"data-{key}")) for key in ("play-ms", "total-ms")}


def answered(driver) -> bool:
    return bool(driver.find_element(By.ID, "hill-answer").get_attribute("data-total-ms"))


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="lab-bench-"))
    try:
        started = time.perf_counter()
        server = Server(build_hill(folder / "hill", reference_programs()))
        print(f"built the 47-program hill in {time.perf_counter() - started:.1f} s")
        driver = chromium(folder / "chromium")
        try:
            code = base64.urlsafe_b64encode(PROGRAM.encode()).decode().rstrip("=")
            opened = time.perf_counter()
            load(driver, f"{server.url}/lab#left-code={code}&vs=hill")
            wait = WebDriverWait(driver, 120)
            wait.until(answered)
            first = figures(driver)
            print(
                f"first run (a fresh page: the hill's 47 programs compiled): "
                f"{first['play-ms']:.0f} ms of battles, {first['total-ms']:.0f} ms with the "
                f"ranking; {time.perf_counter() - opened:.2f} s from opening the page"
            )
            print(f"rank {driver.find_element(By.ID, 'hill-rank').text}")
            again = []
            for _ in range(RUNS):
                driver.execute_script("document.getElementById('hill-answer').dataset.totalMs=''")
                driver.find_element(By.ID, "hill-run").click()
                wait.until(answered)
                again.append(figures(driver))
            best = min(again, key=lambda f: f["total-ms"])
            print(
                f"again ({RUNS} runs, best): {best['play-ms']:.0f} ms of battles, "
                f"{best['total-ms']:.0f} ms with the ranking"
            )
            driver.find_element(By.ID, "tune-run").click()
            tuned = driver.find_element(By.ID, "tune-answer")
            wait.until(lambda d: tuned.get_attribute("data-total-ms"))
            values = len(driver.find_elements(By.CSS_SELECTOR, "#tune-table tbody tr"))
            print(
                f"tuning {values} values against the hill: "
                f"{float(tuned.get_attribute('data-total-ms')):.0f} ms with one ranking request"
            )
        finally:
            driver.quit()
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
