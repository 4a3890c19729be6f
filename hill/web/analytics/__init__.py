"""The analytics pages: a program's profile (`/api/profile/NAME`, shown on
its page), the hill's strategy map (`/strategy`) and `state_map` for any
hill state (views.py); the pools' statistics read and analysed once
(reader.py); their data as plain dicts (data.py).  The tests' and the
tournaments' maps are theirs (hill.web.trials, hill.web.tournaments).

May import: hill.analytics, hill.engine, hill.store (its read side), the
web's core (hill.web.builds, hill.web.cache, hill.web.params,
hill.web.reader_thread, hill.web.state), aiohttp, numpy.  No other concern
of the web.
"""
