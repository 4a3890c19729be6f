"""The hill's own pages: the standings (`/`), the matrix, a program's page
and a pair, the history chart and a program's series, a program's source,
the static files (views.py, their data: data.py) and the all-time ladder
(ladder.py).

May import: hill.engine, hill.ladder, hill.rules, hill.store (its read
side), hill.web.analytics (a program's profile), hill.web.history (a
program's versions), the web's core (hill.web.builds, hill.web.cache,
hill.web.params, hill.web.reader_thread, hill.web.state), aiohttp, numpy.
"""
