"""Varied, valid BF Joust programs for the benchmarks and the tests: seeded.

    from hill.engine.varied import varied_pool, reference_pool

    pool = reference_pool() + varied_pool(120, seed=1)   # [(name, source bytes)]

`varied_pool(count, seed)` mixes four kinds, each program checked by
`hill.engine.compile_program` (a candidate that does not parse is drawn
again), every name unique:

- `mut-*`: a reference program with a few edits (repeat counts changed,
  `+` and `-` swapped, moves inserted or removed, a span deleted);
- `cross-*`: the first top-level part of one reference program followed by
  the rest of another (cut where the nesting depth is zero);
- `rush-*`, `decoy-*`, `defend-*`, `poke-*`: structured programs made from
  the strategies of the wiki (rushes with plain, offset or timed clears;
  decoy builders; home defenders; pokes), with random parameters;
- `noise-*`: short random strings of the eight commands (mostly weak).

The same (count, seed, sources) always gives the same programs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from hill import engine

# the reference programs and their outcomes, in a checkout (tests/data/reference)
REFERENCE = Path(__file__).resolve().parents[2] / "tests" / "data" / "reference"
Named = tuple[str, bytes]
# the kinds and their shares of a varied pool
SHARES = {"mut": 0.35, "cross": 0.15, "structured": 0.35, "noise": 0.15}
_MAX_SOURCE = 200_000  # mutate only programs up to this size (keeps pools quick)


def reference_pool() -> list[Named]:
    """The 98 reference programs, named by their path under warriors/."""
    names = (REFERENCE / "index.txt").read_text().split()
    return [(name, (REFERENCE / "warriors" / name).read_bytes()) for name in names]


def reference_outcomes(names: Sequence[str]) -> np.ndarray:
    """The (N, N, 42) round robin of these reference programs (paths under
    warriors/), read from results.txt."""
    index = (REFERENCE / "index.txt").read_text().split()
    lines = (REFERENCE / "results.txt").read_text().splitlines()
    at = [index.index(name) for name in names]
    return np.array(
        [[engine.parse_classic_line(lines[i * len(index) + j]) for j in at] for i in at],
        dtype=np.int8,
    )


def valid(source: bytes) -> bool:
    try:
        engine.compile_program(source)
    except engine.ParseError:
        return False
    return True


# -- mutations -------------------------------------------------------------

_COUNT = re.compile(rb"([*%])(\d+)")


def _change_counts(rng: random.Random, source: bytes) -> bytes:
    """Scale a few repeat counts by a random factor (at least 1)."""
    matches = list(_COUNT.finditer(source))
    if not matches:
        return source
    out = bytearray(source)
    for match in sorted(
        rng.sample(matches, min(len(matches), rng.randint(1, 3))), key=lambda m: -m.start()
    ):
        value = max(
            1, round(int(match.group(2)) * rng.choice((0.5, 0.8, 1.25, 2)) + rng.randint(-2, 2))
        )
        out[match.start(2) : match.end(2)] = str(min(value, 10_000)).encode()
    return bytes(out)


def _swap_signs(rng: random.Random, source: bytes) -> bytes:
    """Swap + and - in one random stretch (a different polarity guess)."""
    start = rng.randrange(len(source))
    end = min(len(source), start + rng.randint(5, 200))
    middle = source[start:end].translate(bytes.maketrans(b"+-", b"-+"))
    return source[:start] + middle + source[end:]


def _insert_moves(rng: random.Random, source: bytes) -> bytes:
    """Insert a few simple commands between two commands (never inside a count)."""
    spots = [
        i for i in range(len(source) + 1) if i == len(source) or source[i : i + 1] in b"+-<>.[]("
    ]
    at = rng.choice(spots)
    return source[:at] + bytes(rng.choice(b"+-<>.") for _ in range(rng.randint(1, 4))) + source[at:]


def _delete_span(rng: random.Random, source: bytes) -> bytes:
    """Delete a short span (often unbalances brackets: such candidates are drawn again)."""
    start = rng.randrange(len(source))
    return source[:start] + source[start + rng.randint(1, 6) :]


_EDITS: tuple[Callable[[random.Random, bytes], bytes], ...] = (
    _change_counts,
    _change_counts,
    _swap_signs,
    _insert_moves,
    _delete_span,
)


def mutant(rng: random.Random, source: bytes) -> bytes:
    for _ in range(rng.randint(1, 3)):
        source = rng.choice(_EDITS)(rng, source)
    return source


def _top_level_cuts(source: bytes) -> list[int]:
    depth, cuts = 0, []
    for i, byte in enumerate(source):
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            depth -= 1
        elif depth == 0 and byte in b"+-<>.":
            cuts.append(i)
    return cuts


def crossover(rng: random.Random, first: bytes, second: bytes) -> bytes:
    """A prefix of `first` and a suffix of `second`, both cut at depth zero."""
    head, tail = _top_level_cuts(first), _top_level_cuts(second)
    if not head or not tail:
        return first
    return first[: rng.choice(head)] + second[rng.choice(tail) :]


# -- structured programs ---------------------------------------------------


def _clear(rng: random.Random) -> str:
    sign = rng.choice("+-")
    other = "-" if sign == "+" else "+"
    offset = rng.randint(2, 20)
    return rng.choice(
        (
            f"[{sign}]",
            f"[({sign})*{offset}[{other}]]",
            f"[{sign}[{other}{other}[({sign})*{offset}[{other}]]]]",
            f"([{sign}{{[{other}.]}}])%{rng.randint(50, 800)}",
            f"[{sign}.]",
        )
    )


def _rush(rng: random.Random) -> str:
    skip = rng.randint(2, 10)
    return f"(>)*{skip}({_clear(rng)}>)*{rng.randint(10, 29)}"


def _decoy(rng: random.Random) -> str:
    decoys = "".join(
        f"({rng.choice('+-')})*{rng.randint(1, 100)}>" for _ in range(rng.randint(1, 6))
    )
    return f">{decoys}(>)*{rng.randint(0, 4)}({_clear(rng)}>)*{rng.randint(15, 29)}"


def _defend(rng: random.Random) -> str:
    sign = rng.choice("+-")
    return rng.choice(
        (
            f"({sign})*{rng.randint(10, 128)}[]({sign})*{rng.randint(10, 128)}>{_clear(rng)}",
            f"(>)*{rng.randint(1, 3)}({sign})*{rng.randint(5, 60)}<"
            f"([{sign}{{[-.]}}])%{rng.randint(100, 2000)}",
            f"([]{sign})*{rng.randint(50, 5000)}",
            f"(>{sign}<{sign}{sign}.)*{rng.randint(100, 10000)}",
        )
    )


def _poke(rng: random.Random) -> str:
    reach = rng.randint(6, 10)
    return (
        f"(>)*{reach}(>[(<)*{reach}({rng.choice('+-')})*{rng.randint(10, 90)}"
        f"(>)*{reach}({_clear(rng)}>)*21])*21"
    )


_STRUCTURES = {"rush": _rush, "decoy": _decoy, "defend": _defend, "poke": _poke}


def noise(rng: random.Random) -> bytes:
    """A short random program: balanced brackets, random commands."""
    out, open_loops = [], 0
    for _ in range(rng.randint(3, 60)):
        c = rng.choice("+-<>>>.[]")
        if c == "]" and not open_loops:
            c = ">"
        open_loops += {"[": 1, "]": -1}.get(c, 0)
        out.append(c)
    return ("".join(out) + "]" * open_loops).encode()


# -- the pool --------------------------------------------------------------


def _candidate(rng: random.Random, kind: str, sources: Sequence[bytes]) -> tuple[str, bytes]:
    if kind == "mut":
        return kind, mutant(rng, rng.choice(sources))
    if kind == "cross":
        return kind, crossover(rng, rng.choice(sources), rng.choice(sources))
    if kind == "structured":
        name = rng.choice(sorted(_STRUCTURES))
        return name, _STRUCTURES[name](rng).encode()
    return kind, noise(rng)


def varied_pool(
    count: int,
    seed: int,
    sources: Sequence[bytes] | None = None,
    shares: Mapping[str, float] = SHARES,
) -> list[Named]:
    """`count` valid, distinct programs (name, source), named `KIND-SEED-I`,
    of the kinds in `shares` (e.g. {"structured": 0.6, "noise": 0.4} for
    programs that owe nothing to the reference ones)."""
    rng = random.Random(seed)
    if sources is None:
        sources = [s for _, s in reference_pool() if len(s) <= _MAX_SOURCE]
    kinds = list(shares)
    pool: list[Named] = []
    seen: set[bytes] = set(sources)
    while len(pool) < count:
        kind = rng.choices(kinds, weights=[shares[k] for k in kinds])[0]
        name, source = _candidate(rng, kind, sources)
        if source in seen or not valid(source):
            continue
        seen.add(source)
        pool.append((f"{name}-{seed}-{len(pool)}", source))
    return pool
