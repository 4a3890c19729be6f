"""The Lab (`/lab`): a page where players edit, joust, run against the
hill and tune a program in their browser (static/lab/: its scripts and the
engine compiled to WebAssembly); the server sends a state's programs and
matrix and ranks the outcomes the browser played (views.py).

May import: hill.engine, hill.rules, hill.store (its read side), the web's
core (hill.web.builds, hill.web.params, hill.web.render, hill.web.state),
aiohttp, numpy.  No other concern of the web.
"""
