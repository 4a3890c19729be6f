"""The Swiss criteria (docs/tournaments.md "Swiss", the criteria table), over plain rounds.

Every criterion is "higher is better"; the standings order by the criteria
in the configured order, then by name. A rematch is one more match against
the same opponent: its score counts again in every criterion (spec: "its
score again in every criterion"), so opponents are a list, not a set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace

from hill.tournaments.match import Round

CRITERIA = ("score", "buchholz", "neustadtl", "cumulative", "opp_cumulative", "wins")
BYE_SCORE = 1.0  # spec: "A bye scores 1.0 and counts as a played round"


def parse_criteria(text: str) -> tuple[str, ...]:
    """`score,buchholz,...`: some of the six criteria, each at most once."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in CRITERIA]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(
            f"criteria must be distinct names among {', '.join(CRITERIA)}; got {text!r}"
        )
    return names


def median_buchholz(opponent_scores: Sequence[float]) -> float:
    """Sum of the opponents' scores less the extremes (one match: one entry)."""
    scores = sorted(opponent_scores)
    # spec: leave out the highest and lowest with 3 to 8 opponents, two of each
    # with 9 or more; with 0 to 2 opponents it names no cut, so nothing is left out
    cut = 2 if len(scores) >= 9 else 1 if len(scores) >= 3 else 0
    return sum(scores[cut : len(scores) - cut])


@dataclass
class _Record:
    """What the criteria are computed from, for one entrant."""

    results: list[tuple[str, float]] = field(default_factory=list)  # (opponent, match score)
    byes: int = 0
    running: float = 0.0  # score so far
    cumulative: float = 0.0

    @property
    def wins(self) -> int:
        return sum(1 for _, score in self.results if score == 1.0)

    @property
    def draws(self) -> int:
        return sum(1 for _, score in self.results if score == 0.5)

    @property
    def losses(self) -> int:
        return sum(1 for _, score in self.results if score == 0.0)


@dataclass(frozen=True)
class SwissRow:
    """One entrant's line of the Swiss standings, with every criterion."""

    rank: int
    name: str
    score: float
    buchholz: float
    neustadtl: float
    cumulative: float
    opp_cumulative: float
    wins: int
    draws: int
    losses: int
    byes: int

    def criterion(self, name: str) -> float:
        return float(getattr(self, name))

    def to_json(self) -> dict[str, object]:
        """The row of the tool contract: the fields above, in their order."""
        return asdict(self)


def _records(entrants: Iterable[str], rounds: Iterable[Round]) -> dict[str, _Record]:
    records = {name: _Record() for name in entrants}
    for round_ in rounds:
        if round_.bye is not None:
            # a bye has no opponent (spec): it is in the score and the
            # cumulative score, and in no opponent-based criterion
            records[round_.bye].byes += 1
            records[round_.bye].running += BYE_SCORE
        for match in round_.matches:
            for name in (match.a, match.b):
                score = match.score_of(name)
                records[name].results.append((match.opponent_of(name), score))
                records[name].running += score
        for record in records.values():  # spec: running score after each round, summed
            record.cumulative += record.running
    return records


def swiss_standings(
    entrants: Iterable[str], rounds: Iterable[Round], order: Sequence[str] = CRITERIA
) -> list[SwissRow]:
    """Every entrant's criteria after `rounds`, ranked by `order`, then name.

    During the tournament the opponents' "final" scores are their scores so far.
    """
    records = _records(entrants, rounds)
    score = {name: record.running for name, record in records.items()}
    rows = [
        SwissRow(
            rank=0,
            name=name,
            score=record.running,
            buchholz=median_buchholz([score[opponent] for opponent, _ in record.results]),
            # beaten opponents' scores, plus half of those drawn: the match score weighs each
            neustadtl=sum(result * score[opponent] for opponent, result in record.results),
            cumulative=record.cumulative,
            opp_cumulative=sum(records[opponent].cumulative for opponent, _ in record.results),
            wins=record.wins,
            draws=record.draws,
            losses=record.losses,
            byes=record.byes,
        )
        for name, record in records.items()
    ]
    rows.sort(key=lambda row: (*(-row.criterion(c) for c in order), row.name))
    return [replace(row, rank=rank) for rank, row in enumerate(rows, 1)]
