"""The pages of `-test` trials, `/test/TOKEN` and its strategy map
(views.py): a tested program against the hill it met, for `[hill]
test_page_hours`, then 410 Gone; the expired ones are forgotten
(hill.store.trials.clear_expired).

May import: hill.rules, hill.store (its read side), hill.web.analytics,
hill.web.pages (a program's breakdown), the web's core
(hill.web.reader_thread, hill.web.state), aiohttp, structlog.
"""
