"""A big tournament's pages in pieces (pure functions over plain data).

A round robin of 1,024 entrants has 523,776 matches: as one page it was a
44 MB JSON document and a page no browser can show.  A tournament with
more than PAGED_ENTRANTS entrants or PAGED_MATCHES matches is therefore
kept as a `Table` (its matches as numpy arrays, a few bytes each) and
served in pieces, each small and built once (builds.py):

- the tournament's page: its summary, the standings (HTML: STANDINGS_PAGE
  rows a page; JSON: all of them, as `result.standings`), each round's
  number, bye and match count with links to its pages, the elimination
  order of the reality show, and `pieces`, the links to the rest;
- a round's matches, MATCHES_PAGE a page (`a`, `b`, `margin` as in the
  result's rounds, and each one's sample battle);
- an entrant's matches, every round (from its side, with the opponent);
- a tile of the crosstable, TILE rows by TILE columns in standings order;
- the reality show's stages, STAGES_PAGE a page.

The JSON of the tournament keeps the contract's field names: `result`
holds `format`, `seed`, `entrants`, `ended`, `standings` and `rounds`
(each with `number` and `bye`; its `matches` are in the round's pages,
counted in `matches_count`), `reality_show` is null (its pages are in
`pieces`), as are `samples` and `crosstable`.  Smaller tournaments are
served whole, as before (data.detail).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hill.errors import NotFound
from hill.tournaments.registry import tournament_format
from hill.web.charts.bump import eliminations
from hill.web.tournaments import data as tournament_data

PAGED_ENTRANTS = 150
PAGED_MATCHES = 10_000
STANDINGS_PAGE = 200
MATCHES_PAGE = 500
TILE = 40
STAGES_PAGE = 20

# the sample battle of matches: (a's code, b's code, margins) -> battle indices
Samples = Callable[[Sequence[str], Sequence[str], np.ndarray], np.ndarray]
# a page of a big tournament: from its Table and its summary now
Piece = Callable[["Table", dict[str, Any]], dict[str, Any]]


def is_big(entrants: int, matches: int) -> bool:
    return entrants > PAGED_ENTRANTS or matches > PAGED_MATCHES


@dataclass(frozen=True)
class Round:
    number: int
    bye: str | None
    start: int  # its matches: [start, stop) of the table's arrays
    stop: int


@dataclass(frozen=True)
class Table:
    """A tournament's result, compact: entrants by index, matches as arrays."""

    record: Any  # hill.store.records.TournamentSummary, as the result was read
    summary: dict[str, Any]  # tournament_data.summary of it
    head: dict[str, Any]  # the result's format, seed, entrants, ended
    standings: list[dict[str, Any]]
    programs: dict[str, str]  # name -> code hash
    names: list[str]  # the entrants, in their order
    rounds: list[Round]
    a: np.ndarray  # (M,) int32 entrant indices
    b: np.ndarray
    margin: np.ndarray  # (M,) int16, from a's side
    sample: np.ndarray  # (M,) int8, battle index of the sample battle
    stages: list[np.ndarray] | None  # the reality show, entrant indices (round robin)
    every_pair_meets: bool

    @property
    def order(self) -> list[str]:
        """The entrants in standings order."""
        return [row["name"] for row in self.standings]

    @property
    def matches(self) -> int:
        return len(self.a)


def table(settled: Any, samples: Samples) -> Table:
    """The Table of a tournament's settled result (hill.store.records.SettledResult)."""
    result = settled.result
    names = list(result["entrants"])
    index = {name: i for i, name in enumerate(names)}
    rounds, start = [], 0
    for round_ in settled.rounds:
        rounds.append(Round(round_.number, round_.bye, start, start + len(round_.matches)))
        start += len(round_.matches)
    every = [match for round_ in settled.rounds for match in round_.matches]
    a = np.fromiter((index[m.a] for m in every), dtype=np.int32, count=len(every))
    b = np.fromiter((index[m.b] for m in every), dtype=np.int32, count=len(every))
    margins = np.fromiter((m.margin for m in every), dtype=np.int16, count=len(every))
    del every
    codes = [settled.programs[name] for name in names]
    sample = samples([codes[i] for i in a], [codes[i] for i in b], margins).astype(np.int8)
    stages = None
    if result.get("reality_show"):
        stages = [np.array([index[n] for n in s], dtype=np.int16) for s in result["reality_show"]]
    return Table(
        record=settled.summary,
        summary=tournament_data.summary(settled.summary),
        head={key: result[key] for key in ("format", "seed", "entrants", "ended")},
        standings=result["standings"],
        programs=settled.programs,
        names=names,
        rounds=rounds,
        a=a,
        b=b,
        margin=margins,
        sample=sample,
        stages=stages,
        every_pair_meets=tournament_format(result["format"]).every_pair_meets,
    )


def _pages(count: int, size: int) -> int:
    return max(1, -(-count // size))


def _page(number: int | None, pages: int) -> int:
    number = 1 if number is None else number
    if not 1 <= number <= pages:
        raise NotFound(f"no page {number}: pages 1 to {pages}")
    return number


def overview(
    t: Table, summary: dict[str, Any], standings_page: int | None, links: Any
) -> dict[str, Any]:
    """The tournament's page with its `summary` now; `links` builds the
    pieces' URLs (urls.Urls)."""
    pages = _pages(len(t.standings), STANDINGS_PAGE)
    page = _page(standings_page, pages)
    tid = t.summary["id"]
    rounds = [
        {
            "number": r.number,
            "bye": r.bye,
            "matches": [],
            "matches_count": r.stop - r.start,
            "pages": [
                links.tournament_round(tid, r.number, p)
                for p in range(1, _pages(r.stop - r.start, MATCHES_PAGE) + 1)
            ],
        }
        for r in t.rounds
    ]
    tiles = _pages(len(t.standings), TILE) if t.rounds and t.every_pair_meets else 0
    return {
        **summary,
        "paged": True,
        "tile": TILE,
        "result": {**t.head, "rounds": rounds, "standings": t.standings, "reality_show": None},
        "programs": t.programs,
        "samples": None,
        "crosstable": None,
        "thumbnails": False,
        "bump_chart": False,
        "eliminations": _eliminations(t),
        "standings_page": {
            "page": page,
            "pages": pages,
            "first_rank": (page - 1) * STANDINGS_PAGE + 1,
            "rows": t.standings[(page - 1) * STANDINGS_PAGE : page * STANDINGS_PAGE],
        },
        "pieces": {
            "standings": [links.tournament(tid, p) for p in range(1, pages + 1)],
            "rounds": [r["pages"] for r in rounds],
            "entrant": links.tournament_entrant(tid, "NAME"),
            "crosstable": [
                [links.tournament_crosstable(tid, row, column) for column in range(1, tiles + 1)]
                for row in range(1, tiles + 1)
            ],
            "reality_show": [
                links.tournament_stages(tid, p)
                for p in range(1, _pages(len(t.stages or ()), STAGES_PAGE) + 1)
            ]
            if t.stages
            else [],
        },
    }


def played(t: Table) -> dict[str, Any]:
    """What a played contest's page shows of a big tournament beside its
    standings (as tournament_data.detail's keys): the programs and the
    elimination order; its crosstable and sample battles are in its pieces."""
    return {
        "programs": t.programs,
        "samples": None,
        "crosstable": None,
        "thumbnails": False,
        "eliminations": _eliminations(t),
        "bump_chart": False,
    }


def _eliminations(t: Table) -> list[dict[str, object]] | None:
    return eliminations([[t.names[i] for i in s[-1:]] for s in t.stages]) if t.stages else None


def _match(t: Table, k: int) -> dict[str, Any]:
    return {
        "a": t.names[t.a[k]],
        "b": t.names[t.b[k]],
        "margin": int(t.margin[k]),
        **tournament_data.battle(int(t.sample[k])),
    }


def round_page(t: Table, number: int, page: int | None, links: Any) -> dict[str, Any]:
    """One page of a round's matches, in board order, each with its sample battle."""
    found = [r for r in t.rounds if r.number == number]
    if not found:
        raise NotFound(f"tournament {t.summary['id']} has no complete round {number}")
    r = found[0]
    pages = _pages(r.stop - r.start, MATCHES_PAGE)
    page = _page(page, pages)
    first = r.start + (page - 1) * MATCHES_PAGE
    tid = t.summary["id"]
    return {
        "tournament": t.summary,
        "round": number,
        "bye": r.bye,
        "page": page,
        "pages": pages,
        "first_board": first - r.start + 1,
        "matches": [_match(t, k) for k in range(first, min(first + MATCHES_PAGE, r.stop))],
        "programs": {
            t.names[i]: t.programs[t.names[i]]
            for k in range(first, min(first + MATCHES_PAGE, r.stop))
            for i in (t.a[k], t.b[k])
        },
        "previous": links.tournament_round(tid, number, page - 1) if page > 1 else None,
        "next": links.tournament_round(tid, number, page + 1) if page < pages else None,
    }


def entrant_page(t: Table, name: str) -> dict[str, Any]:
    """An entrant's matches in every round, from its side."""
    if name not in t.programs:
        raise NotFound(f"{name[:60]!r} is no entrant of tournament {t.summary['id']}")
    i = t.names.index(name)
    rows = []
    for r in t.rounds:
        span = slice(r.start, r.stop)
        for k in np.nonzero((t.a[span] == i) | (t.b[span] == i))[0] + r.start:
            left = t.a[k] == i
            rows.append(
                {
                    "round": r.number,
                    "board": int(k - r.start + 1),
                    "opponent": t.names[t.b[k] if left else t.a[k]],
                    "margin": int(t.margin[k] if left else -t.margin[k]),
                    **tournament_data.battle(int(t.sample[k])),
                }
            )
    standing = next(row for row in t.standings if row["name"] == name) if t.standings else None
    return {
        "tournament": t.summary,
        "name": name,
        "code": t.programs[name],
        "standing": standing,
        "matches": rows,
        "programs": {row["opponent"]: t.programs[row["opponent"]] for row in rows},
    }


def crosstable_tile(t: Table, row: int, column: int) -> dict[str, Any]:
    """Rows and columns of the crosstable in standings order, TILE by TILE:
    tile (row, column), each cell {margin, tape, polarity} or null."""
    if not (t.every_pair_meets and t.rounds):
        raise NotFound("the crosstable comes with a round robin, once every match is committed")
    order = t.order
    tiles = _pages(len(order), TILE)
    row, column = _page(row, tiles), _page(column, tiles)
    rows = order[(row - 1) * TILE : row * TILE]
    columns = order[(column - 1) * TILE : column * TILE]
    place = {t.names.index(name): j for j, name in enumerate(columns)}
    across = {t.names.index(name): i for i, name in enumerate(rows)}
    cells: list[list[dict[str, Any] | None]] = [[None] * len(columns) for _ in rows]
    for i_side, j_side, sign in ((t.a, t.b, 1), (t.b, t.a, -1)):
        wanted = np.isin(i_side, list(across)) & np.isin(j_side, list(place))
        for k in np.nonzero(wanted)[0]:
            cells[across[int(i_side[k])]][place[int(j_side[k])]] = {
                "margin": int(sign * t.margin[k]),
                **tournament_data.battle(int(t.sample[k])),
            }
    return {
        "tournament": t.summary,
        "tile": {"row": row, "column": column, "tiles": tiles, "size": TILE},
        "first_rank_row": (row - 1) * TILE + 1,
        "first_rank_column": (column - 1) * TILE + 1,
        "rows": rows,
        "columns": columns,
        "cells": cells,
        "programs": {name: t.programs[name] for name in {*rows, *columns}},
    }


def stages_page(t: Table, page: int | None) -> dict[str, Any]:
    """STAGES_PAGE stages of the reality show: each stage's ranking."""
    if not t.stages:
        raise NotFound("the reality show comes with a round robin, once every match is committed")
    pages = _pages(len(t.stages), STAGES_PAGE)
    page = _page(page, pages)
    first = (page - 1) * STAGES_PAGE
    return {
        "tournament": t.summary,
        "page": page,
        "pages": pages,
        "first_stage": first + 1,
        "reality_show": [
            [t.names[i] for i in stage] for stage in t.stages[first : first + STAGES_PAGE]
        ],
    }
