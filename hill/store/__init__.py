"""The hill's database: every table, and reading and writing them.

SQLite through SQLAlchemy, the schema managed by Alembic (migrations/).

May import: the rules (hill.rules, hill.ladder, hill.tournaments),
hill.engine, SQLAlchemy and Alembic, structlog (the bell's warning).  Never
the writers, the web, the command line or the bot.
"""
