"""The one error the hill speaks to players with."""

from __future__ import annotations


class HillError(Exception):
    """A request the hill refuses or cannot answer; the message is meant for the player."""
