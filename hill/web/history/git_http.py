"""The hill's git history, cloneable over HTTP: `git clone URL/hill.git`.

git's own smart HTTP server, `git http-backend` (a CGI program that ships
with git), answers every request; this module only carries requests to it
and its answers back, in a subprocess so the event loop never waits on git.
It answers urls.PATHS["git"] (`/hill.git/...`, GET and POST, bound in
routes.py to `serve_git`, which hands each request to the app's GitHttp).
Only the read side is reachable: fetches, clones (shallow ones too) and
pulls.  A push is refused here, before git sees it, and http-backend would
refuse it anyway (anonymous receive-pack is off by default).  Only the
public history is served: the refs the writer keeps for itself
(refs/hill/*, a history it set aside) are hidden (uploadpack.hideRefs):
never listed, fetched by name or mirrored.  (Protocol v2 serves any
commit the repository holds to a client that names it by its id, so a
set-aside commit whose id was handed out before stays fetchable; it was
public history.)  A request git cannot read (not its protocol) is a 400
with git's own reason, in one log line.

A burst of clones waits its turn: a few git processes run at once (at a
lower priority than the bot), the others queue, bounded in number and in
time; git does not retry, so a 503 is kept for a queue that is full or
too slow.  Each clone is cheap because the writer keeps the history in
one pack with a reachability bitmap (hill.history): git sends that pack as
it is rather than compressing every object again.

No client holds a turn at its own pace: a request's body is read before it
takes one, and git's whole answer is kept (in memory up to SPOOL_MEMORY,
then in a temporary file) and the turn given back before the answer is
sent, so a client that reads slowly (or not at all) holds only its
connection, which is cut once it has read nothing for STALL_SECONDS.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
from pathlib import Path
from typing import IO

import structlog
from aiohttp import web

from hill.web.requestlog import note_bad_request
from hill.web.urls import clone_url

log = structlog.get_logger(__name__)

# the smart protocol's two read-side endpoints; nothing else is passed on
SMART_PATHS = re.compile(r"/(info/refs|git-upload-pack)")
READ_SERVICE = "git-upload-pack"
MAX_REQUEST_BYTES = 8 << 20  # a fetch's negotiation: wants and haves
TIME_LIMIT = 120.0  # seconds for git to answer one request, then it is stopped
SPOOL_MEMORY = 1 << 20  # of an answer kept in memory; the rest in a temporary file
STALL_SECONDS = 30.0  # a client that takes no part of its answer this long is cut off
BODY_SECONDS = 30.0  # to send a request's body
CONCURRENT = 4  # git processes at once
QUEUE = 200  # requests waiting for one, at most
QUEUE_SECONDS = 60.0  # how long one waits, at most
NICE = ("nice", "-n", "10")  # a clone never slows the bot's own work
CHUNK = 1 << 16
# refs/hill/ is the writer's (a history it sets aside goes to the repository
# beside, hill-repo-diverged.git): should one appear here, git lists none
HIDDEN_REFS = {
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "uploadpack.hideRefs",
    "GIT_CONFIG_VALUE_0": "refs/hill/",
}
# the request encodings aiohttp inflates (what it does not, git would misread)
INFLATED = frozenset({"", "identity", "gzip", "deflate", "br", "zstd"})


class GitHttp:
    """Bridges aiohttp requests to `git http-backend` for one repository.

    At most `concurrent` git processes run at once; up to `queue` more
    requests wait for one, each `queue_seconds` at most; beyond, a 503
    with Retry-After."""

    def __init__(
        self,
        repository: Path,
        *,
        concurrent: int = CONCURRENT,
        queue: int = QUEUE,
        queue_seconds: float = QUEUE_SECONDS,
    ) -> None:
        self.repository = repository
        self.slots = asyncio.Semaphore(concurrent)
        self.queue = queue
        self.queue_seconds = queue_seconds
        self.waiting = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answers in plain text, for git clients (git shows it to the user)."""
        path = "/" + request.match_info["path"]
        # every value, whatever its case: git http-backend and this check
        # might read different ones
        services = [v for k, v in request.query.items() if k.lower() == "service"]
        if path == "/git-receive-pack" or "git-receive-pack" in services:
            return _refusal(403, "the hill's history is read-only: pushes are refused")
        if not SMART_PATHS.fullmatch(path) or (path == "/info/refs" and services != [READ_SERVICE]):
            return _refusal(404, f"not found; clone it with git: git clone {clone_url(request)}")
        if request.method == "POST" and (request.content_length or 0) > MAX_REQUEST_BYTES:
            return _refusal(413, "request too large")
        git_dir = self._git_dir()
        if git_dir is None:
            return _refusal(404, "the hill has no history yet")
        if request.headers.get("Content-Encoding", "").strip().lower() not in INFLATED:
            return _refusal(415, "unsupported Content-Encoding; git sends gzip")
        body = b""
        if request.method == "POST":  # (before a turn: a slow sender holds none)
            try:
                async with asyncio.timeout(BODY_SECONDS):
                    read = await _read_body(request)
            except TimeoutError:
                return _refusal(408, "the request took too long to send")
            if read is None:
                return _refusal(413, "request too large")
            body = read
        if not await self._turn():
            return _refusal(503, "busy: too many clones at once; try again shortly", retry=10)
        try:
            answer = await self._run_backend(request, git_dir, path, body)
        finally:
            self.slots.release()
        if isinstance(answer, web.Response):
            return answer
        return await _send(request, *answer)

    async def _turn(self) -> bool:
        """Wait for a git slot (then hold it); False when the queue is full
        or the wait too long."""
        if self.slots.locked() and self.waiting >= self.queue:
            return False
        self.waiting += 1
        try:
            async with asyncio.timeout(self.queue_seconds):
                await self.slots.acquire()
            return True
        except TimeoutError:
            return False
        finally:
            self.waiting -= 1

    def _git_dir(self) -> Path | None:
        git_dir = self.repository / ".git"
        return git_dir if (git_dir / "HEAD").is_file() else None

    def _environment(
        self, request: web.Request, git_dir: Path, path: str, body: bytes
    ) -> dict[str, str]:
        """The CGI environment.  The body is handed over as aiohttp read
        it, inflated when the client compressed it (git compresses longer
        negotiations): so no Content-Encoding, and the inflated length."""
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            **HIDDEN_REFS,
            "GIT_PROJECT_ROOT": str(git_dir),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": request.query_string,
            "REQUEST_METHOD": request.method,
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "REMOTE_ADDR": request.remote or "",
        }
        if "Git-Protocol" in request.headers:  # the protocol version the client asks for (v2)
            environment["HTTP_GIT_PROTOCOL"] = request.headers["Git-Protocol"]
        if request.method == "POST":
            environment["CONTENT_LENGTH"] = str(len(body))
        return environment

    async def _run_backend(
        self, request: web.Request, git_dir: Path, path: str, body: bytes
    ) -> web.Response | tuple[int, dict[str, str], IO[bytes]]:
        """git's answer whole: its status, its headers and its body (a
        spooled file, read from the start); or a refusal."""
        process = await asyncio.create_subprocess_exec(
            *NICE,
            "git",
            "http-backend",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._environment(request, git_dir, path, body),
        )
        assert process.stdin and process.stdout and process.stderr
        feeding = asyncio.create_task(_feed(body, process.stdin))
        spool = tempfile.SpooledTemporaryFile(SPOOL_MEMORY)  # noqa: SIM115 (_send closes it)
        answer: web.Response | tuple[int, dict[str, str], IO[bytes]]
        try:
            async with asyncio.timeout(TIME_LIMIT):
                status, headers = await _read_cgi_headers(process.stdout)
                while chunk := await process.stdout.read(CHUNK):
                    spool.write(chunk)
                await feeding
                # before `finally`: killing a git that has exited but not been
                # waited for would reap it behind asyncio's back (Popen.kill
                # polls first), and its status would be lost
                await process.wait()
            spool.seek(0)
            answer = (status, headers, spool)
        except TimeoutError:
            log.warning(f"git http-backend took over {TIME_LIMIT:g} s; stopped")
            spool.close()
            answer = _refusal(503, "git took too long; try again later", retry=60)
        except BaseException:
            spool.close()
            raise
        finally:
            feeding.cancel()
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            said = (await process.stderr.read()).decode(errors="replace")
            failed = await process.wait() not in (0, -9)
        if isinstance(answer, tuple) and _nothing_said(answer) and (failed or answer[0] >= 400):
            # git answered nothing a client could show (a malformed request):
            # a 4xx with git's reason, on the one line of a bad request
            answer[2].close()
            reason = f"git could not serve this request: {_first_line(said) or 'no reason given'}"
            note_bad_request(request, reason)
            return _refusal(max(answer[0], 400), reason)
        if failed:
            log.warning(f"git http-backend failed: {_first_line(said)}")
        return answer


async def _send(
    request: web.Request, status: int, headers: dict[str, str], body: IO[bytes]
) -> web.StreamResponse:
    """git's answer to the client at the client's pace (no turn held); a
    client that takes nothing for STALL_SECONDS is cut off."""
    response = web.StreamResponse(status=status, headers=headers)
    with body:
        response.content_length = body.seek(0, 2)
        body.seek(0)
        await response.prepare(request)
        try:
            while chunk := body.read(CHUNK):
                async with asyncio.timeout(STALL_SECONDS):
                    await response.write(chunk)
            await response.write_eof()
        except TimeoutError:
            log.info(f"a git client read nothing for {STALL_SECONDS:g} s; cut off")
            if request.transport is not None:
                request.transport.abort()
    return response


def _nothing_said(answer: tuple[int, dict[str, str], IO[bytes]]) -> bool:
    _, _, body = answer
    empty = body.seek(0, 2) == 0
    body.seek(0)
    return empty


def _first_line(said: str) -> str:
    """git's complaint (its first line of errors), short."""
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    return lines[0][:200] if lines else ""


def _refusal(status: int, text: str, *, retry: int | None = None) -> web.Response:
    headers = {"Retry-After": str(retry)} if retry else None
    return web.Response(status=status, text=text + "\n", headers=headers)


async def _read_body(request: web.Request) -> bytes | None:
    """A POST's body as aiohttp reads it (inflated when it came compressed);
    None past MAX_REQUEST_BYTES, inflated (a small gzip can hold much)."""
    body = bytearray()
    while chunk := await request.content.read(CHUNK):
        body += chunk
        if len(body) > MAX_REQUEST_BYTES:
            return None
    return bytes(body)


async def _feed(body: bytes, stdin: asyncio.StreamWriter) -> None:
    """The request body into git, then end of input."""
    try:
        stdin.write(body)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # git stopped reading: its answer says why
    finally:
        stdin.close()


async def _read_cgi_headers(stdout: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """A CGI answer's header lines (up to the empty line): the status and the
    HTTP headers."""
    status = 200
    headers: dict[str, str] = {}
    while True:
        line = (await stdout.readline()).decode("latin-1").rstrip("\r\n")
        if not line:
            return status, headers
        name, _, value = line.partition(":")
        value = value.strip()
        if name.lower() == "status":
            status = int(value.split()[0])
        else:
            headers[name] = value


GIT = web.AppKey("git", GitHttp)


async def serve_git(request: web.Request) -> web.StreamResponse:
    """/hill.git/...: the app's GitHttp answers."""
    return await request.app[GIT].handle(request)
