"""The documentation in docs/: every page the code cites exists, its links
resolve, and the examples worked by hand there agree with the code."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from hill import engine
from hill.rules import scoring, statistics
from hill.tournaments.criteria import swiss_standings
from hill.tournaments.match import MatchResult, Round
from hill.tournaments.round_robin import reality_show, standings

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# where the code cites the docs (the top-level README is not scanned for
# old names: it is rewritten around docs/ separately)
CODE = ("hill", "bot", "tests", "bench", "migrations", "scripts")
SOURCES = {".py", ".pyi", ".c", ".html", ".md", ".toml", ".txt", ".js", ".css"}
OLD_NAME = re.compile(r"(?<![/\w])(RULES|SCORING|TOURNAMENTS|STATISTICS|CONTESTS|ANALYTICS)\.md")
CITED = re.compile(r"docs/([a-z_]+\.md)")


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def code_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "config.example.toml"]
    for folder in CODE:
        files += [
            path
            for path in (ROOT / folder).rglob("*")
            if path.suffix in SOURCES
            and "__pycache__" not in path.parts
            and path.is_file()
            and path.parts[-2:] != ("tests", "test_docs.py")
        ]
    return files


def test_every_cited_page_exists_and_no_old_name_is_left() -> None:
    cited: set[str] = set()
    stale = []
    for path in code_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        cited.update(CITED.findall(text))
        if path.name != "README.md" or path.parent != ROOT:
            stale += [f"{path.relative_to(ROOT)}: {m}" for m in OLD_NAME.findall(text)]
    missing = sorted(name for name in cited if not (DOCS / name).is_file())
    assert not missing, f"cited but not in docs/: {missing}"
    assert {"scoring.md", "statistics.md", "tournaments.md", "rules.md"} <= cited
    assert not stale, f"specs cited by their old names (use docs/...): {stale}"


def test_links_between_pages_resolve() -> None:
    pages = sorted(DOCS.glob("*.md"))
    assert {p.name for p in pages} >= {
        "README.md", "rules.md", "scoring.md", "statistics.md", "ladder.md",
        "tournaments.md", "contests.md", "analytics.md",
    }  # fmt: skip
    index = page("README.md")
    for p in pages:
        if p.name != "README.md":
            assert f"]({p.name})" in index, f"docs/README.md does not list {p.name}"
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", p.read_text(encoding="utf-8")):
            if "://" not in target:
                assert (p.parent / target).exists(), f"{p.name} links to missing {target}"


def bold_triple(values: np.ndarray, names: str = "ABCD") -> str:
    return ", ".join(f"{n} {v:.2f}" for n, v in zip(names, values, strict=False))


def test_the_scoring_examples_are_what_the_code_computes() -> None:
    text = page("scoring.md")
    wins = np.array([[0, 28, 18], [14, 0, 35], [24, 7, 0]])
    scores = scoring.score_all(wins, 42)
    for method in ("markov", "trad", "tradtwist"):
        assert f"**{bold_triple(scores[method])}**" in text, method
    assert scores["markov"] == pytest.approx(1000 * np.array([115, 113, 67]) / 295)
    assert scores["points"] == pytest.approx([46 / 21, 7 / 3, 31 / 21])
    margin = {(0, 1): 10, (0, 2): 30, (1, 2): 20, (1, 3): 6, (2, 3): 14, (3, 0): 8}
    wins4 = np.zeros((4, 4), dtype=int)
    for (a, b), m in margin.items():
        wins4[a, b], wins4[b, a] = (42 + m) // 2, (42 - m) // 2
    assert f"**{bold_triple(scoring.score(wins4, 42, 'iter'))}**" in text
    # the page's own snippet runs as written
    snippet = re.search(r"```python\n(.*?)```", text, re.S)
    assert snippet is not None
    exec(compile(snippet.group(1), "docs/scoring.md", "exec"), {})


def test_the_battle_worked_by_hand() -> None:
    text = page("rules.md")
    rush = engine.compile_program("(>)*9([-]>)*21")
    idle = engine.compile_program(".")
    for tape in (10, 11, 30):
        battle = engine.trace(rush, idle, tape)
        assert battle.outcome == 1 and battle.cycles == 2 * tape + 246
        assert str(battle.cycles) in text
    assert str(engine.joust(rush, idle)) == "<" * 21 + " " + "<" * 21 + " 42"
    assert str(engine.joust(rush, idle)) in text
    with pytest.raises(engine.ParseError):
        engine.compile_program("(+[)*5]")


def test_the_statistics_examples() -> None:
    text = " ".join(page("statistics.md").split())
    hill = {(0, 1): (30, 12, 0), (0, 2): (42, 0, 0), (1, 2): (21, 0, 21)}
    outcomes = np.stack(
        [np.array([1] * w + [0] * t + [-1] * lost, dtype=np.int8) for w, t, lost in hill.values()]
    )
    record = statistics.Record(3, np.array(list(hill)), outcomes)
    stats = statistics.compute(record, [0, 1, 2], statistics.method_scorer("points"))
    for name, value in zip("ABC", stats.tapl, strict=True):
        assert f"TAPL_{name} = {value:.1f}" in text
    assert stats.qooa.tolist() == [1.0, 1.0, 1.0]
    assert "102/84 = 1.21" in text and stats.games_behind[1] == pytest.approx(102 / 84)


def test_the_tournament_examples() -> None:
    text = page("tournaments.md")
    matches = [
        MatchResult("A", "B", 10), MatchResult("A", "C", 30), MatchResult("B", "C", 20),
        MatchResult("B", "D", 6), MatchResult("C", "D", 14), MatchResult("D", "A", 8),
    ]  # fmt: skip
    assert [row.name for row in standings("ABCD", matches)] == ["A", "B", "D", "C"]
    stages = reality_show("ABCD", matches)
    assert stages == [["A", "B", "D", "C"], ["A", "D", "B"], ["D", "A"], ["D"]]
    for number, stage in enumerate(stages[:3], 1):
        assert f"stage {number} is {', '.join(stage)}" in text.replace("\n", " ")
    rounds = [
        Round(1, "E", (MatchResult("A", "B", 12), MatchResult("C", "D", 0))),
        Round(2, "B", (MatchResult("A", "C", 20), MatchResult("E", "D", 0))),
    ]
    rows = swiss_standings("ABCDE", rounds)
    table = [line for line in text.splitlines() if re.match(r"\| [A-E] \| [0-9]", line)]
    assert [line[2] for line in table] == [row.name for row in rows] == list("AEDBC")
    for line, row in zip(table, rows, strict=True):
        cells = [cell.split("=")[-1].split()[-1] for cell in line.strip("| ").split(" | ")[1:]]
        expected = (row.score, row.buchholz, row.neustadtl, row.cumulative, row.opp_cumulative)
        assert [float(c) for c in cells[:5]] == list(expected), row.name
        assert int(cells[5]) == row.wins
