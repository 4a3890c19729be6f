"""Reading one commit of the hill's git history for the web pages.

git itself answers (`diff-tree` for the files a commit changed, `cat-file
--batch` for the commit and those files' contents), each a subprocess
awaited with a time limit, so the event loop, which the web report may
share with the IRC bot, never waits on git, and a git that hangs is
stopped.  These commands only read the object store: they take no lock and
never write, so they run safely beside the hill's writer committing.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, overload

from hill.errors import GitUnavailable

TIME_LIMIT = 10.0  # seconds for one git command
ZERO = "0" * 40  # git's id of "no object" (an added file's old side)
AUTHOR = re.compile(rb"^author (.*) <(.*)> (\d+) ([+-]\d{4})$", re.MULTILINE)


@dataclass(frozen=True)
class ChangedFile:
    """A file a commit changed: its contents before and after (None: absent)."""

    path: str
    old: bytes | None
    new: bytes | None

    @property
    def status(self) -> str:
        if self.old is None:
            return "added"
        return "deleted" if self.new is None else "modified"


@dataclass(frozen=True)
class GitCommit:
    """A commit as git has it."""

    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    time: dt.datetime  # the author's time, naive UTC like the database's
    message: str
    files: tuple[ChangedFile, ...]


class GitReader:
    """Reads commits of the repository at `repository` (a work tree: its
    .git), at most `concurrent` git processes at a time."""

    def __init__(
        self, repository: Path, *, concurrent: int = 4, time_limit: float = TIME_LIMIT
    ) -> None:
        self.git_dir = repository / ".git"
        self.time_limit = time_limit
        self.slots = asyncio.Semaphore(concurrent)

    async def commit(self, sha: str) -> GitCommit | None:
        """The commit `sha` (40 hex digits) and the files it changed; None
        if the repository does not have it."""
        if not (self.git_dir / "HEAD").is_file():
            return None
        listing = await self._git(
            "diff-tree",
            "-r",
            "-z",
            "--root",
            "--no-renames",
            "--no-commit-id",
            sha,
            allow_fail=True,
        )
        if listing is None:
            return None
        changes = _parse_diff_tree(listing)
        blobs = [blob for _, old, new in changes for blob in (old, new) if blob != ZERO]
        objects = _parse_batch(await self._git("cat-file", "--batch", stdin=[sha, *blobs]))
        if sha not in objects:
            return None
        files = tuple(
            ChangedFile(path, objects.get(old), objects.get(new)) for path, old, new in changes
        )
        return _commit(sha, objects[sha], files)

    @overload
    async def _git(
        self, *args: str, stdin: list[str] | None = None, allow_fail: Literal[False] = False
    ) -> bytes: ...

    @overload
    async def _git(
        self, *args: str, stdin: list[str] | None = None, allow_fail: bool
    ) -> bytes | None: ...

    async def _git(
        self, *args: str, stdin: list[str] | None = None, allow_fail: bool = False
    ) -> bytes | None:
        """git's output; None if it failed and `allow_fail` (else GitUnavailable)."""
        async with self.slots:
            process = await asyncio.create_subprocess_exec(
                "git",
                f"--git-dir={self.git_dir}",
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=_environment(),
            )
            given = "".join(f"{line}\n" for line in stdin or []).encode()
            try:
                async with asyncio.timeout(self.time_limit):
                    output, errors = await process.communicate(given)
            except TimeoutError:
                raise GitUnavailable(f"git {args[0]} took over {self.time_limit:g} s") from None
            finally:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                    await process.wait()
        if process.returncode != 0:
            if allow_fail:
                return None
            raise GitUnavailable(f"git {args[0]} failed: {errors.decode(errors='replace')[:200]}")
        return output


def _environment() -> dict[str, str]:
    """No user or system configuration, no locks taken for a mere read."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_OPTIONAL_LOCKS": "0",
        "LC_ALL": "C",
    }


def _parse_diff_tree(output: bytes) -> list[tuple[str, str, str]]:
    """(path, old blob, new blob) of each file in `diff-tree -r -z` output:
    `:oldmode newmode oldblob newblob status` NUL `path` NUL, and so on."""
    fields = output.split(b"\0")
    changes = []
    for header, path in zip(fields[0::2], fields[1::2], strict=False):
        if header.startswith(b":"):
            _, _, old, new, _ = header[1:].decode().split(" ")
            changes.append((path.decode(errors="replace"), old, new))
    return changes


def _parse_batch(output: bytes) -> dict[str, bytes]:
    """The objects of `cat-file --batch` output: `sha type size` LF,
    contents, LF (or `name missing` LF)."""
    objects = {}
    at = 0
    while at < len(output):
        end = output.index(b"\n", at)
        header = output[at:end].decode().split(" ")
        at = end + 1
        if len(header) == 3:
            size = int(header[2])
            objects[header[0]] = output[at : at + size]
            at += size + 1
    return objects


def _commit(sha: str, raw: bytes, files: tuple[ChangedFile, ...]) -> GitCommit:
    """A commit object's headers (tree, parents, author, committer), then its message."""
    headers, _, message = raw.partition(b"\n\n")
    parents = tuple(
        line.split(b" ")[1].decode() for line in headers.split(b"\n") if line.startswith(b"parent ")
    )
    author = AUTHOR.search(headers)
    if author is None:
        raise GitUnavailable(f"commit {sha} has no author")
    name, email, seconds, _zone = author.groups()
    time = dt.datetime.fromtimestamp(int(seconds), dt.UTC).replace(tzinfo=None)
    return GitCommit(
        sha=sha,
        parents=parents,
        author=name.decode(errors="replace"),
        email=email.decode(errors="replace"),
        time=time,
        message=message.decode(errors="replace"),
        files=files,
    )
