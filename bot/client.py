"""The IRC connection: registration with CAP and SASL, accounts, channels,
reconnection with backoff, and the throttled outbox.

Built on the `irc` package's asyncio client, which parses lines into events
(IRCv3 message tags into `event.tags`) and answers PING.  It does no CAP or
SASL of its own, so CAP LS is written as the connection opens (before NICK
and USER, which holds registration open) and the rest is answered here.
Replies wait in the outbox across disconnections and go out once the bot is
back, at the throttled rate.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass

import structlog
from irc.client import Event, ServerConnection
from irc.client_aio import AioConnection, AioReactor
from jaraco.stream.buffer import DecodingLineBuffer

from bot.identity import ACCOUNT_CAPS, AccountTracker, Sender, tag_value
from bot.text import fallback_source, split_text, text_budget
from bot.throttle import TokenBucket
from hill.config import IrcSettings

log = structlog.get_logger(__name__)

CONNECT_TIMEOUT = 30.0
BACKOFF_FIRST = 1.0  # seconds before the first reconnection, doubling...
BACKOFF_MAX = 60.0  # ...up to this
IDLE_PING = 60.0  # silence after which the bot pings the server
IDLE_DEAD = 150.0  # silence after which the connection is taken as dead
REGISTER_TIMEOUT = 60.0
REJOIN_DELAY = 2.0  # after a kick
BANNED_RETRY = 60.0  # after a refused join (ban, invite-only, full, key)
JOIN_WAIT = 5.0  # longest wait for joins before replies go out anyway
WANTED_CAPS = (*ACCOUNT_CAPS, "extended-join")
WHOX_TOKEN = "152"  # marks the bot's own WHO queries
JOIN_REFUSALS = ("bannedfromchan", "inviteonlychan", "channelisfull", "badchannelkey")


@dataclass(frozen=True)
class Incoming:
    """A message to the bot: in a channel (channel set) or in private."""

    sender: Sender
    channel: str | None
    text: str


class _LenientBuffer(DecodingLineBuffer):
    errors = "replace"  # a client's Latin-1 must not break the connection


class _Connection(AioConnection):
    buffer_class = _LenientBuffer

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


class IrcClient:
    def __init__(self, settings: IrcSettings, on_message: Callable[[Incoming], None]) -> None:
        self.settings = settings
        self.on_message = on_message
        self.reactor = _Reactor(loop=asyncio.get_running_loop())
        self.connection: ServerConnection = self.reactor.server()
        self.accounts = AccountTracker()
        self.bucket = TokenBucket(settings.messages_per_second, settings.burst)
        # (command, target, text, called once the line is written: the message's last)
        self.outbox: deque[tuple[str, str, str, Callable[[], None] | None]] = deque()
        self.wakeup = asyncio.Event()  # the outbox or the readiness changed
        self.ready = False  # registered and joined: replies may go out
        # the summary channel is joined too: a channel may refuse outsiders' messages
        wanted = (*settings.channels, settings.summary_channel)
        self.channels = tuple(dict.fromkeys(c for c in wanted if c))
        self._reset_session()
        self.connections = 0  # attempts so far, for the logs and the tests
        self._stopping = False
        self._tasks: set[asyncio.Task[None]] = set()
        for event, handler in self._handlers().items():
            self.reactor.add_global_handler(event, handler)

    def _reset_session(self) -> None:
        """State of one connection, forgotten when it ends."""
        self.registered = False
        self.offered: set[str] = set()
        self.enabled: set[str] = set()
        self.account: str | None = None  # the bot's own, after SASL
        self.joined: set[str] = set()
        self.source: str | None = None  # our nick!user@host, once seen
        self.last_seen = time.monotonic()
        self.connected_at = time.monotonic()
        self.nick_tries = 0
        self.whox = False  # the server answers WHO with chosen fields (ISUPPORT WHOX)
        self.disconnected = asyncio.Event()
        self.accounts.clear()

    @property
    def has_accounts(self) -> bool:
        return any(cap in self.offered for cap in ACCOUNT_CAPS)

    @property
    def nick(self) -> str:
        return self.connection.get_nickname() or self.settings.nick

    # --- running -----------------------------------------------------------

    async def run(self) -> None:
        """Stay connected until stop(): reconnect with backoff after any loss."""
        sender = self._spawn(self._send_forever())
        delay = BACKOFF_FIRST
        try:
            while not self._stopping:
                try:
                    await self._connect()
                    await self._watch()
                except (OSError, TimeoutError) as error:
                    log.warning("cannot connect", server=self.settings.server, error=str(error))
                except Exception:
                    log.exception("connection failed")
                if self._stopping:
                    break
                if self.registered:
                    delay = BACKOFF_FIRST
                log.info("reconnecting", in_seconds=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX)
        finally:
            sender.cancel()

    async def stop(self, message: str = "the hill is closing") -> None:
        self._stopping = True
        if self.connection.is_connected():
            with contextlib.suppress(Exception):
                self.connection.quit(message)
            await asyncio.sleep(0.2)  # let QUIT go out
            self.connection.disconnect(message)
        for task in list(self._tasks):
            task.cancel()

    async def _connect(self) -> None:
        s = self.settings
        self._reset_session()
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
            ssl=self._tls_context(),
            server_hostname=(address[0] if self.settings.tls else None),
        )
        transport.write(b"CAP LS 302\r\n")
        return transport, proto

    def _tls_context(self) -> ssl.SSLContext | None:
        if not self.settings.tls:
            return None
        context = ssl.create_default_context()
        if not self.settings.tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    async def _watch(self) -> None:
        """Until the connection ends: ping a silent server, drop a dead one,
        and take the configured nick back when it frees up."""
        while not self.disconnected.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.disconnected.wait(), 15)
                return
            idle = time.monotonic() - self.last_seen
            if idle > IDLE_DEAD or (
                not self.registered and time.monotonic() - self.connected_at > REGISTER_TIMEOUT
            ):
                log.warning("server silent, dropping the connection", idle=round(idle))
                self.connection.disconnect("ping timeout")
            elif idle > IDLE_PING:
                self._raw(f"PING :{self.connection.get_server_name() or 'hill'}")
            elif self.registered and self.nick != self.settings.nick:
                self._raw(f"NICK {self.settings.nick}")

    def _spawn(self, coroutine: Coroutine[object, object, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _later(self, delay: float, action: Callable[[], None]) -> None:
        async def run() -> None:
            await asyncio.sleep(delay)
            if self.connection.is_connected():
                action()

        self._spawn(run())

    def _raw(self, line: str) -> None:
        if self.connection.is_connected():
            self.connection.send_raw(line)

    # --- the outbox --------------------------------------------------------

    def say(
        self,
        target: str,
        text: str,
        *,
        notice: bool = False,
        prefix: str = "",
        on_sent: Callable[[], None] | None = None,
    ) -> None:
        """Queue `prefix + text` for `target`, in as many lines as it takes;
        `on_sent()` is called once the last line is written to the server."""
        command = "NOTICE" if notice else "PRIVMSG"
        source = self.source or fallback_source(self.nick, self.settings.username)
        budget = text_budget(source, command, target) - len(prefix.encode())
        pieces = split_text(text, budget)
        for index, piece in enumerate(pieces, 1):
            last = index == len(pieces)
            self.outbox.append((command, target, prefix + piece, on_sent if last else None))
        self.wakeup.set()

    def reply(
        self, message: Incoming, text: str, *, on_sent: Callable[[], None] | None = None
    ) -> None:
        """Answer in the channel, addressed to the sender, or in private."""
        if message.channel:
            self.say(message.channel, text, prefix=f"{message.sender.nick}: ", on_sent=on_sent)
        else:
            self.say(message.sender.nick, text, notice=True, on_sent=on_sent)

    async def _send_forever(self) -> None:
        while True:
            while not (self.outbox and self.ready and self.connection.is_connected()):
                self.wakeup.clear()
                await self.wakeup.wait()
            await self.bucket.take()
            if not (self.ready and self.connection.is_connected()):
                continue  # lost meanwhile: the line stays for the next connection
            command, target, text, on_sent = self.outbox.popleft()
            try:
                self.connection.send_items(command, target, ":" + text)
            except Exception:
                log.exception("cannot send", target=target)
            else:
                if on_sent is not None:
                    try:
                        on_sent()
                    except Exception:
                        log.exception("on_sent failed", target=target)

    def _set_ready(self) -> None:
        if not self.ready and self.registered:
            self.ready = True
            log.info("ready", nick=self.nick, joined=sorted(self.joined), queued=len(self.outbox))
            self.wakeup.set()

    # --- events ------------------------------------------------------------

    def _handlers(self) -> dict[str, Callable[[ServerConnection, Event], None]]:
        return {
            "all_raw_messages": self._on_raw,
            "cap": self._on_cap,
            "authenticate": self._on_authenticate,
            "loggedin": self._on_logged_in,
            "saslsuccess": self._on_sasl_done,
            "saslfail": self._on_sasl_done,
            "sasltoolong": self._on_sasl_done,
            "saslaborted": self._on_sasl_done,
            "saslalready": self._on_sasl_done,
            "welcome": self._on_welcome,
            "nicknameinuse": self._on_nick_refused,
            "erroneusnickname": self._on_nick_refused,
            "unavailresource": self._on_nick_refused,
            "join": self._on_join,
            "featurelist": self._on_isupport,
            "whospcrpl": self._on_whox,
            "kick": self._on_kick,
            **{refusal: self._on_join_refused for refusal in JOIN_REFUSALS},
            "account": self._on_account,
            "nick": self._on_nick,
            "quit": self._on_quit,
            "pubmsg": self._on_message,
            "privmsg": self._on_message,
            "disconnect": self._on_disconnect,
            "error": self._on_error,
        }

    def _on_raw(self, connection: ServerConnection, event: Event) -> None:
        self.last_seen = time.monotonic()

    def _on_cap(self, connection: ServerConnection, event: Event) -> None:
        sub, *rest = event.arguments
        caps = set(rest[-1].split()) if rest else set()
        if sub == "LS":
            self.offered |= {cap.split("=", 1)[0] for cap in caps}
            if len(rest) > 1 and rest[0] == "*":
                return  # more LS lines follow
            wanted = [c for c in WANTED_CAPS if c in self.offered]
            if self.settings.sasl_username and "sasl" in self.offered:
                wanted.append("sasl")
            elif self.settings.sasl_username:
                log.error("the server offers no SASL: not logged in")
            if wanted:
                self._raw("CAP REQ :" + " ".join(wanted))
            else:
                self._raw("CAP END")
        elif sub == "ACK":
            self.enabled |= caps
            if "sasl" in caps:
                self._raw("AUTHENTICATE PLAIN")
            else:
                self._raw("CAP END")
        elif sub == "NAK":
            log.warning("capabilities refused", caps=sorted(caps))
            self._raw("CAP END")

    def _on_authenticate(self, connection: ServerConnection, event: Event) -> None:
        if event.target != "+":
            return
        s = self.settings
        payload = f"{s.sasl_username}\0{s.sasl_username}\0{s.sasl_password}"
        encoded = base64.b64encode(payload.encode()).decode()
        chunks = [encoded[i : i + 400] for i in range(0, len(encoded), 400)]
        if len(chunks[-1]) == 400:
            chunks.append("+")  # an exact multiple of 400 ends with an empty chunk
        for chunk in chunks:
            self._raw(f"AUTHENTICATE {chunk}")

    def _on_logged_in(self, connection: ServerConnection, event: Event) -> None:
        # 900 nick nick!user@host account :You are now logged in as account
        if len(event.arguments) >= 2:
            self.account = event.arguments[1]
            log.info("logged in", account=self.account)

    def _on_sasl_done(self, connection: ServerConnection, event: Event) -> None:
        if event.type != "saslsuccess":
            log.error("SASL login failed", reply=" ".join(event.arguments))
        if not self.registered:
            self._raw("CAP END")

    def _on_welcome(self, connection: ServerConnection, event: Event) -> None:
        self.registered = True
        caps = sorted(self.enabled)
        log.info("registered", nick=self.nick, accounts=self.has_accounts, caps=caps)
        for channel in self.channels:
            self._raw(f"JOIN {channel}")
        self._later(JOIN_WAIT, self._set_ready)

    def _on_nick_refused(self, connection: ServerConnection, event: Event) -> None:
        if self.registered:
            return  # taking the configured nick back failed: try again later
        self.nick_tries += 1
        base = self.settings.nick
        alternative = (
            base + "_" * self.nick_tries
            if self.nick_tries <= 3
            else (f"{base[:24]}{int(time.time() * 1000) % 100000}")
        )
        log.warning("nick refused, trying another", refused=event.arguments[:1], nick=alternative)
        connection.nick(alternative)

    def _on_join(self, connection: ServerConnection, event: Event) -> None:
        nick = event.source.nick
        if len(event.arguments) >= 1 and "extended-join" in self.enabled:
            self.accounts.set(nick, event.arguments[0])
        if nick.lower() != self.nick.lower():
            return
        self.source = str(event.source)
        self.joined.add(event.target.lower())
        log.info("joined", channel=event.target)
        if self.has_accounts and "account-tag" not in self.enabled and self.whox:
            # who was already there, logged in as whom (later changes: account-notify)
            self._raw(f"WHO {event.target} %tna,{WHOX_TOKEN}")
        if all(c.lower() in self.joined for c in self.channels):
            self._set_ready()

    def _on_isupport(self, connection: ServerConnection, event: Event) -> None:
        # `irc`'s FeatureSet drops tokens without a value, such as WHOX
        self.whox = self.whox or "WHOX" in event.arguments[:-1]

    def _on_whox(self, connection: ServerConnection, event: Event) -> None:
        # 354 me TOKEN nick account ("0": not logged in)
        if len(event.arguments) == 3 and event.arguments[0] == WHOX_TOKEN:
            self.accounts.set(event.arguments[1], event.arguments[2])

    def _on_kick(self, connection: ServerConnection, event: Event) -> None:
        if event.arguments and event.arguments[0].lower() == self.nick.lower():
            channel = event.target
            self.joined.discard(channel.lower())
            log.warning("kicked", channel=channel, by=event.source.nick, reason=event.arguments[1:])
            self._later(REJOIN_DELAY, lambda: self._raw(f"JOIN {channel}"))

    def _on_join_refused(self, connection: ServerConnection, event: Event) -> None:
        channel = event.arguments[0] if event.arguments else ""
        log.warning("cannot join", channel=channel, reason=event.type)
        if channel in self.channels:
            self._later(BANNED_RETRY, lambda: self._raw(f"JOIN {channel}"))

    def _on_account(self, connection: ServerConnection, event: Event) -> None:
        self.accounts.set(event.source.nick, event.target)

    def _on_nick(self, connection: ServerConnection, event: Event) -> None:
        self.accounts.renamed(event.source.nick, event.target)
        if event.target.lower() == self.nick.lower():
            self.source = None  # our prefix changed: budget for the longest until seen

    def _on_quit(self, connection: ServerConnection, event: Event) -> None:
        self.accounts.forget(event.source.nick)

    def _on_message(self, connection: ServerConnection, event: Event) -> None:
        nick = event.source.nick
        if not nick or nick.lower() == self.nick.lower() or not event.arguments:
            return
        if "account-tag" in self.enabled:
            account = tag_value(event.tags, "account")
        else:
            account = self.accounts.get(nick)
        sender = Sender(nick, account, self.has_accounts)
        channel = event.target if event.type == "pubmsg" else None
        self.on_message(Incoming(sender, channel, event.arguments[0]))

    def _on_disconnect(self, connection: ServerConnection, event: Event) -> None:
        # after our own QUIT a disconnection is the expected end, not a problem
        (log.info if self._stopping else log.warning)(
            "disconnected", reason=" ".join(a for a in event.arguments if a)
        )
        self.ready = False
        self.disconnected.set()

    def _on_error(self, connection: ServerConnection, event: Event) -> None:
        # ERROR is how a server closes a link: after our QUIT, that is expected
        (log.info if self._stopping else log.warning)(
            "server closes the link", message=event.target
        )
