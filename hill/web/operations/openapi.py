"""The web report's JSON API described in OpenAPI 3.0, served at /api/openapi.json.

Hand-written data: every JSON twin of PATHS (its `NAME-json` routes) and the
Lab's `lab-json` (GET) and `lab-rank` (POST), each with its parameters, its
answer's schema (the field names exactly as the views write them: other
tools read them) and its error answers (`{"error": ..., "status": N}`).
The suite validates this description (openapi-spec-validator) and fuzzes a
real `bfjoust web` with it (schemathesis): tests/test_web_openapi.py.
Imports hill.web.urls and hill.web.builds only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from aiohttp import web

from hill.web.builds import json_response
from hill.web.urls import PATHS

Schema = dict[str, Any]


NUM: Schema = {"type": "number"}
INT: Schema = {"type": "integer"}
STR: Schema = {"type": "string"}
BOOL: Schema = {"type": "boolean"}
ANY: Schema = {}


def nullable(schema: Schema) -> Schema:
    return {**schema, "nullable": True}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def obj(properties: dict[str, Schema], optional: tuple[str, ...] = ()) -> Schema:
    """An object with these fields, each always there but the `optional` ones."""
    required = [name for name in properties if name not in optional]
    schema: Schema = {"type": "object", "properties": properties}
    return schema | {"required": required} if required else schema


def one_of(*schemas: Schema) -> Schema:
    return {"anyOf": list(schemas)}


# programs by name: their code hashes
CODES: Schema = {"type": "object", "additionalProperties": STR}
# one side of a changed file: its size and code hash
SIDE = obj({"bytes": INT, "hash": STR})

# a hill event as every state's answer names it (null: the empty hill)
EVENT = nullable(
    obj(
        {
            "id": NUM,
            "time": STR,
            "kind": STR,
            "actor": STR,
            "summary": STR,
            "commit": nullable(STR),
            "program": nullable(STR),
            "displaced": nullable(STR),
            "size": NUM,
            "contest": nullable(STR),
        }
    )
)

# a program's profile: its page's analytics (the program page and a -test page alike)
# the six ways of ranking, in the standings' order
METHODS = ("markov", "points", "trad", "tradtwist", "iter", "itertwist")
# numbers by tape length and polarity: a list a side
SIDES = obj({"sieve": array(NUM), "kettle": array(NUM)})
BATTLE = {"tape": NUM, "polarity": STR}  # a match's sample battle
STATS = obj(
    {
        "wins": NUM,
        "ties": NUM,
        "losses": NUM,
        "jousts": NUM,
        "tapl": NUM,
        "tazd": NUM,
        "qooa": NUM,
        "pprg": NUM,
        "games_behind": NUM,
        "rank_low": NUM,
        "rank_high": NUM,
    }
)

# a program's profile: its own answer (profile-json) and a part of others
PROFILE_FIELDS: dict[str, Schema] = {
    "program": STR,
    "code": STR,
    "jousts": NUM,
    "waiting": array(ANY),
    "tapes": array(NUM),
    "heat": nullable(array(array(NUM))),
    "decoys": nullable(obj({"by_tape": array(array(NUM)), "cells": array(NUM)})),
    "duels": array(obj({"program": STR, "rank": NUM, "median": NUM, "low": NUM, "high": NUM})),
    "losses": nullable(
        obj(
            {
                "flag": SIDES,
                "off_tape": SIDES,
                "tied_limit": SIDES,
                "total": obj({"flag": NUM, "off_tape": NUM, "tied_limit": NUM}),
            }
        )
    ),
    "problems": array(
        obj(
            {
                "program": STR,
                "rank": NUM,
                "code": STR,
                "lost": NUM,
                "flag": NUM,
                "off_tape": NUM,
                "reason": STR,
                "sample": obj(BATTLE),
            }
        )
    ),
    "alike": array(obj({"program": STR, "rank": NUM, "distance": NUM})),
}
PROFILE = obj(PROFILE_FIELDS)

# a program's breakdown against every other: program-json and a trial's test-json
OPPONENT: dict[str, Schema] = {
    "program": STR,
    "rank": NUM,
    "margin": NUM,
    "outcomes": array(NUM),
    "line": STR,
}


def _breakdown(opponent: dict[str, Schema], versions: dict[str, Schema]) -> Schema:
    """The breakdown with more fields an opponent and these before `departed`."""
    return obj(
        {
            "event": EVENT,
            "program": STR,
            "rank": NUM,
            "stats": STATS,
            "tapes": array(NUM),
            "opponents": array(obj(OPPONENT | opponent)),
            "wins": SIDES,
            "ties": SIDES,
            "losses": SIDES,
            "worst": array(obj({"tape": NUM, "polarity": STR, "losses": NUM})),
            **versions,
            "departed": ANY,
            "profile": PROFILE,
        }
    )


def _strategy(pool: dict[str, Schema]) -> Schema:
    """A pool's families (strategy-json and its twins), the pool named by `pool`."""
    return obj(
        {
            "event": EVENT,
            "pool": STR,
            **pool,
            "size": NUM,
            "shown": NUM,
            "method": obj({"features": array(STR), "linkage": STR, "metric": STR}),
            "programs": array(STR),
            "ranks": array(NUM),
            "families": array(NUM),
            "linkage": array(array(NUM)),
            "dendrogram": obj(
                {"icoord": array(array(NUM)), "dcoord": array(array(NUM)), "families": array(NUM)}
            ),
            "margins": array(array(nullable(NUM))),
            "duels": array(array(nullable(NUM))),
            "waiting": array(ANY),
            "complete": BOOL,
        }
    )


# a tournament's summary, on its own (tournaments-json) and atop its answers
SUMMARY_FIELDS: dict[str, Schema] = {
    "id": NUM,
    "format": STR,
    "pool": STR,
    "started_by": STR,
    "created_at": STR,
    "finished_at": nullable(STR),
    "entrants": NUM,
    "rounds_played": NUM,
    "rounds_planned": NUM,
    "matches_committed": NUM,
    "matches_expected": NUM,
    "leader": nullable(STR),
    "ended": nullable(STR),
    "running": BOOL,
    "complete": BOOL,
    "winner": nullable(STR),
    "percent": NUM,
}
SUMMARY = obj(SUMMARY_FIELDS)
ROUNDS = array(
    obj(
        {
            "number": NUM,
            "bye": nullable(STR),
            "matches": array(obj({"a": STR, "b": STR, "margin": NUM})),
        }
    )
)
# a standing's fields in every tournament (a format adds its tie-breaks)
STANDING: dict[str, Schema] = {
    "rank": NUM,
    "name": STR,
    "wins": NUM,
    "draws": NUM,
    "losses": NUM,
    "score": NUM,
    "points": NUM,
    "win_share": NUM,
}


def _played(maybe: Callable[[Schema], Schema]) -> dict[str, Schema]:
    """A played tournament's codes and pictures (`maybe`: nullable in a contest)."""
    return {
        "programs": maybe(CODES),
        "samples": maybe(array(array(obj(BATTLE)))),
        "crosstable": nullable(
            obj(
                {
                    "names": array(STR),
                    "rows": array(array(nullable(obj({"margin": NUM} | BATTLE)))),
                }
            )
        ),
        "thumbnails": maybe(BOOL),
        "eliminations": nullable(array(obj({"stage": NUM, "name": STR, "place": NUM}))),
        "bump_chart": maybe(BOOL),
    }


ANSWERS: dict[str, Schema] = {
    "standings-json": obj(
        {
            "event": EVENT,
            "ranking_method": STR,
            "commit": STR,
            "size": NUM,
            "methods": array(STR),
            "programs": array(
                obj(
                    {
                        "name": STR,
                        "owner": STR,
                        "full_name": STR,
                        "rank": NUM,
                        "previous_rank": nullable(NUM),
                        "points": NUM,
                        "scores": obj(dict.fromkeys(METHODS, NUM)),
                        "submitted": STR,
                        "stats": STATS,
                        "change": nullable(NUM),
                        "age": NUM,
                    }
                )
            ),
            "results": array(array(array(NUM))),
            "progs": array(STR),
            "prevrank": array(nullable(NUM)),
            "scores": obj(dict.fromkeys(METHODS, obj({"max": NUM, "score": array(NUM)}))),
            "scoringMethod": STR,
        }
    ),
    "matrix-json": obj({"event": EVENT, "programs": array(STR), "margins": array(array(NUM))}),
    "program-json": _breakdown(
        {},
        {
            "versions": array(
                obj(
                    {
                        "number": NUM,
                        "id": NUM,
                        "submitted": STR,
                        "bytes": NUM,
                        "hash": STR,
                        "status": STR,
                        "left": ANY,
                        "left_reason": ANY,
                        "event": EVENT,
                        "rank": NUM,
                        "diff": ANY,
                    }
                )
            )
        },
    ),
    "pair-json": obj(
        {
            "event": EVENT,
            "left": STR,
            "right": STR,
            "left_rank": NUM,
            "right_rank": NUM,
            "margin": NUM,
            "line": STR,
            "battles": array(obj({"tape": NUM, "polarity": STR, "outcome": NUM})),
        }
    ),
    "history-json": obj({"changes": array(EVENT), "names": array(STR)}),
    "series-json": obj(
        {
            "program": STR,
            "points": array(
                obj(
                    {
                        "event": NUM,
                        "time": STR,
                        "rank": NUM,
                        "size": NUM,
                        "score": NUM,
                        "points": NUM,
                    }
                )
            ),
        }
    ),
    "battle-json": obj(
        {
            "tape_length": NUM,
            "polarity": STR,
            "outcome": NUM,
            "winner": nullable(STR),
            "reason": STR,
            "summary": STR,
            "cycles": NUM,
            "piece_states": NUM,
            "pieces": NUM,
            "encoding": STR,
            "from": NUM,
            "count": NUM,
            "tape": STR,
            "changes": STR,
            "cells": STR,
            "values": STR,
            "left_pointer": STR,
            "right_pointer": STR,
            "left_source": STR,
            "right_source": STR,
            "overview": obj(
                {"cycles": array(NUM), "tapes": STR, "left_pointer": STR, "right_pointer": STR}
            ),
        }
    ),
    "source-json": obj({"event": EVENT, "program": STR, "bytes": NUM, "code": STR}),
    "commit-json": obj(
        {
            "event": EVENT,
            "commit": obj(
                {
                    "sha": STR,
                    "short": STR,
                    "parents": array(STR),
                    "author": STR,
                    "email": STR,
                    "time": STR,
                    "title": STR,
                    "message": STR,
                }
            ),
            "programs": array(
                obj(
                    {
                        "program": STR,
                        "status": STR,
                        "old": nullable(SIDE),
                        "new": nullable(SIDE),
                        "diff": obj(
                            {
                                "hunks": array({"type": "object"}),
                                "changes": INT,
                                "deleted": INT,
                                "inserted": INT,
                                "whole": BOOL,
                                "truncated": BOOL,
                            }
                        ),
                    }
                )
            ),
            "other_files": array(obj({"path": STR, "status": STR})),
            "standings": obj(
                {
                    "before": nullable(NUM),
                    "moves": array(
                        obj(
                            {
                                "program": STR,
                                "before": nullable(NUM),
                                "after": nullable(NUM),
                                "points_before": nullable(NUM),
                                "points_after": nullable(NUM),
                                "move": STR,
                                "places": NUM,
                                "updated": BOOL,
                            }
                        )
                    ),
                }
            ),
        }
    ),
    # null until the all-time ladder is first fitted (then with `programs`)
    "ladder-json": obj(
        {
            "ladder": nullable(
                obj(
                    {
                        "pool": INT,
                        "pairs": INT,
                        "jousts_played": INT,
                        "ranking": array(
                            obj(
                                {
                                    "rank": INT,
                                    "name": STR,
                                    "rating": NUM,
                                    "rating_low": NUM,
                                    "rating_high": NUM,
                                    "jousts": INT,
                                    "stats": {"type": "object"},
                                    "program": STR,
                                    "version": INT,
                                    "on_hill": BOOL,
                                }
                            )
                        ),
                        "computed_at": STR,
                        "standing_jousts": INT,
                        "ladder_jousts": INT,
                        "waiting": array(ANY),
                    }
                )
            ),
            "programs": array(
                obj(
                    {
                        "program": STR,
                        "versions": array(
                            obj(
                                {
                                    "version": INT,
                                    "name": STR,
                                    "rank": INT,
                                    "rating": NUM,
                                    "on_hill": BOOL,
                                }
                            )
                        ),
                    }
                )
            ),
        },
        optional=("programs",),
    ),
    "tournaments-json": obj({"tournaments": array(SUMMARY)}),
    "tournament-json": obj(
        SUMMARY_FIELDS
        | {
            "result": obj(
                {
                    "format": STR,
                    "seed": nullable(NUM),
                    "entrants": array(STR),
                    "ended": nullable(STR),
                    "rounds": ROUNDS,
                    "standings": array(
                        obj(
                            STANDING
                            | {
                                "buchholz": NUM,
                                "neustadtl": NUM,
                                "cumulative": NUM,
                                "opp_cumulative": NUM,
                                "byes": NUM,
                            },
                            optional=(
                                "points",
                                "win_share",
                                "buchholz",
                                "neustadtl",
                                "cumulative",
                                "opp_cumulative",
                                "byes",
                            ),
                        )
                    ),
                    "reality_show": array(array(STR)),
                },
                optional=("reality_show",),
            ),
        }
        | _played(lambda schema: schema)
    ),
    "contests-json": obj(
        {
            "now": STR,
            "contests": array(
                obj(
                    {
                        "name": STR,
                        "title": STR,
                        "format": STR,
                        "closes": STR,
                        "state": STR,
                        "seconds_left": NUM,
                        "entrants": NUM,
                        "winner": nullable(STR),
                        "void_reason": nullable(STR),
                    }
                )
            ),
        }
    ),
    "contest-json": obj(
        {
            "name": STR,
            "title": STR,
            "format": STR,
            "closes": STR,
            "state": STR,
            "entries": array(obj({"owner": STR, "entered": STR, "code_hash": nullable(STR)})),
            "controls": array(ANY),
            "tournament": nullable(
                obj(
                    {
                        "format": STR,
                        "seed": nullable(INT),
                        "entrants": array(STR),
                        "ended": nullable(STR),
                        "rounds": ROUNDS,
                        "standings": array(obj(STANDING)),
                        "reality_show": array(array(STR)),
                    }
                )
            ),
            "winner": nullable(STR),
            "seconds_left": NUM,
            "entrants": NUM,
            "void_reason": nullable(STR),
            "control_entries": array(ANY),
            "now": STR,
            "created_at": STR,
            "created_by": STR,
            "closed_at": nullable(STR),
            "closed_by": nullable(STR),
            "tournament_id": nullable(NUM),
            "standings": nullable(array(obj(STANDING | {"place": NUM, "control": BOOL}))),
            "progress": nullable(
                obj({"matches_committed": NUM, "matches_expected": NUM, "percent": NUM})
            ),
            "recompute": nullable(obj({"clone": STR, "folder": STR, "command": STR})),
        }
        | _played(nullable)
    ),
    "test-json": _breakdown(
        {"code": STR},
        {
            "trial": obj({"token": STR, "owner": STR, "code": STR, "expires": STR}),
            "versions": array(ANY),
        },
    ),
    "profile-json": obj({"event": EVENT} | PROFILE_FIELDS),
    "strategy-json": _strategy({}),
    "test-strategy-json": _strategy({"trial": STR}),
    "tournament-strategy-json": _strategy({"tournament": NUM}),
    "lab-json": obj(
        {
            "event": EVENT,
            "method": STR,
            "battles": NUM,
            "programs": array(
                obj(
                    {
                        "name": STR,
                        "rank": NUM,
                        "points": NUM,
                        "score": NUM,
                        "hash": STR,
                        "code": STR,
                    }
                )
            ),
            "outcomes": STR,
        }
    ),
}

# a big tournament's pieces (hill/web/tournaments/pieces.py): served only for
# a tournament over PAGED_ENTRANTS entrants or PAGED_MATCHES matches (404 else)
ANSWERS |= {
    "tournament-round-json": obj(
        {
            "tournament": SUMMARY,
            "round": INT,
            "bye": nullable(STR),
            "page": INT,
            "pages": INT,
            "first_board": INT,
            "matches": array(obj({"a": STR, "b": STR, "margin": INT})),
            "programs": CODES,
            "previous": nullable(STR),
            "next": nullable(STR),
        }
    ),
    "tournament-entrant-json": obj(
        {
            "tournament": SUMMARY,
            "name": STR,
            "code": STR,
            "standing": nullable({"type": "object"}),
            "matches": array(obj({"round": INT, "board": INT, "opponent": STR, "margin": INT})),
            "programs": CODES,
        }
    ),
    "tournament-crosstable-json": obj(
        {
            "tournament": SUMMARY,
            "tile": obj({"row": INT, "column": INT, "tiles": INT, "size": INT}),
            "first_rank_row": INT,
            "first_rank_column": INT,
            "rows": array(STR),
            "columns": array(STR),
            "cells": array(array(nullable(obj({"margin": INT})))),
            "programs": CODES,
        }
    ),
    "tournament-stages-json": obj(
        {
            "tournament": SUMMARY,
            "page": INT,
            "pages": INT,
            "first_stage": INT,
            "reality_show": array(array(STR)),
        }
    ),
    # the Lab's rankings: one answer a run (hill/web/lab/views._rank_run)
    "lab-rank": obj(
        {
            "event": EVENT,
            "results": array(
                obj(
                    {
                        "rank": INT,
                        "size": INT,
                        "points": NUM,
                        "score": NUM,
                        "scores": {"type": "object", "additionalProperties": NUM},
                        "method": STR,
                        "summary": STR,
                        "printed": obj({"points": STR, "score": STR}),
                        "displaced": nullable(STR),
                        "worst": array(obj({"name": STR, "margin": NUM})),
                    }
                )
            ),
        }
    ),
}

ERROR = obj({"error": STR, "status": INT})


def _query(name: str, about: str, schema: Schema = STR) -> Schema:
    return {"name": name, "in": "query", "required": False, "description": about, "schema": schema}


EVENT_PARAM = _query("event", "a past hill state, by its event id (default: the current one)", INT)
PAGE = _query("page", "the page, from 1", INT)
STATEFUL = (EVENT_PARAM,)
# each answer's query parameters (path parameters come from PATHS)
# how a page follows its contests (hill/web/tournaments/contests.py, watch_key)
SEEN = _query(
    "seen",
    "where the asker's page says the contests stand (each NAME:STATE, sorted, then "
    "`progress:N`, the matches committed): the answer waits until they stand "
    "otherwise, 25 s at most",
)
QUERIES: dict[str, tuple[Schema, ...]] = {
    "standings-json": STATEFUL,
    "matrix-json": STATEFUL,
    "program-json": STATEFUL,
    "pair-json": STATEFUL,
    "source-json": STATEFUL,
    "profile-json": STATEFUL,
    "strategy-json": STATEFUL,
    "lab-json": STATEFUL,
    "lab-rank": STATEFUL,
    "battle-json": (
        EVENT_PARAM,
        _query("left", "the left program's full name (default: the top program)"),
        _query("right", "the right program's full name (default: the second)"),
        _query("left_code", "the left program by code hash (any program ever submitted)"),
        _query("right_code", "the right program by code hash"),
        _query("tape", "the tape length (default: the shortest)", INT),
        _query("polarity", "the polarity (default: the first)", {"enum": ["sieve", "kettle"]}),
        _query("from", "the first state of this piece (a multiple of piece_states)", INT),
    ),
    "contests-json": (SEEN,),
    "contest-json": (SEEN,),
    "tournament-json": (PAGE,),
    "tournament-round-json": (PAGE,),
    "tournament-stages-json": (PAGE,),
    "tournament-crosstable-json": (
        _query("rows", "the tile's row, from 1", INT),
        _query("columns", "the tile's column, from 1", INT),
    ),
}
PATH_PARAMS = {
    "name": "a program's full name, owner.name",
    "other": "the other program's full name",
    "id": "a tournament's number",
    "round": "a round's number",
    "sha": "a commit id of the hill's history",
    "token": "a `-test` trial's token",
}
SUMMARIES = {
    "standings-json": "The standings of a hill state",
    "matrix-json": "The matrix of margins of a hill state",
    "program-json": "A program's breakdown against every other",
    "pair-json": "Two programs' battles, tape by tape",
    "history-json": "Every change of the hill",
    "series-json": "A program's rank and score over time",
    "battle-json": "A battle's trace, in pieces",
    "source-json": "A program's code",
    "commit-json": "A commit of the hill's history",
    "ladder-json": "The all-time ladder (null until it is fitted)",
    "tournaments-json": "The hill's tournaments",
    "tournament-json": "A tournament: its summary, standings and rounds",
    "tournament-round-json": "A page of a big tournament's round",
    "tournament-entrant-json": "A big tournament's matches of one entrant",
    "tournament-crosstable-json": "A tile of a big round robin's crosstable",
    "tournament-stages-json": "A page of a big round robin's reality show",
    "contests-json": "The hill's contests",
    "contest-json": "A contest (an open one never shows its entries' code)",
    "test-json": "A `-test` trial's result (410 once expired)",
    "profile-json": "A program's profile: heat map, decoys, duels",
    "strategy-json": "The hill's strategy map",
    "test-strategy-json": "The strategy map of the hill a trial met, with it",
    "tournament-strategy-json": "The strategy map of a tournament's entrants",
    "lab-json": "A hill state's programs, sources and outcomes, for the Lab",
    "lab-rank": "Outcomes the Lab played ranked against a hill state, as -test would",
}
LAB_RANK_BODY = obj(
    {
        "name": STR,
        "runs": array(array(STR)),
    },
    optional=("name",),
)


def _path(route: str) -> str:
    """The aiohttp path as OpenAPI writes it: `{name:[^/]+}` as `{name}`."""
    return re.sub(r"\{(\w+)(?::[^{}]*(?:\{[^{}]*\}[^{}]*)*)?\}", r"{\1}", PATHS[route])


def _error(about: str) -> Schema:
    return {"description": about, "content": {"application/json": {"schema": ERROR}}}


def _operation(route: str) -> Schema:
    path_names = re.findall(r"\{(\w+)\}", _path(route))
    parameters = [
        {"name": n, "in": "path", "required": True, "description": PATH_PARAMS[n], "schema": STR}
        for n in path_names
    ]
    responses = {
        "200": {
            "description": "the answer",
            "content": {"application/json": {"schema": ANSWERS[route]}},
        },
        "404": _error("no such program, state, tournament ... (or a malformed number)"),
        "503": _error("too much work under way, or the storage failing: retry later"),
    }
    if route == "test-json":
        responses["410"] = _error("the trial's page expired")
    operation: Schema = {
        "operationId": route,
        "summary": SUMMARIES[route],
        "parameters": parameters + list(QUERIES.get(route, ())),
        "responses": responses,
    }
    if route == "lab-rank":
        operation["requestBody"] = {
            "required": True,
            "description": "runs: per run one row per program of the state, each row "
            "42 characters of + - 0 (the battles' outcomes, from the named program's side)",
            "content": {"application/json": {"schema": LAB_RANK_BODY}},
        }
        responses["400"] = _error("a body that is not such runs")
        responses["413"] = _error("a body too big")
    return operation


def described() -> list[str]:
    """The routes described: every JSON twin, and the Lab's."""
    return [r for r in PATHS if r.endswith("-json") and r != "openapi-json"] + ["lab-rank"]


def description() -> Schema:
    """The OpenAPI document."""
    paths: Schema = {}
    for route in described():
        method = "post" if route == "lab-rank" else "get"
        paths.setdefault(_path(route), {})[method] = _operation(route)
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "BF Joust hill web report",
            "version": "1",
            "description": "The JSON twins of the web report's pages (README: the web report).",
        },
        "paths": paths,
    }


async def openapi(_request: web.Request) -> web.Response:
    return json_response(description())
