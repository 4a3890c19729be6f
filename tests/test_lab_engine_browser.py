"""The Lab's engine (hill/web/static/lab/engine.js) in a real headless Chromium:
on a page and in a module Web Worker, loading engine.wasm beside it over
HTTP, with the native engine's results.  (tests/test_lab_engine.py checks
the engine itself, under Node.)"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium import webdriver
from support.webhill import console_errors

from hill import engine

LAB = Path(__file__).resolve().parents[1] / "hill" / "web" / "static" / "lab"

# a page and a worker beside engine.js: each jousts, traces and debugs, and
# puts what it got in the page as JSON
PAGE = """<!doctype html><meta charset="utf-8"><title>engine.js</title><pre id="out"></pre>
<script type="module">
import { run } from "./test-run.js";
const out = document.getElementById("out");
const worker = new Worker("./test-worker.js", { type: "module" });
worker.onmessage = async (message) => {
  out.textContent = JSON.stringify({ page: await run(), worker: message.data });
};
worker.onerror = (error) => { out.textContent = JSON.stringify({ failed: error.message }); };
</script>
"""
WORKER = """import { run } from "./test-run.js";
postMessage(await run());
"""
RUN = """import { loadEngine } from "./engine.js";
export async function run() {
  const engine = await loadEngine();
  const joust = engine.joust("(>)*9([-]>)*21", ">(+)*20<(.)*50").text;
  let kind = null;
  try { engine.joust("[", ""); } catch (error) { kind = error.kind; }
  const trace = engine.trace("(>)*9[-]", "(-)*10", 12, "kettle");
  const debug = engine.debug("(>(+)*5)*3", "[]", 12, "sieve", { maxCycles: 100 });
  const counters = debug.counters(3, 0);
  debug.free();
  return { joust, kind, cycles: trace.cycles, reason: trace.reason,
           tapes: Array.from(trace.tapes), counters };
}
"""
EXTRA = {"index.html": PAGE, "test-worker.js": WORKER, "test-run.js": RUN}


class Handler(SimpleHTTPRequestHandler):
    """The Lab's folder, and the test's page and scripts beside it."""

    def do_GET(self) -> None:
        name = self.path.lstrip("/")
        if name not in EXTRA:
            super().do_GET()
            return
        body = EXTRA[name].encode()
        self.send_response(200)
        kind = "text/html" if name.endswith(".html") else "text/javascript"
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def lab_url() -> Iterator[str]:
    assert (LAB / "engine.wasm").exists(), "engine.wasm is missing: `make setup` builds it"
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(LAB)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_engine_js_on_a_page_and_in_a_module_worker(
    browser: webdriver.Chrome,
    lab_url: str,
) -> None:
    browser.get(lab_url + "/index.html")
    text = ""
    deadline = time.monotonic() + 30
    while not text and time.monotonic() < deadline:
        text = browser.execute_script("return document.getElementById('out').textContent")
        time.sleep(0.1)
    got = json.loads(text)
    assert "failed" not in got, got
    left, right = engine.compile_program("(>)*9([-]>)*21"), engine.compile_program(">(+)*20<(.)*50")
    trace = engine.trace(
        engine.compile_program("(>)*9[-]"), engine.compile_program("(-)*10"), 12, "kettle"
    )
    for where in ("page", "worker"):
        result = got[where]
        assert result["joust"] == str(engine.joust(left, right)), where
        assert result["kind"] == "unmatched_open_bracket", where
        assert (result["cycles"], result["reason"]) == (trace.cycles, trace.reason), where
        assert result["tapes"] == trace.tapes.ravel().tolist(), where
        assert result["counters"] == [{"open": 0, "value": 3}, {"open": 2, "value": 3}], where
    assert [e for e in console_errors(browser) if "favicon" not in e] == []
