"""Registration with the server: IRCv3 capabilities (CAP) and SASL login.

The `irc` package does no CAP or SASL of its own.  The client writes
`CAP LS 302` as the connection opens, before NICK and USER, which holds
registration open until CAP END; this class answers the rest: it asks for
the capabilities the bot uses, logs in with SASL PLAIN when configured, and
then ends the negotiation.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import structlog
from irc.client import Event, ServerConnection

from bot.identity import ACCOUNT_CAPS
from hill.config import IrcSettings

log = structlog.get_logger(__name__)

# server-time and batch: a channel's history replayed on join, each line with its time
WANTED_CAPS = (*ACCOUNT_CAPS, "extended-join", "server-time", "batch")
SASL_REPLIES = ("saslsuccess", "saslfail", "sasltoolong", "saslaborted", "saslalready")
SASL_CHUNK = 400  # AUTHENTICATE carries at most 400 bytes of base64 a line
SERVICES = "NickServ"  # who logs players in, on every services package

Handler = Callable[[ServerConnection, Event], None]


class Registration:
    """The capabilities of one connection and the bot's own account."""

    def __init__(
        self, settings: IrcSettings, raw: Callable[[str], None], wanted: tuple[str, ...]
    ) -> None:
        self.settings = settings
        self.raw = raw  # writes a line to the server at once (not throttled)
        self.wanted = wanted
        self.reset()

    def reset(self) -> None:
        """Forget the last connection's."""
        self.registered = False  # the server said welcome
        self.offered: set[str] = set()
        self.enabled: set[str] = set()
        self.account: str | None = None  # the bot's own, after SASL

    @property
    def has_accounts(self) -> bool:
        """The network has services accounts (and says whose messages are
        whose): it offers their capabilities, and the operator did not say
        it has none (`[irc] accounts`)."""
        offered = any(cap in self.offered for cap in ACCOUNT_CAPS)
        return offered and self.settings.accounts != "none"

    def handlers(self) -> dict[str, Handler]:
        return {
            "cap": self._on_cap,
            "authenticate": self._on_authenticate,
            "loggedin": self._on_logged_in,
            **{reply: self._on_sasl_done for reply in SASL_REPLIES},
            "welcome": self._on_welcome,
            "userhost": self._on_userhost,
        }

    def _on_cap(self, connection: ServerConnection, event: Event) -> None:
        sub, *rest = event.arguments
        caps = set(rest[-1].split()) if rest else set()
        if sub == "LS":
            self.offered |= {cap.split("=", 1)[0] for cap in caps}
            if len(rest) > 1 and rest[0] == "*":
                return  # more LS lines follow
            self._request()
        elif sub == "ACK":
            self.enabled |= caps
            self.raw("AUTHENTICATE PLAIN" if "sasl" in caps else "CAP END")
        elif sub == "NAK":
            log.warning("capabilities refused", caps=sorted(caps))
            self.raw("CAP END")

    def _request(self) -> None:
        wanted = [c for c in self.wanted if c in self.offered]
        if self.settings.sasl_username and "sasl" in self.offered:
            wanted.append("sasl")
        elif self.settings.sasl_username:
            log.error("the server offers no SASL: not logged in")
        self.raw("CAP REQ :" + " ".join(wanted) if wanted else "CAP END")

    def _on_authenticate(self, connection: ServerConnection, event: Event) -> None:
        if event.target != "+":
            return
        s = self.settings
        payload = f"{s.sasl_username}\0{s.sasl_username}\0{s.sasl_password}"
        encoded = base64.b64encode(payload.encode()).decode()
        chunks = [encoded[i : i + SASL_CHUNK] for i in range(0, len(encoded), SASL_CHUNK)]
        if len(chunks[-1]) == SASL_CHUNK:
            chunks.append("+")  # an exact multiple of 400 ends with an empty chunk
        for chunk in chunks:
            self.raw(f"AUTHENTICATE {chunk}")

    def _on_logged_in(self, connection: ServerConnection, event: Event) -> None:
        # 900 nick nick!user@host account :You are now logged in as account
        if len(event.arguments) >= 2:
            self.account = event.arguments[1]
            log.info("logged in", account=self.account)

    def _on_sasl_done(self, connection: ServerConnection, event: Event) -> None:
        if event.type != "saslsuccess":
            log.error("SASL login failed", reply=" ".join(event.arguments))
        if not self.registered:
            self.raw("CAP END")

    def _on_welcome(self, connection: ServerConnection, event: Event) -> None:
        self.registered = True
        if self.has_accounts:  # is anyone there to log players in?
            self.raw(f"USERHOST {SERVICES}")  # (not ISON: the nick's own watch reads those)

    def _on_userhost(self, connection: ServerConnection, event: Event) -> None:
        # 302 bot :NickServ=+service@services.host (nothing when there is none)
        if not self.has_accounts:
            return
        there = " ".join(event.arguments).split()
        if any(entry.split("=", 1)[0].rstrip("*").lower() == SERVICES.lower() for entry in there):
            log.info("services answer: players log in there", services=SERVICES)
        else:
            log.warning(
                "the server offers accounts but no services answer: players cannot log "
                'in to submit; on a network without services set [irc] accounts = "none"',
                services=SERVICES,
            )
