"""The battle viewer: its page, its battles in pieces (`/api/trace`) and
the thumbnails of tournament crosstables (views.py); battles traced under
bounds and cached (store.py), cut into pieces (pieces.py) or drawn as a
small PNG (thumbnail.py).

May import: hill.engine, hill.web.tournaments (the names and stored jousts
of programs given by their code hashes), the web's core (hill.web.builds,
hill.web.cache, hill.web.params, hill.web.render, hill.web.state), aiohttp,
numpy, Pillow.
"""
