"""The web report: an aiohttp application on the hill's read side (see
server.py for the map of its modules); its pages' data are plain dicts
(pages.py), every path and link is urls.py's.

May import: the store's read side, the rules, the engine, the ladder's and
the tournaments' rules, aiohttp, Jinja2.  No writer, no SQL of its own
(an upload is a request in the book, which the bot plays).
"""
