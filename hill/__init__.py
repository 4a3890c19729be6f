"""BF Joust hill: engine, rules, storage, history, writers, web and command line.

The map of the house; each package's docstring says what lives there and
what it may import.  Imports point down this list (pyproject.toml's
import-linter contracts, checked by tests/test_architecture.py):

    cli/          the `bfjoust` command (loads a command's module when it runs)
    web/          the web report (aiohttp): reads through the store, never writes the hill
    writers/      the one place each change is made: the hill, the all-time ladder,
                  tournaments, contests; under one lock, one transaction a change
                  (writers/lock.py)
    history/      the git repository of the hill and its recorder
    store/        every table (store/tables.py), the database and its migrations, the
                  read side (queries), the jousts, the request book, the upload links,
                  the ladder's archive, the tournaments' records and pools, the contests
    play/         many jousts: the tournament runner, the Dask cluster
    ladder/       the all-time ladder's rules (pure)
    tournaments/  the tournaments' rules: formats, the ledger, the result (pure)
    analytics/    what the battle statistics say: profiles, the strategy map (pure)
    rules/        scoring, standings, statistics, names, events, changes, requests,
                  versions, reports, contests (pure)
    engine/       the native engine (_engine.c) and its Python face, the arena

and at the top, what everything may use: errors (every exception, one tree),
config (the settings), layout (the data folder), threads (threads and a
cache for asyncio), faults (crash points for the tests), logs.  bot/ sits
above them all.  The pure packages (rules, ladder, tournaments, analytics)
import no I/O library at any depth, the standard library's included (os,
files, processes, sockets, asyncio, logging).
"""

import os

# The hill does its own threading (jousts on every core); numpy's BLAS pool
# would only compete with it for the cores, spinning.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
