"""The Lab's static files (hill/web/static) and the test pages of tests/data/lab
served by a plain local HTTP server, as module workers and WebAssembly need
(http, not file:), with the site's Content-Security-Policy (plus the
'wasm-unsafe-eval' that compiling the engine needs)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from hill.web.server import SECURITY_HEADERS

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"/static/": ROOT / "hill/web/static", "/harness/": ROOT / "tests/data/lab"}
ENGINE = ROOT / "hill/web/static/lab/engine.js"
WASM = ROOT / "hill/web/static/lab/engine.wasm"
HARNESS = "/harness/debugger_harness.html"


def policy() -> str:
    csp = SECURITY_HEADERS["Content-Security-Policy"]
    if "'wasm-unsafe-eval'" in csp:
        return csp
    return csp.replace("script-src 'self'", "script-src 'self' 'wasm-unsafe-eval'")


class Handler(SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".wasm": "application/wasm",
        ".css": "text/css",
        ".html": "text/html",
    }

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, folder in FOLDERS.items():
            if path.startswith(prefix):
                target = (folder / path[len(prefix) :]).resolve()
                if target.is_relative_to(folder):
                    return str(target)
        return str(ROOT / "nonexistent")

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", policy())
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve() -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(ROOT)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
