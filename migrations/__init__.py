"""Alembic migrations of the hill database (run by hill.storage.Database.upgrade)."""
