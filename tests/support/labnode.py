"""The Lab's engine (hill/web/static/lab/engine.js over engine.wasm) run by
Node for the tests: one process (tests/node/serve.mjs) answering requests, a
JSON line each way."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from hill import engine

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "tests" / "node" / "serve.mjs"
WASM = ROOT / "hill" / "web" / "static" / "lab" / "engine.wasm"

# the typed arrays of a trace, as engine.js makes them
TRACE_ARRAYS = {
    "left_source": np.int32,
    "right_source": np.int32,
    "left_pointer": np.int16,
    "right_pointer": np.int16,
    "tapes": np.uint8,
}


def encode(source: str | bytes) -> str:
    """A source as serve.mjs takes it: base64 of its bytes."""
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    return base64.b64encode(data).decode()


class LabNode:
    """A Node process serving engine.js; `ask(op, ...)` sends one request."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [self.node(), str(SERVE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )

    @staticmethod
    def node() -> str:
        """Node's path (once engine.wasm is known to be built)."""
        node = shutil.which("node") or shutil.which("nodejs")
        assert node, "Node is missing: `make system-test` installs Debian's nodejs"
        assert WASM.exists(), f"{WASM} is missing: `make setup` builds it"
        return node

    def ask(self, op: str, **request: Any) -> Any:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"op": op, **request}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "the Node process ended"
        answer = json.loads(line)
        assert "fail" not in answer, answer["fail"]
        return answer["ok"]

    def trace(
        self,
        left: str | bytes,
        right: str | bytes,
        tape: int,
        polarity: str,
        max_cycles: int = engine.MAX_CYCLES,
        op: str = "trace",
        **more: Any,
    ) -> dict[str, Any]:
        """A trace (or with op="debug", a debug session) with its arrays decoded."""
        data: dict[str, Any] = self.ask(
            op,
            left=encode(left),
            right=encode(right),
            tape=tape,
            polarity=polarity,
            maxCycles=max_cycles,
            **more,
        )
        for key, dtype in TRACE_ARRAYS.items():
            data[key] = np.frombuffer(base64.b64decode(data[key]), dtype=dtype)
        data["tapes"] = data["tapes"].reshape(-1, tape)
        return data

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)
