"""The web report: an aiohttp application on the hill's read side.

Its shared core, at the top of the package: server.py makes the
application and serves it (connections.py bounds the connections,
requestlog.py keeps the access log to a line a request, process.py runs it
all in a process of its own for the bot); routes.py is the one table of
every route and its handler; urls.py every path and link; state.py the
hill's states as the pages read them (snapshots, history), params.py what
a request asks for; builds.py pages built once per state and kept
compressed (a page and its JSON twin), render.py and templates/ the HTML,
static/ the CSS and plain JS; cache.py the one per-state cache and the
one single-flight helper; reader_thread.py the readers' threads;
changes.py the hill's bell as the pages waiting for a change hear it.

The concerns, each a subpackage saying what it may import: pages/ (the
hill's own pages and the all-time ladder), battles/ (the battle viewer),
history/ (commits, code, the feed and /hill.git), tournaments/
(tournaments and contests), analytics/, trials/ (test pages), lab/,
uploads/, operations/ (health, metrics, the API's description); charts/
draws the pictures.

May import: hill.store (its read side), the rules (hill.rules, hill.ladder,
hill.tournaments, hill.analytics), hill.engine, aiohttp, Jinja2 and
MarkupSafe, numpy, Pillow (thumbnails), fast_diff_match_patch (code diffs),
feedgen (the feed), multipart (uploads), prometheus_client (/metrics), structlog.  No
writer, no SQL of its own (an upload is a request in the book, which the bot
plays; expired test pages are cleared through hill.store.trials).
"""
