"""The hill's rules, pure: plain functions over plain data.

- `scoring`: the six scoring methods (from the battles won);
- `standings`: the ranked hill;
- `statistics`: skill against luck (docs/statistics.md);
- `names`: what a program's name is, and how a player's words find one;
- `events`: what happens to the hill (event kinds, program statuses, why a
  program left) and its times;
- `changes`: what a change does (who leaves, which event), its summaries
  and its commit titles;
- `reports`: the hill as text, breakdown and JSON;
- `requests`: what players ask of the hill (request kinds), what it came to;
- `contests`: contests' names, closing times, which entries count, their
  news, standings and publications (docs/contests.md).

May import: hill.engine, hill.errors, numpy.  No I/O library at any depth
(no SQLAlchemy, Alembic, aiohttp, GitPython, Dask, irc, Jinja2): a guard
test (tests/test_architecture.py) checks it.
"""
