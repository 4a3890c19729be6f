"""Alembic environment: runs on the engine hill.store.database hands over, with
the models of every table (hill.store.tables) as its target."""

from alembic import context
from sqlalchemy import create_engine

from hill.store.tables import Base

config = context.config
engine = config.attributes.get("engine") or create_engine(config.get_main_option("sqlalchemy.url"))

with engine.begin() as connection:
    # batch mode: SQLite can only change a table by copying it
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    context.run_migrations()
