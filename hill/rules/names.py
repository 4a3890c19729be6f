"""Program names, stated once: what a valid name is, how a file name becomes
one, and how a player's words find a program.

A program is `owner.name`.  Owners are IRC nicks or accounts and never hold a
'.', so the first '.' of a full name ends the owner; both parts are safe in a
file name, which is the full name and `SUFFIX`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath

from hill.errors import BadName, HillError

NAME = re.compile(r"[A-Za-z0-9_-]{1,48}")
# IRC nick characters (RFC 2812) but `\`, so that owner.name is a safe file name
OWNER = re.compile(r"[A-Za-z0-9_\-\[\]`^{}|]{1,32}")
SUFFIX = ".bfjoust"  # a program's file, in the hill's repository and in folders


def check(owner: str, name: str) -> None:
    """Raise BadName unless `owner` and `name` are valid."""
    if not OWNER.fullmatch(owner):
        raise BadName(f"bad owner {owner[:40]!r}: 1 to 32 letters, digits or _-[]`^{{}}|")
    if not NAME.fullmatch(name):
        raise BadName(f"bad program name {name[:60]!r}: use 1 to 48 letters, digits, '_' or '-'")


def full_name(owner: str, name: str) -> str:
    return f"{owner}.{name}"


def split(full: str) -> tuple[str, str]:
    """`owner.name` as (owner, name)."""
    owner, _, name = full.partition(".")
    return owner, name


def is_full_name(text: str) -> bool:
    """Whether `text` is a valid `owner.name`."""
    owner, dot, name = text.partition(".")
    return bool(dot) and bool(OWNER.fullmatch(owner)) and bool(NAME.fullmatch(name))


def file_name(full: str) -> str:
    """The file that holds the program `owner.name`."""
    return full + SUFFIX


def from_file(path: str | PurePath, owner: str | None = None) -> str:
    """A valid program name made from a file name (`owner.name.bfjoust`
    gives `name` when its owner is `owner`, as the hill's files are named)."""
    stem = PurePath(path).name.removesuffix(SUFFIX).removesuffix(".bf")
    if owner and stem.lower().startswith(owner.lower() + "."):
        stem = stem[len(owner) + 1 :]
    return re.sub(r"[^A-Za-z0-9_-]", "_", stem)[:48] or "program"


def lookup(full_names: Sequence[str], words: str, identity: str) -> list[int]:
    """The positions of the programs a player means by `words`: `OWNER.NAME`,
    or a bare NAME, the player's (`identity`) own program first; case does
    not matter, as on IRC."""
    words = words.lower()
    if "." in words:
        return [i for i, full in enumerate(full_names) if full.lower() == words]
    matches = [i for i, full in enumerate(full_names) if split(full)[1].lower() == words]
    mine = [i for i in matches if split(full_names[i])[0].lower() == identity.lower()]
    return mine or matches


def choose(full_names: Sequence[str], words: str, identity: str, where: str) -> int:
    """The position of the one program `words` names (see `lookup`); a
    HillError for the player if none is, or several are, `where` (e.g.
    "on the hill")."""
    matches = lookup(full_names, words, identity)
    if not matches:
        raise HillError(f"there is no {words[:60]} {where}")
    if len(matches) > 1:
        raise HillError("which one? " + ", ".join(full_names[i] for i in matches))
    return matches[0]
