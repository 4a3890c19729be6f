"""Every path of the site and every link to it, stated once.

`PATHS` names every page (and its JSON twin, `NAME-json`): the routes are
bound at these paths (routes.py, the one table) and `Urls` builds every
link from it, one method per kind of page (as datasette's `urls`), so no
template, page or bot message spells a path or quotes a name:
`url.program(name)`, `url.pair(a, b)`, `url.battle(a, b, tape, polarity)`,
`url.state(event)` ...  A builder keeps its links in one hill state
(`?event=N`; None: the current one), `url.json` gives the same pages' JSON
twins, and a builder made with the site's address (`Urls(site=...)`, as the
bot makes it) gives absolute links.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from aiohttp import web

# [web] public_url: where players reach the site ("" when not configured)
PUBLIC_URL = web.AppKey("public_url", str)

NAME = "{name:[^/]+}"  # a program's full name (owners may hold { and })
OTHER = "{other:[^/]+}"
PATHS = {
    "standings": "/",
    "standings-json": "/api/standings",
    "matrix": "/matrix",
    "matrix-json": "/api/matrix",
    "program": f"/program/{NAME}",
    "program-json": f"/api/breakdown/{NAME}",
    "pair": f"/program/{NAME}/vs/{OTHER}",
    "pair-json": f"/api/breakdown/{NAME}/{OTHER}",
    "history": "/history",
    "history-json": "/api/history",
    "series": f"/history/{NAME}",
    "series-json": f"/api/history/{NAME}",
    "battle": "/battle",
    "battle-json": "/api/trace",
    "source": f"/source/{NAME}",
    "source-json": f"/api/source/{NAME}",
    "static": "/static/{file:[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?}",
    "commit": "/commit/{sha}",
    "commit-json": "/api/commit/{sha}",
    "code": "/code/{hash}",
    "feed": "/history.atom",
    "ladder": "/ladder",
    "ladder-json": "/api/ladder",
    "tournaments": "/tournaments",
    "tournaments-json": "/api/tournaments",
    "tournament": "/tournament/{id}",
    "tournament-json": "/api/tournament/{id}",
    # a big tournament's pieces (hill/web/tournaments/pieces.py)
    "tournament-round": "/tournament/{id}/round/{round}",
    "tournament-round-json": "/api/tournament/{id}/round/{round}",
    "tournament-entrant": f"/tournament/{{id}}/entrant/{NAME}",
    "tournament-entrant-json": f"/api/tournament/{{id}}/entrant/{NAME}",
    "tournament-crosstable": "/tournament/{id}/crosstable",
    "tournament-crosstable-json": "/api/tournament/{id}/crosstable",
    "tournament-stages-json": "/api/tournament/{id}/reality-show",
    "thumbnail": "/thumbnail",
    "contests": "/contests",
    "contests-json": "/api/contests",
    "contest": "/contest/{name}",
    "contest-json": "/api/contest/{name}",
    "upload": "/upload/{token:[A-Za-z0-9_-]{1,100}}",
    "test": "/test/{token}",
    "test-json": "/api/test/{token}",
    "profile-json": f"/api/profile/{NAME}",
    "strategy": "/strategy",
    "strategy-json": "/api/strategy",
    "test-strategy": "/test/{token}/strategy",
    "test-strategy-json": "/api/test/{token}/strategy",
    "tournament-strategy": "/tournament/{id}/strategy",
    "tournament-strategy-json": "/api/tournament/{id}/strategy",
    # the Lab (hill/web/lab/): its page, a state's programs and matrix, rankings
    "lab": "/lab",
    "lab-json": "/api/lab/state",
    "lab-rank": "/api/lab/rank",
    # the operator's: the hill's health (JSON) and its Prometheus metrics
    # (hill/web/operations/health.py)
    "healthz": "/healthz",
    "metrics": "/metrics",
    # the JSON API described (hill/web/operations/openapi.py)
    "openapi-json": "/api/openapi.json",
    # the hill's history to git clients (hill/web/history/git_http.py): GET and POST
    "git": "/hill.git/{path:.*}",
}
GIT_PREFIX = "/hill.git"

# the paths as aiohttp resolves and builds them (no handlers: links only)
_ROUTER = web.UrlDispatcher()
for _name, _path in PATHS.items():
    _ROUTER.add_resource(_path, name=_name)


def site_url(request: web.Request) -> str:
    """The site's absolute URL, ending in "/": the configured public URL,
    else the address this connection came to, as the socket has it (never
    the request's Host header, which the client writes: a page, the feed or
    the clone command must not send readers to a host an attacker named)."""
    configured = request.app.get(PUBLIC_URL, "")
    if configured:
        return configured.rstrip("/") + "/"
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if not sockname:
        return "/"  # (the connection is gone: nobody reads the answer)
    host, port = sockname[:2]
    host = f"[{host}]" if ":" in host else host
    return f"{'https' if request.secure else 'http'}://{host}:{port}/"


def clone_url(request: web.Request) -> str:
    """What players clone: the site's URL and hill.git."""
    return site_url(request) + GIT_PREFIX.lstrip("/")


class Urls:
    """Links to the pages (or, `json`, their JSON twins), in hill state
    `state`: paths, or absolute links on `site` (the site's URL, ending in /)."""

    def __init__(self, state: int | None = None, *, json: bool = False, site: str = "") -> None:
        self.event = state
        self._json = json
        self._site = site.rstrip("/")

    @property
    def json(self) -> Urls:
        """The JSON twins of the same pages."""
        return Urls(self.event, json=True, site=self._site)

    def _url(self, route: str, **parts: str) -> Any:
        return _ROUTER[route].url_for(**parts)

    def _out(self, url: Any) -> str:
        return self._site + str(url)

    def _link(
        self,
        route: str,
        query: dict[str, Any] | None = None,
        *,
        stateful: bool = True,
        **parts: str,
    ) -> str:
        """The route's URL with its path parts quoted, in this builder's state."""
        name = f"{route}-json" if self._json else route
        url = self._url(name, **parts)
        query = dict(query or {})
        if stateful and self.event is not None:
            query["event"] = self.event
        return self._out(url.with_query(query) if query else url)

    def standings(self) -> str:
        return self._link("standings")

    def at(self, state: int | None) -> Urls:
        """The same links in another hill state."""
        return Urls(state, json=self._json, site=self._site)

    def state(self, event: int) -> str:
        """The standings after hill event `event`."""
        return self.at(event).standings()

    def matrix(self) -> str:
        return self._link("matrix")

    def program(self, name: str) -> str:
        return self._link("program", name=name)

    def pair(self, left: str, right: str) -> str:
        return self._link("pair", name=left, other=right)

    def battle(
        self,
        left: str | None = None,
        right: str | None = None,
        tape: int | None = None,
        polarity: str | None = None,
    ) -> str:
        """The battle viewer (JSON: the battle's first piece); by default the
        top two programs on the shortest tape."""
        query = {"left": left, "right": right, "tape": tape, "polarity": polarity}
        return self._link("battle", {k: v for k, v in query.items() if v is not None})

    def code_battle(self, left_code: str, right_code: str, tape: int, polarity: str) -> str:
        """The battle viewer for two programs by their code hashes, on or off
        the hill (in no one state; JSON: the battle's first piece)."""
        query = {"left_code": left_code, "right_code": right_code}
        return self._link("battle", {**query, "tape": tape, "polarity": polarity}, stateful=False)

    def thumbnail(self, left_code: str, right_code: str, tape: int, polarity: str) -> str:
        """The small picture (PNG) of that battle."""
        query = {"left_code": left_code, "right_code": right_code, "tape": tape}
        url = self._url("thumbnail")
        return self._out(url.with_query({**query, "polarity": polarity}))

    def lab(
        self,
        left: str | None = None,
        right: str | None = None,
        *,
        left_hash: str | None = None,
        right_hash: str | None = None,
        tape: int | None = None,
        polarity: str | None = None,
        vs_hill: bool = False,
    ) -> str:
        """The Lab, in this builder's state, with its sides in the fragment
        (static/lab/lab.js reads it): hill programs by name, or any program
        ever submitted by its code hash; the battle to open; `vs_hill`: the
        left program against the whole hill."""
        parts = {
            "left": left,
            "left-hash": left_hash,
            "right": right,
            "right-hash": right_hash,
            "tape": tape,
            "polarity": polarity,
            "vs": "hill" if vs_hill else None,
        }
        fragment = "&".join(
            f"{key}={quote(str(value), safe='')}" for key, value in parts.items() if value
        )
        link = self._link("lab")
        return f"{link}#{fragment}" if fragment else link

    def lab_rank(self) -> str:
        """Where the Lab has outcomes it played ranked against this state (POST)."""
        url = self._url("lab-rank")
        return self._out(url.with_query(self._state()) if self.event is not None else url)

    def tournaments(self) -> str:
        """The hill's tournaments (in no one state)."""
        return self._link("tournaments", stateful=False)

    def tournament(self, tournament_id: int, page: int | None = None) -> str:
        """A tournament (a big one's standings: page `page`)."""
        query = {"page": page} if page and page > 1 else None
        return self._link("tournament", query, stateful=False, id=str(tournament_id))

    def tournament_round(self, tournament_id: int, number: int, page: int = 1) -> str:
        """A page of a big tournament's round."""
        query = {"page": page} if page > 1 else None
        return self._link(
            "tournament-round", query, stateful=False, id=str(tournament_id), round=str(number)
        )

    def tournament_entrant(self, tournament_id: int, name: str) -> str:
        """A big tournament's matches of one entrant."""
        return self._link("tournament-entrant", stateful=False, id=str(tournament_id), name=name)

    def tournament_crosstable(self, tournament_id: int, row: int, column: int) -> str:
        """A tile of a big round robin's crosstable (rows and columns, from 1)."""
        query = {"rows": row, "columns": column}
        return self._link("tournament-crosstable", query, stateful=False, id=str(tournament_id))

    def tournament_stages(self, tournament_id: int, page: int = 1) -> str:
        """A page of a big round robin's reality show (JSON only)."""
        url = self._url("tournament-stages-json", id=str(tournament_id))
        return self._out(url.with_query({"page": page}) if page > 1 else url)

    def contests(self) -> str:
        """The hill's contests (in no one state)."""
        return self._link("contests", stateful=False)

    def contest(self, name: str) -> str:
        return self._link("contest", stateful=False, name=name)

    def source(self, name: str) -> str:
        return self._link("source", name=name)

    def history(self) -> str:
        """Every change of the hill (in no one state)."""
        return self._link("history", stateful=False)

    def series(self, name: str) -> str:
        """A program's rank and score over time (in no one state)."""
        return self._link("series", stateful=False, name=name)

    def ladder(self) -> str:
        """The all-time ladder (in no one hill state)."""
        return self._link("ladder", stateful=False)

    def commit(self, sha: str) -> str:
        """A commit of the hill's history (in no one state)."""
        return self._link("commit", stateful=False, sha=sha)

    def code(self, code_hash: str) -> str:
        """A version's code exactly as submitted, by its hash (text/plain)."""
        return self._out(self._url("code", hash=code_hash))

    def feed(self) -> str:
        """The Atom feed of the hill's changes."""
        return self._out(self._url("feed"))

    def static(self, file: str) -> str:
        return self._out(self._url("static", file=file))

    def home(self) -> str:
        """The site's front page: the standings now."""
        return self._out(self._url("standings"))

    def profile(self, name: str) -> str:
        """A program's profile (JSON only: its page shows it)."""
        return self._out(self._url("profile-json", name=name).with_query(self._state()))

    def strategy(self) -> str:
        """The hill's strategy map."""
        return self._link("strategy")

    def test_strategy(self, token: str) -> str:
        """The strategy map of the hill a `-test` trial met, with it."""
        return self._link("test-strategy", stateful=False, token=token)

    def tournament_strategy(self, tournament_id: int) -> str:
        """The strategy map of a tournament's entrants."""
        return self._link("tournament-strategy", stateful=False, id=str(tournament_id))

    def _state(self) -> dict[str, Any]:
        return {} if self.event is None else {"event": self.event}

    def test(self, token: str) -> str:
        """The page of a `-test` trial (hill.store.trials), in its own state."""
        return self._link("test", stateful=False, token=token)

    def upload(self, token: str) -> str:
        """The upload form of a one-time link (bot/commands/upload.py)."""
        return self._out(self._url("upload", token=token))
