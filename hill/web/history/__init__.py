"""The hill's history on the web: a commit's page (what git has beside the
hill's own record of the change: commits.py, on git_reader.py, with each
version's code diff: code_diff.py), a version's code, the Atom feed
(feed.py) and the repository itself to git clients, `/hill.git`
(git_http.py, on `git http-backend`); the handlers are views.py's.

May import: hill.engine, hill.rules, hill.store (its read side), the web's
core (hill.web.builds, hill.web.params, hill.web.reader_thread,
hill.web.requestlog, hill.web.state, hill.web.urls), aiohttp, feedgen,
fast_diff_match_patch, structlog.  No other concern of the web.
"""
