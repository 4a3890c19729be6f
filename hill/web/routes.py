"""Every route of the web report, in one table: the method, the path (by
its name in urls.PATHS, where every link is built from) and the handler.
server.py binds the table; nothing else adds a route.

`page(name, template, loader)` is two routes of one loader (builds.py): the
HTML page `name` and its JSON twin `name-json`.  The handlers live with
their concern: pages/ (the hill's own pages and the ladder), battles/ (the
battle viewer), history/ (commits, code, the feed and /hill.git),
tournaments/ (tournaments and contests), analytics/, trials/ (test pages),
lab/, uploads/ and operations/ (health, metrics, the API's description).
"""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from hill.web.analytics import views as analytics
from hill.web.battles import views as battles
from hill.web.builds import page
from hill.web.history import views as history
from hill.web.history.git_http import serve_git
from hill.web.lab import views as lab
from hill.web.operations import health, openapi
from hill.web.pages import ladder
from hill.web.pages import views as pages
from hill.web.tournaments import contests
from hill.web.tournaments import views as tournaments
from hill.web.trials import views as trials
from hill.web.uploads import views as uploads
from hill.web.urls import PATHS


def get(name: str, handler: Handler) -> web.RouteDef:
    return web.get(PATHS[name], handler, name=name)


def post(name: str, handler: Handler) -> web.RouteDef:
    return web.post(PATHS[name], handler)


ROUTES: list[web.RouteDef] = [
    # the hill's own pages
    *page("standings", "standings.html", pages.standings),
    *page("matrix", "matrix.html", pages.matrix),
    *page("program", "breakdown.html", pages.breakdown),
    *page("pair", "pair.html", pages.pair),
    *page("history", "history.html", pages.history),
    *page("series", "series.html", pages.series),
    get("source", pages.source_text),
    get("source-json", pages.source_json),
    get("static", pages.static),
    *page("ladder", "ladder.html", ladder.ladder),
    # the battle viewer
    get("battle", battles.battle),
    get("battle-json", battles.trace),
    get("thumbnail", battles.thumbnail),
    # the history: commits, code, the feed, the repository to git clients
    *page("commit", "commit.html", history.commit),
    get("code", history.code),
    get("feed", history.feed),
    get("git", serve_git),
    post("git", serve_git),
    # tournaments and contests
    *page("tournaments", "tournaments.html", tournaments.tournaments),
    *page("tournament", "tournament.html", tournaments.tournament),
    *page("tournament-round", "tournament_round.html", tournaments.tournament_round),
    *page("tournament-entrant", "tournament_entrant.html", tournaments.tournament_entrant),
    *page("tournament-crosstable", "tournament_crosstable.html", tournaments.tournament_crosstable),
    get("tournament-stages-json", tournaments.tournament_stages),
    *page("tournament-strategy", "strategy.html", tournaments.tournament_strategy),
    *page("contests", "contests.html", contests.contest_list),
    *page("contest", "contest.html", contests.contest_page),
    # the analytics
    get("profile-json", analytics.profile),
    *page("strategy", "strategy.html", analytics.strategy),
    # the tests' pages
    *page("test", "breakdown.html", trials.test_page),
    *page("test-strategy", "strategy.html", trials.test_strategy),
    # the Lab
    get("lab", lab.lab),
    get("lab-json", lab.lab_state),
    post("lab-rank", lab.lab_rank),
    # the upload form
    get("upload", uploads.show),
    post("upload", uploads.upload),
    # the operator's and the API's
    get("healthz", health.healthz),
    get("metrics", health.metrics),
    get("openapi-json", openapi.openapi),
]
