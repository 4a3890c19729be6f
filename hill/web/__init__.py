"""The web report: an aiohttp application on the hill's read side (see
server.py for the map of its modules); its pages' data are plain dicts
(pages.py), every path and link is urls.py's.

May import: hill.store (its read side), the rules (hill.rules, hill.ladder,
hill.tournaments, hill.analytics), hill.engine, aiohttp, Jinja2 and
MarkupSafe, numpy, Pillow (thumbnails), fast_diff_match_patch (code diffs),
feedgen (the feed), multipart (uploads), prometheus_client (/metrics), structlog.  No
writer, no SQL of its own (an upload is a request in the book, which the bot
plays).
"""
