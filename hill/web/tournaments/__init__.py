"""The tournaments and the contests on the web: the list, each tournament's
page, a big one's pieces and the strategy map of its entrants (views.py),
read by reader.py (a big one as a compact table: pieces.py), their data
as plain dicts (data.py); the contests' pages (contests.py).

May import: hill.engine, hill.rules, hill.store (its read side),
hill.tournaments, hill.web.analytics (the entrants' strategy map),
hill.web.charts (the reality show's elimination order), the web's core
(hill.web.builds, hill.web.cache, hill.web.changes, hill.web.params,
hill.web.reader_thread, hill.web.urls), aiohttp, numpy.
"""
