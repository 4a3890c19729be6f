"""Benchmark: the Lab's engine (hill/web/static/lab/engine.js over engine.wasm,
the engine's core built to WebAssembly) in Node against the native engine.

- The 98 x 98 reference matrix as bench/matrix.py plays it (compile the 98
  programs, joust each pair once: 4753 jousts, every result checked), by
  the WebAssembly engine in one Node process and by the native engine on
  one thread, interleaved in the same run; the ratio of the minima (the
  goal: at most 2); the CPU time each process spent too (on a loaded
  machine the steadier figure: Node's includes its compiler threads).
- The debugger on a 100,000-cycle battle: the time engine.debug() takes
  (the battle traced with its snapshots, the trace copied out), then the
  repeat counters of both sides read 1000 cycles back at a time from the
  end, and one cycle back at a time (the goal: under 50 ms a step).

Figures only, never a verdict.  Needs `make setup` (engine.wasm) and Node.

    .venv/bin/python bench/lab_engine.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from matrix import REFERENCE, play_matrix, reference

NODE_HALF = Path(__file__).resolve().with_name("lab_engine.mjs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each")
    args = parser.parse_args()
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise SystemExit("Node is missing (Debian's nodejs: `make system-test`)")
    paths, expected = reference()
    process = subprocess.Popen(
        [node, str(NODE_HALF), str(REFERENCE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin and process.stdout

    def ask(run: str) -> dict[str, object]:
        assert process.stdin and process.stdout
        process.stdin.write(run + "\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())

    loaded = json.loads(process.stdout.readline())
    native: list[float] = []
    native_cpu: list[float] = []
    wasm: list[float] = []
    wasm_cpu: list[float] = []
    figures = ""
    for _ in range(args.repeat):
        started, cpu = time.perf_counter(), time.process_time()
        figures = play_matrix(paths, expected, 1)
        native.append(time.perf_counter() - started)
        native_cpu.append(time.process_time() - cpu)
        run = ask("matrix")
        wasm.append(float(run["seconds"]))  # type: ignore[arg-type]
        wasm_cpu.append(float(run["cpu"]))  # type: ignore[arg-type]
        wrong = run["wrong"]
    debug = ask("debug")
    process.stdin.close()
    process.wait(timeout=60)

    def line(label: str, times: list[float], what: str) -> str:
        return (
            f"{label:<26} min {min(times):6.2f} s, median {statistics.median(times):6.2f} s "
            f"({len(times)} runs): {what}"
        )

    print(f"engine.wasm loaded and compiled by Node in {float(loaded['loadSeconds']):.3f} s")  # type: ignore[arg-type]
    print(line("native engine, 1 thread", native, figures))
    print(
        line("wasm engine in Node", wasm, "all results match" if not wrong else f"{wrong} DIFFER")
    )
    print(
        f"ratio wasm / native (minima): {min(wasm) / min(native):.2f} wall time, "
        f"{min(wasm_cpu) / min(native_cpu):.2f} CPU time ({min(wasm_cpu):.2f} s against "
        f"{min(native_cpu):.2f} s) (goal: at most 2)"
    )
    back1000, back1 = debug["back1000"], debug["back1"]
    assert isinstance(back1000, dict) and isinstance(back1, dict)
    print(
        f"debug session of a {debug['cycles']}-cycle battle: made in {debug['made']:.0f} ms; "
        f"counters of both sides 1000 cycles back: median {back1000['median']:.2f} ms, "
        f"max {back1000['max']:.2f} ms ({back1000['steps']} steps); one cycle back: "
        f"median {back1['median']:.2f} ms, max {back1['max']:.2f} ms ({back1['steps']} steps) "
        "(goal: under 50 ms)"
    )


if __name__ == "__main__":
    main()
