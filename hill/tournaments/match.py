"""A match: a joust's margin m[a,b] read as a win, a draw or a loss.

docs/tournaments.md "Match": a wins when m[a,b] > 0, a draw when m[a,b] = 0;
1 for a win, 0.5 for a draw, 0 for a loss. m[b,a] = -m[a,b].
"""

from __future__ import annotations

from dataclasses import dataclass


def match_score(margin: int) -> float:
    """The score of the side whose margin this is."""
    return 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0


@dataclass(frozen=True, slots=True)  # slots: a round robin of 1,000 has half a million
class MatchResult:
    """A played match: a against b with the margin m[a,b] from a's side."""

    a: str
    b: str
    margin: int

    def margin_of(self, name: str) -> int:
        """The margin from `name`'s side (m[b,a] = -m[a,b])."""
        if name == self.a:
            return self.margin
        if name == self.b:
            return -self.margin
        raise ValueError(f"{name!r} did not play in {self.a!r} vs {self.b!r}")

    def opponent_of(self, name: str) -> str:
        return self.b if name == self.a else self.a

    def score_of(self, name: str) -> float:
        return match_score(self.margin_of(name))

    def to_json(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "margin": self.margin}


@dataclass(frozen=True)
class Round:
    """A round's played matches and the entrant that sat it out (a bye), if any."""

    number: int
    bye: str | None
    matches: tuple[MatchResult, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "number": self.number,
            "bye": self.bye,
            "matches": [match.to_json() for match in self.matches],
        }
