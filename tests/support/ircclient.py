"""A small IRC client for the bot's tests, over asyncio streams: it sends
raw lines and waits for the lines it expects (never sleeping blindly)."""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

LINE = re.compile(r"^(?:@(?P<tags>\S+) )?(?::(?P<source>\S+) )?(?P<command>\S+)(?P<params>.*)$")


@dataclass
class Line:
    raw: str
    tags: dict[str, str] = field(default_factory=dict)
    source: str = ""
    command: str = ""
    params: list[str] = field(default_factory=list)

    @property
    def nick(self) -> str:
        return self.source.split("!", 1)[0]

    @property
    def text(self) -> str:
        return self.params[-1] if self.params else ""

    @classmethod
    def parse(cls, raw: str) -> Line:
        match = LINE.match(raw)
        assert match, raw
        params, rest = [], match["params"].lstrip(" ")
        while rest:
            if rest.startswith(":"):
                params.append(rest[1:])
                break
            word, _, rest = rest.partition(" ")
            params.append(word)
            rest = rest.lstrip(" ")
        tags = {}
        for item in (match["tags"] or "").split(";"):
            if item:
                key, _, value = item.partition("=")
                tags[key] = value
        return cls(raw, tags, match["source"] or "", match["command"].upper(), params)


class IrcTestClient:
    connected: ClassVar[list[IrcTestClient]] = []  # closed by botharness.run()

    def __init__(self, nick: str) -> None:
        self.nick = nick
        self.lines: list[Line] = []  # everything received, in order
        self._taken: set[int] = set()  # indexes of lines expect() returned
        self._new = asyncio.Event()
        self.closed = asyncio.Event()

    async def connect(
        self,
        port: int,
        *,
        caps: tuple[str, ...] = (),
        sasl: tuple[str, str] | None = None,
        user: str = "",
        host: str = "127.0.0.1",
    ) -> IrcTestClient:
        """Connect and register; `user` is the ident (default: the nick) and
        `host` the loopback address the connection comes from (any of
        127.0.0.0/8: the server sees a host of its own)."""
        self.reader, self.writer = await asyncio.open_connection(
            "127.0.0.1", port, local_addr=(host, 0)
        )
        self._task = asyncio.create_task(self._read())
        IrcTestClient.connected.append(self)
        if caps or sasl:
            self.send("CAP LS 302")
        self.send(f"NICK {self.nick}")
        self.send(f"USER {user or self.nick} 0 * :test client")
        if caps or sasl:
            wanted = [*caps, "sasl"] if sasl else list(caps)
            await self.expect(lambda m: m.command == "CAP" and "LS" in m.params)
            self.send("CAP REQ :" + " ".join(wanted))
            await self.expect(lambda m: m.command == "CAP" and "ACK" in m.params)
            if sasl:
                self.send("AUTHENTICATE PLAIN")
                await self.expect(lambda m: m.command == "AUTHENTICATE")
                token = base64.b64encode(f"{sasl[0]}\0{sasl[0]}\0{sasl[1]}".encode()).decode()
                self.send(f"AUTHENTICATE {token}")
                await self.expect(lambda m: m.command == "903", timeout=10)
            self.send("CAP END")
        # a guard, not a goal: ircd-hybrid welcomed a crowd's client after 10 s on a busy machine
        welcome = await self.expect(lambda m: m.command in ("001", "433"), timeout=30)
        assert welcome.command == "001", f"nick {self.nick} in use"
        return self

    def send(self, line: str) -> None:
        self.writer.write(line.encode() + b"\r\n")

    def say(self, target: str, text: str) -> None:
        self.send(f"PRIVMSG {target} :{text}")

    async def _read(self) -> None:
        try:
            while raw := await self.reader.readline():
                line = Line.parse(raw.decode(errors="replace").rstrip("\r\n"))
                if line.command == "PING":
                    self.send(f"PONG :{line.text}")
                self.lines.append(line)
                self._new.set()
        finally:
            self.closed.set()
            self._new.set()

    async def expect(self, match: Callable[[Line], bool], timeout: float = 10.0) -> Line:
        """The first line not yet consumed that matches; consumes it."""
        async with asyncio.timeout(timeout):
            while True:
                for index in range(len(self.lines)):
                    if match(self.lines[index]) and index not in self._taken:
                        self._taken.add(index)
                        return self.lines[index]
                self._new.clear()
                await self._new.wait()

    async def reply(self, bot: str, contains: str = "", timeout: float = 20.0) -> str:
        """The next message (PRIVMSG or NOTICE) from `bot` to us or our
        channel, with `contains` in it; the text without `nick: `."""
        line = await self.expect(
            lambda m: (
                m.command in ("PRIVMSG", "NOTICE")
                and m.nick == bot
                and (m.params[0] == self.nick or m.text.startswith(f"{self.nick}: "))
                and contains in m.text
            ),
            timeout,
        )
        return line.text.removeprefix(f"{self.nick}: ")

    async def join(self, channel: str) -> None:
        self.send(f"JOIN {channel}")
        await self.expect(lambda m: m.command == "JOIN" and m.nick == self.nick)

    async def close(self) -> None:
        if not self.writer.is_closing():
            self.send("QUIT :bye")
            self.writer.close()
        self._task.cancel()
