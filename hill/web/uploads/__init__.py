"""The upload form (`/upload/TOKEN`): a program too long for an IRC line,
through the one-time link the bot gave, becomes a request in the request
book (views.py); its body read and parsed with bounds (form.py); its page,
while the bot has yet to answer, is held until the upload moves.

May import: hill.rules, hill.store (the upload links and the request
book), the web's core (hill.web.render, hill.web.requestlog,
hill.web.urls, hill.web.changes), aiohttp, multipart.  No other concern of the web.
"""
