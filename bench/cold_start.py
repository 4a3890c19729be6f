"""How long `make run` takes from a cold start: a fresh clone (no .venv, no
built engine, no hill), the Debian packages already installed, to the bot
ready (its web report up and its channel joined).

    .venv/bin/python bench/cold_start.py [--runs 3] [--cold-cache] [--source DIR]

Each run clones the source's committed HEAD into a temporary folder, writes a
config.toml with free ports (the IRC server and the web report), runs `make
run` there and prints the seconds from the start to each milestone:

    venv     the virtualenv exists, with uv in it
    install  the hill's packages installed and the C engine built (.venv/bin/bfjoust)
    setup    `make setup` done: the Lab's WebAssembly engine built too (beside the install)
    seed     the hill created and seeded (`bfjoust hill init --seed`)
    web      the bot says where its web report is
    joined   the bot has joined its channel

A milestone is read off `make run`'s output: make echoes each command as it
starts it, so a step ends when the next one's command appears.  Then the bot
gets Ctrl-C, the local IRC server is stopped and the clone removed.
`--cold-cache` gives uv and pip empty caches (a machine that never
installed the hill: every package is downloaded); without it their usual
caches are used (a second clone).
PYTHONDONTWRITEBYTECODE is left out of `make run`'s environment, as in a
newcomer's shell (then every start compiles every module it imports again):
`--dont-write-bytecode` keeps it.
The machine may be busy with other work: the load average is printed, and
the CPU seconds that `make run` and what it waited for used (`cpu`, user and
system), which depend little on the load (the local IRC server, which
outlives the bot, is not counted).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (milestone, the pattern of the output line that says it is reached)
MILESTONES = [
    ("venv", re.compile(r"uv pip install")),
    ("install", re.compile(r"^touch \.venv/\.installed")),
    ("setup", re.compile(r"^test -f config")),
    ("seed", re.compile(r"bfjoust bot --config")),
    ("web", re.compile(r"The web report is at")),
    ("joined", re.compile(r"\bjoined\b.*channel|channel.*\bjoined\b")),
]
TIMEOUT = 600.0  # seconds: a run that is not ready by then fails


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def config_with_ports(example: str, irc_port: int, web_port: int) -> str:
    """config.example.toml with [irc] port and [web] port replaced."""
    ports = {"irc": irc_port, "web": web_port}
    lines, section = [], ""
    for line in example.splitlines():
        header = re.match(r"\[(\w+)\]", line)
        if header:
            section = header.group(1)
        if section in ports and re.match(r"port\s*=", line):
            line = f"port = {ports[section]}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def one_run(
    source: Path, cold_cache: bool, dont_write_bytecode: bool, verbose: bool
) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        clone = Path(tmp) / "hill"
        subprocess.run(["git", "clone", "--quiet", str(source), str(clone)], check=True)
        example = (clone / "config.example.toml").read_text()
        (clone / "config.toml").write_text(config_with_ports(example, free_port(), free_port()))
        env = dict(os.environ)
        env.pop("VIRTUAL_ENV", None)
        if not dont_write_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        if cold_cache:  # uv, and the pip that brings uv, download everything
            env["UV_CACHE_DIR"] = str(Path(tmp) / "uv-cache")
            env["PIP_CACHE_DIR"] = str(Path(tmp) / "pip-cache")
        reached: dict[str, float] = {}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        make = subprocess.Popen(
            ["make", "run"],
            cwd=clone,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # Ctrl-C to make and the bot, not to us
        )
        timer = threading.Timer(TIMEOUT, os.killpg, (make.pid, signal.SIGKILL))
        timer.start()
        try:
            assert make.stdout is not None
            for line in make.stdout:
                now = time.monotonic() - start
                if verbose:
                    print(f"  {now:6.1f} | {line.rstrip()}", flush=True)
                for name, pattern in MILESTONES:
                    if name not in reached and pattern.search(line):
                        reached[name] = now
                if "joined" in reached:
                    break
        finally:
            timer.cancel()
            if make.poll() is None:
                os.killpg(make.pid, signal.SIGINT)
            make.wait(timeout=120)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            reached["cpu"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            bfjoust = clone / ".venv" / "bin" / "python"
            if bfjoust.exists():
                subprocess.run(
                    [str(bfjoust), "-m", "bot.ircd", "stop", "var/ircd"],
                    cwd=clone,
                    capture_output=True,
                )
        if "joined" not in reached:
            raise SystemExit(f"make run did not get ready (reached: {reached})")
        return reached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--cold-cache", action="store_true", help="uv starts with an empty cache")
    parser.add_argument(
        "--dont-write-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if set"
    )
    parser.add_argument("--source", type=Path, default=ROOT, help="the git repository to clone")
    parser.add_argument("--verbose", action="store_true", help="show make run's output")
    args = parser.parse_args()
    if shutil.which("make") is None:
        raise SystemExit("make is needed")
    names = [name for name, _ in MILESTONES] + ["cpu"]
    print("run  " + "  ".join(f"{n:>7}" for n in names) + "   load")
    for run in range(1, args.runs + 1):
        reached = one_run(args.source, args.cold_cache, args.dont_write_bytecode, args.verbose)
        cells = "  ".join(f"{reached.get(n, float('nan')):7.1f}" for n in names)
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{run:>3}  {cells}   {load}", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
