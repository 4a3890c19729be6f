"""`python -m hill ...` processes started without paying Python's imports
each time: a fork server.

A `bfjoust` process spends most of its first second importing (SQLAlchemy,
Alembic, numpy, scipy, aiohttp ...: about 0.7 s of CPU for `bfjoust hill
report`, 2-3 s for `bfjoust bot`), and the tests that start the command
again and again (kills, restarts) spent most of their time there.  A
`ForkServer` is a Python process that imports those modules once (the
modules the command imports first anyway) and then forks a child for each
process asked of it.  The child is a real process of its own, as
`subprocess.Popen` starts it: its own pid, its standard streams (pipes,
files, /dev/null or the test's own), its working folder and environment,
a session of its own if asked (a signal to the process group reaches it
and every child it starts), default signal handling, and no other
descriptor.  It then runs the module as `python -m` does (`sys.argv`,
`sys.path[0]`, `__main__`) and ends the way a fresh interpreter ends (its
exit status, atexit, threads), so a SIGKILL, a Ctrl-C or a crash point
find the same code in the same state.  The child's exit status comes back
through the server; `ForkedProcess` answers as a `subprocess.Popen` does
(poll, wait, send_signal, terminate, kill, its pipes).

What a fork cannot give a child is a fresh interpreter's start (and its
parent is the server, not the test): it shares the server's hash seed,
and the modules imported before the fork are not imported again (their
import-time effects on the environment are applied again to each child's
own environment).  What they made is frozen out of the garbage
collector's sight (gc.freeze, as forking servers do), so that a child's
exit does not copy and walk every page of it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import pytest

from support.botprocess import BotProcess

# what each `bfjoust` command imports first (hill.cli, the command's module,
# the modules it opens the hill with); other commands: hill.cli alone
PRELOADS = {
    "hill": ("hill.cli", "hill.cli.hill", "hill.store.queries"),
    "web": ("hill.cli", "hill.cli.serve", "hill.web.server"),
    "bot": ("hill.cli", "hill.cli.serve", "bot.app"),
}

# The server: argv is the socket's descriptor, then the modules to import.
SERVER = r"""
import contextlib, gc, importlib, json, os, runpy, select, signal, socket, sys

before = dict(os.environ)
for name in sys.argv[2:]:
    importlib.import_module(name)
# what the imports set in the environment (hill sets OPENBLAS_NUM_THREADS):
# set again in each child's own environment, as its imports would
imported_env = {k: v for k, v in os.environ.items() if before.get(k) != v}
gc.collect()
gc.freeze()
channel = socket.socket(fileno=int(sys.argv[1]))
wake_read, wake_write = os.pipe()
os.set_blocking(wake_read, False)
os.set_blocking(wake_write, False)
signal.set_wakeup_fd(wake_write)
signal.signal(signal.SIGCHLD, lambda number, frame: None)


def reap():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        with contextlib.suppress(OSError):  # (the test has gone)
            channel.send(json.dumps({"exit": pid, "code": code}).encode())


# poll, not select: the channel keeps the test process's descriptor number,
# which may pass select's 1024 in a worker that has run many tests
poller = select.poll()
poller.register(channel, select.POLLIN)
poller.register(wake_read, select.POLLIN)


def serve():
    while True:
        ready = {fd for fd, _ in poller.poll()}
        if wake_read in ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(wake_read, 4096):
                    pass
            reap()
        if channel.fileno() in ready:
            message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
            if not message:
                return None
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                return json.loads(message), fds
            for fd in fds:
                os.close(fd)
            channel.send(json.dumps({"spawned": pid}).encode())


asked = serve()
if asked is None:
    sys.exit(0)
request, fds = asked
# the child: what a fresh `python -m MODULE` started by Popen would have
signal.set_wakeup_fd(-1)
signal.signal(signal.SIGCHLD, signal.SIG_DFL)
os.close(wake_read)
os.close(wake_write)
channel.close()
if request["session"]:
    os.setsid()
for target, fd in enumerate(fds):
    os.dup2(fd, target)
for fd in set(fds):
    os.close(fd)
if request["stderr_to_stdout"]:
    os.dup2(1, 2)
os.chdir(request["cwd"])
sys.path[0] = os.getcwd()
os.environ.clear()
os.environ.update(request["env"])
for key, value in imported_env.items():
    os.environ.setdefault(key, value)
sys.argv = ["-m", *request["argv"]]
runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
"""


class ForkServer:
    """A server that has imported `preload` and forks a process on demand."""

    def __init__(self, preload: Sequence[str]) -> None:
        self._channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-c", SERVER, str(theirs.fileno()), *preload],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        self._spawned: queue.Queue[int | None] = queue.Queue()
        self._exits: dict[int, int] = {}
        self._changed = threading.Condition()
        self._spawning = threading.Lock()
        self.closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while message := self._channel.recv(1 << 16):
            said = json.loads(message)
            if "spawned" in said:
                with self._changed:  # (a pid the system gave again is a new child)
                    self._exits.pop(said["spawned"], None)
                self._spawned.put(said["spawned"])
            else:
                with self._changed:
                    self._exits[said["exit"]] = said["code"]
                    self._changed.notify_all()
        with self._changed:
            self.closed = True
            self._changed.notify_all()
        self._spawned.put(None)

    def spawn(
        self,
        module: str,
        argv: Sequence[str],
        fds: tuple[int, int, int],
        *,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
        start_new_session: bool = False,
        stderr_to_stdout: bool = False,
    ) -> int:
        """Fork a child running `python -m module *argv` on the descriptors
        `fds` (its stdin, stdout, stderr); its pid."""
        request = {
            "module": module,
            "argv": list(argv),
            "cwd": str(Path(cwd if cwd is not None else os.getcwd()).absolute()),
            "env": dict(os.environ if env is None else env),
            "session": start_new_session,
            "stderr_to_stdout": stderr_to_stdout,
        }
        with self._spawning:
            socket.send_fds(self._channel, [json.dumps(request).encode()], list(fds))
            pid = self._spawned.get(timeout=60)
        assert pid is not None, "the fork server ended"
        return pid

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit status once it has ended (-N: killed by signal N),
        waiting up to `timeout` seconds for it (None: as long as it takes)."""
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exits or self.closed, timeout)
            if pid not in self._exits and self.closed:
                raise RuntimeError("the fork server ended")
            return self._exits.get(pid)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._channel.shutdown(socket.SHUT_RDWR)
        self._reader.join(timeout=30)
        self._channel.close()
        self.process.wait(timeout=30)


class ForkedProcess:
    """A child of a fork server, as a `subprocess.Popen` answers."""

    def __init__(
        self,
        server: ForkServer,
        args: Sequence[str | Path],
        pid: int,
        streams: tuple[IO[Any] | None, IO[Any] | None, IO[Any] | None],
    ) -> None:
        self.server = server
        self.args = list(args)
        self.pid = pid
        self.stdin, self.stdout, self.stderr = streams
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.server.exit_code(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, number: int) -> None:
        if self.poll() is None:  # (never a pid the system may have given again)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Forks:
    """Fork servers for `python -m hill ...`, one for each command's preload,
    each started the first time a process of its command is asked."""

    def __init__(self) -> None:
        self.servers: dict[tuple[str, ...], ForkServer] = {}

    def __enter__(self) -> Forks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for server in self.servers.values():
            server.close()
        self.servers.clear()

    def ready(self, args: Sequence[str | Path]) -> None:
        """Start the server for a command now, so that its first process's
        time is its own."""
        words = [str(arg) for arg in args]
        self.server(words[2], words[3:])

    def server(self, module: str, argv: Sequence[str]) -> ForkServer:
        command = next((word for word in argv if word in PRELOADS), "")
        preload = PRELOADS.get(command, ("hill.cli",)) if module == "hill" else (module,)
        if preload not in self.servers:
            self.servers[preload] = ForkServer(preload)
        return self.servers[preload]

    def popen(
        self,
        args: Sequence[str | Path],
        *,
        stdin: int | IO[Any] | None = None,
        stdout: int | IO[Any] | None = None,
        stderr: int | IO[Any] | None = None,
        text: bool = False,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
        start_new_session: bool = False,
    ) -> ForkedProcess:
        """As `subprocess.Popen(args, ...)`, for args `[sys.executable, "-m",
        MODULE, ...]`: stdin, stdout and stderr are None (the test's own),
        subprocess.PIPE, DEVNULL, STDOUT (stderr only), a file or a descriptor."""
        words = [str(arg) for arg in args]
        assert words[:2] == [sys.executable, "-m"], f"not a `python -m` command: {words}"
        module, argv = words[2], words[3:]
        server = self.server(module, argv)
        fds: list[int] = []
        ours: list[IO[Any] | None] = []
        close_after: list[int] = []
        for number, (wanted, reading) in enumerate(
            ((stdin, False), (stdout, True), (stderr, True))
        ):
            stream: IO[Any] | None = None
            if wanted is None or wanted == subprocess.STDOUT:
                fd = number if wanted is None else 1  # (STDOUT: dup2 in the child)
            elif wanted == subprocess.DEVNULL:
                fd = os.open(os.devnull, os.O_RDWR)
                close_after.append(fd)
            elif wanted == subprocess.PIPE:
                read, write = os.pipe()
                fd, kept = (write, read) if reading else (read, write)
                close_after.append(fd)
                stream = open(kept, ("r" if reading else "w") + ("" if text else "b"))  # noqa: SIM115
            elif isinstance(wanted, int):
                fd = wanted
            else:
                fd = wanted.fileno()
            fds.append(fd)
            ours.append(stream)
        try:
            pid = server.spawn(
                module,
                argv,
                (fds[0], fds[1], fds[2]),
                cwd=cwd,
                env=env,
                start_new_session=start_new_session,
                stderr_to_stdout=stderr == subprocess.STDOUT,
            )
        finally:
            for fd in close_after:
                os.close(fd)
        return ForkedProcess(server, args, pid, (ours[0], ours[1], ours[2]))

    def run(
        self,
        args: Sequence[str | Path],
        *,
        timeout: float | None = None,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """As `subprocess.run(args, capture_output=True, text=True, ...)`: on
        a timeout the child is killed and TimeoutExpired raised."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = self.popen(args, stdout=out, stderr=err, cwd=cwd, env=env)
            try:
                code = process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise
            said = []
            for file in (out, err):
                file.seek(0)
                said.append(io.TextIOWrapper(io.BytesIO(file.read())).read())
        return subprocess.CompletedProcess(process.args, code, said[0], said[1])


class Commands:
    """`bfjoust ARGS` forked by `forks`, as `subprocess.run([sys.executable,
    "-m", "hill", *ARGS], capture_output=True, text=True, ...)` runs it."""

    def __init__(self, forks: Forks) -> None:
        self.forks = forks

    def __call__(
        self,
        *args: str | Path,
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "hill", *map(str, args)]
        return self.forks.run(command, env=env, cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def forks() -> Iterator[Forks]:
    """The fork servers of a test module (there: `from support import forks
    as forking`, then `forks = forking.forks`)."""
    with Forks() as servers:
        yield servers


class ForkedBot(BotProcess):
    """`bfjoust bot` forked by `forks` (see BotProcess); `session`: in a
    process group of its own, as a terminal runs it, so that a signal to
    the group reaches it and every child it started."""

    def __init__(self, forks: Forks, *args: Any, session: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.forks = forks
        self.session = session

    def start(self, crash_at: str | None = None, descriptors: int | None = None) -> None:
        assert descriptors is None, "a forked bot keeps the test's limit of descriptors"
        env = {k: v for k, v in os.environ.items() if k != "BFJOUST_CRASH_AT"}
        if crash_at:
            env["BFJOUST_CRASH_AT"] = crash_at
        with self.log.open("a") as log:
            self.process = self.forks.popen(  # type: ignore[assignment]
                [sys.executable, "-m", "hill", "bot", "--config", str(self.config)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=self.session,
            )
