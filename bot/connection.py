"""Staying connected to one IRC server.

Built on the `irc` package's asyncio client, which parses lines into events
(IRCv3 message tags into `event.tags`) and answers PING.  `ServerLink`
connects (with TLS when configured, `CAP LS` written first so that
registration waits for bot.registration), watches a silent server, takes
another nick when the bot's is in use (and takes it back later), and
reconnects with backoff after any loss.  What the server supports (ISUPPORT:
CASEMAPPING, WHOX) is kept per connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import ssl
import time
from collections import deque
from collections.abc import Callable, Coroutine

import structlog
from irc.client import Event, ServerConnection
from irc.client_aio import AioConnection, AioReactor
from jaraco.stream.buffer import DecodingLineBuffer

from bot.identity import DEFAULT_CASEMAPPING, casefold
from bot.penalty import PenaltyMeter
from bot.registration import Handler, Registration
from hill.config import IrcSettings

log = structlog.get_logger(__name__)

CONNECT_TIMEOUT = 30.0
BACKOFF_FIRST = 1.0  # seconds before the first reconnection, doubling...
BACKOFF_MAX = 60.0  # ...up to this
IDLE_PING = 60.0  # silence after which the bot pings the server
IDLE_DEAD = 150.0  # silence after which the connection is taken as dead
REGISTER_TIMEOUT = 60.0
NICK_RETRY = 15.0  # seconds between asks whether the bot's own nick is free again


class _LenientBuffer(DecodingLineBuffer):
    errors = "replace"  # a client's Latin-1 must not break the connection


class _Connection(AioConnection):
    buffer_class = _LenientBuffer
    meter: PenaltyMeter | None = None  # charged for every line written

    def send_raw(self, string: str) -> None:
        super().send_raw(string)
        if self.meter is not None:
            self.meter.charge(string)

    def process_data(self, new_data: bytes) -> None:
        # one bad line (or a failing handler) must not drop the connection
        self.buffer.feed(new_data)
        for line in self.buffer:
            if not line:
                continue
            try:
                self._process_line(line)
            except Exception:
                log.exception("line failed", line=line[:200])


class _Reactor(AioReactor):
    connection_class = _Connection


class ServerLink:
    """The connection to the configured server, kept up until `stop()`;
    `on_connect` runs before each attempt (to forget the last one's state)."""

    def __init__(
        self, settings: IrcSettings, wanted_caps: tuple[str, ...], on_connect: Callable[[], None]
    ) -> None:
        self.settings = settings
        self.on_connect = on_connect
        self.reactor = _Reactor(loop=asyncio.get_running_loop())
        # every line written is charged as the server charges it (bot.penalty)
        self.meter = PenaltyMeter(settings.messages_per_second, settings.burst)
        connection = self.reactor.server()
        connection.meter = self.meter
        self.connection: ServerConnection = connection
        self.registration = Registration(settings, self.raw, wanted_caps)
        self._own: deque[str] = deque()  # the bot's own lines waiting for room (send())
        self._own_sender: asyncio.Task[None] | None = None
        self.connections = 0  # attempts so far, for the logs and the tests
        self.stopping = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._reset()
        self.add_handlers(self.registration.handlers())
        self.add_handlers(self._handlers())

    def _reset(self) -> None:
        self.registration.reset()
        self.meter.reset()  # a new connection: the server counts from zero
        self._own.clear()  # lines meant for the last connection
        self.source: str | None = None  # our nick!user@host, once seen
        self.last_seen = time.monotonic()
        self.connected_at = time.monotonic()
        self.nick_tries = 0
        self.whox = False  # the server answers WHO with chosen fields (ISUPPORT WHOX)
        self.casemapping = DEFAULT_CASEMAPPING  # until ISUPPORT says otherwise
        self.disconnected = asyncio.Event()
        self.news = asyncio.Event()  # wakes the watch: disconnected, welcome, a nick change

    def add_handlers(self, handlers: dict[str, Handler]) -> None:
        """Handle server events; handlers of one event run in the order added."""
        for event, handler in handlers.items():
            self.reactor.add_global_handler(event, handler)

    @property
    def nick(self) -> str:
        return self.connection.get_nickname() or self.settings.nick

    def fold(self, text: str) -> str:
        """`text` in lower case, by the server's CASEMAPPING."""
        return casefold(text, self.casemapping)

    def is_me(self, nick: str) -> bool:
        return self.fold(nick) == self.fold(self.nick)

    def is_connected(self) -> bool:
        return self.connection.is_connected()

    def raw(self, line: str) -> None:
        """Write a line at once, not throttled (registration)."""
        if self.connection.is_connected():
            self.connection.send_raw(line)

    def send(self, line: str) -> None:
        """Write a line of the bot's own (JOIN, WHO, PING) as soon as the
        server's count allows, before the outbox's lines."""
        self._own.append(line)
        if self._own_sender is None or self._own_sender.done():
            self._own_sender = self.spawn(self._send_own())

    async def _send_own(self) -> None:
        while self._own:
            await self.meter.room(self.meter.cost(self._own[0]), urgent=True)
            if self._own:  # (a new connection forgets the last one's)
                self.raw(self._own.popleft())

    def spawn(self, coroutine: Coroutine[object, object, None]) -> asyncio.Task[None]:
        """A task that stop() cancels."""
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def later(self, delay: float, action: Callable[[], None]) -> None:
        """`action` after `delay` seconds, if still connected then."""

        async def run() -> None:
            await asyncio.sleep(delay)
            if self.connection.is_connected():
                action()

        self.spawn(run())

    # --- staying connected ---------------------------------------------------

    async def run(self) -> None:
        """Stay connected until stop(): reconnect with backoff after any loss."""
        delay = BACKOFF_FIRST
        while not self.stopping:
            try:
                await self._connect()
                await self._watch()
            except (OSError, TimeoutError) as error:
                log.warning("cannot connect", server=self.settings.server, error=str(error))
            except Exception:
                log.exception("connection failed")
            if self.stopping:
                break
            if self.registration.registered:
                delay = BACKOFF_FIRST
            log.info("reconnecting", in_seconds=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    async def stop(self, message: str) -> None:
        self.stopping = True
        if self.connection.is_connected():
            with contextlib.suppress(Exception):
                self.connection.quit(message)
            await asyncio.sleep(0.2)  # let QUIT go out
            self.connection.disconnect(message)
        for task in list(self._tasks):
            task.cancel()

    async def _connect(self) -> None:
        s = self.settings
        self._reset()
        self.on_connect()
        self.connections += 1
        log.info("connecting", server=s.server, port=s.port, tls=s.tls, attempt=self.connections)
        await asyncio.wait_for(
            self.connection.connect(
                s.server,
                s.port,
                s.nick,
                username=s.username,
                ircname=s.realname,
                connect_factory=self._open,
            ),
            CONNECT_TIMEOUT,
        )

    async def _open(
        self, protocol: asyncio.Protocol, address: tuple[str, int]
    ) -> tuple[asyncio.BaseTransport, asyncio.BaseProtocol]:
        """The transport; CAP LS goes first so registration waits for CAP END."""
        loop = asyncio.get_running_loop()
        transport, proto = await loop.create_connection(
            lambda: protocol,
            *address,
            ssl=tls_context(self.settings),
            server_hostname=(address[0] if self.settings.tls else None),
        )
        transport.write(b"CAP LS 302\r\n")
        self.meter.charge("CAP LS 302")
        return transport, proto

    async def _watch(self) -> None:
        """Until the connection ends, each check when it falls due (a timer,
        woken early by `news`): a ping once per silence of IDLE_PING; the
        drop after IDLE_DEAD, or no welcome in REGISTER_TIMEOUT; while on
        another nick, whether ours is free, every NICK_RETRY seconds."""
        pinged = -1.0  # the silence (its last_seen) already pinged
        nick_asked = time.monotonic()
        while not self.disconnected.is_set():
            registered = self.registration.registered
            other_nick = registered and self.fold(self.nick) != self.fold(self.settings.nick)
            due = min(
                self.last_seen + IDLE_DEAD,
                self.last_seen + IDLE_PING if pinged != self.last_seen else math.inf,
                math.inf if registered else self.connected_at + REGISTER_TIMEOUT,
                nick_asked + NICK_RETRY if other_nick else math.inf,
            )
            self.news.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.news.wait(), max(0.0, due - time.monotonic()))
                continue  # disconnected, or something to reckon with
            now = time.monotonic()
            if now - self.last_seen >= IDLE_DEAD or (
                not registered and now - self.connected_at >= REGISTER_TIMEOUT
            ):
                log.warning(
                    "server silent, dropping the connection", idle=round(now - self.last_seen)
                )
                self.connection.disconnect("ping timeout")
                return
            if pinged != self.last_seen and now - self.last_seen >= IDLE_PING:
                pinged = self.last_seen
                self.send(f"PING :{self.connection.get_server_name() or 'hill'}")
            if other_nick and now - nick_asked >= NICK_RETRY:
                nick_asked = now
                self.send(f"ISON {self.settings.nick}")

    # --- events ----------------------------------------------------------------

    def _handlers(self) -> dict[str, Handler]:
        return {
            "all_raw_messages": self._on_raw,
            "welcome": self._on_welcome,
            "featurelist": self._on_isupport,
            "nicknameinuse": self._on_nick_refused,
            "erroneusnickname": self._on_nick_refused,
            "unavailresource": self._on_nick_refused,
            "nick": self._on_nick,
            "ison": self._on_ison,
            "disconnect": self._on_disconnect,
            "error": self._on_error,
        }

    def _on_raw(self, connection: ServerConnection, event: Event) -> None:
        self.last_seen = time.monotonic()

    def _on_welcome(self, connection: ServerConnection, event: Event) -> None:
        self.meter.reset(registered=True)  # the server's count too; a NICK costs from now on
        self.news.set()

    def _on_isupport(self, connection: ServerConnection, event: Event) -> None:
        # `irc`'s FeatureSet drops tokens without a value, such as WHOX
        self.whox = self.whox or "WHOX" in event.arguments[:-1]
        self.casemapping = getattr(connection.features, "casemapping", self.casemapping)

    def _on_nick_refused(self, connection: ServerConnection, event: Event) -> None:
        if self.registration.registered:
            return  # taking the configured nick back failed: try again later
        self.nick_tries += 1
        alternative = alternative_nick(self.settings.nick, self.nick_tries)
        log.warning("nick refused, trying another", refused=event.arguments[:1], nick=alternative)
        connection.nick(alternative)

    def _on_ison(self, connection: ServerConnection, event: Event) -> None:
        online = {self.fold(n) for n in " ".join(event.arguments).split()}
        wanted = self.settings.nick
        if self.fold(self.nick) != self.fold(wanted) and self.fold(wanted) not in online:
            self.send(f"NICK {wanted}")  # free: take it back

    def _on_nick(self, connection: ServerConnection, event: Event) -> None:
        if self.is_me(event.target):
            self.source = None  # our prefix changed: budget for the longest until seen
        self.news.set()  # ours, maybe (or the one we wait for): the watch reckons again

    def _on_disconnect(self, connection: ServerConnection, event: Event) -> None:
        # after our own QUIT a disconnection is the expected end, not a problem
        (log.info if self.stopping else log.warning)(
            "disconnected", reason=" ".join(a for a in event.arguments if a)
        )
        self.disconnected.set()
        self.news.set()

    def _on_error(self, connection: ServerConnection, event: Event) -> None:
        # ERROR is how a server closes a link: after our QUIT, that is expected
        (log.info if self.stopping else log.warning)("server closes the link", message=event.target)


def tls_context(settings: IrcSettings) -> ssl.SSLContext | None:
    """TLS as configured (None: plain); `tls_verify = false` for test servers only."""
    if not settings.tls:
        return None
    context = ssl.create_default_context()
    if not settings.tls_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def alternative_nick(nick: str, tries: int) -> str:
    """Another nick when `nick` is taken: `nick_`, `nick__`, ..., then digits."""
    if tries <= 3:
        return nick + "_" * tries
    return f"{nick[:24]}{int(time.time() * 1000) % 100000}"
