"""Old databases keep working: a real hill of schema 0002 (jousts by program
id), made by the code of that time (tests/data/hill-0002/make.py), is
upgraded to jousts kept by content, and reads and plays as before."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import sqlalchemy
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import select
from support.reference import REFERENCE

from hill import engine
from hill.config import HillSettings
from hill.engine import arena
from hill.errors import HillError
from hill.rules.reports import json_report, text_report
from hill.rules.requests import Outcome, answer_text
from hill.rules.statistics import STATS_FIELDS
from hill.store.database import Database, migrations_config, schema_revision
from hill.store.queries import HillQueries
from hill.store.requests import RequestBook
from hill.store.tables import Base, Joust, ProgramRow
from hill.writers.hill import Hill

FIXTURE = REFERENCE.parent / "hill-0002"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder holding the 0002 database (and no git repository)."""
    folder = tmp_path / "var"
    folder.mkdir()
    shutil.copy(FIXTURE / "hill.sqlite3", folder / "hill.sqlite3")
    return folder


def old_jousts(path: Path) -> dict[tuple[str, str], bytes]:
    """The 0002 jousts, as they should be kept by content: the lower hash on the left."""
    database = sqlite3.connect(path)
    hashes = {i: hashlib.sha256(c).hexdigest() for i, c in database.execute(
        "SELECT id, code FROM programs")}  # fmt: skip
    kept = {}
    for left_id, right_id, outcomes in database.execute("SELECT * FROM jousts"):
        left, right = hashes[left_id], hashes[right_id]
        if left > right:
            left, right, outcomes = right, left, bytes(2 - b for b in outcomes)
        assert kept.setdefault((left, right), outcomes) == outcomes
    database.close()
    return kept


def new_jousts(hill: Hill) -> dict[tuple[str, str], bytes]:
    with hill.db.session() as session:
        rows = session.execute(select(Joust.left_hash, Joust.right_hash, Joust.outcomes))
        return {(left, right): outcomes for left, right, outcomes in rows}


def test_a_0002_hill_is_upgraded_and_reads_as_before(data: Path) -> None:
    expected_jousts = old_jousts(data / "hill.sqlite3")
    # two programs of the same code shared the hill: their joust is (h, h)
    assert any(left == right for left, right in expected_jousts)
    hill = Hill(HillSettings(data_dir=data, size=6), jobs=2)
    assert hill.db.revision() == schema_revision()
    with hill.db.session() as session:
        for program in session.scalars(select(ProgramRow)):
            assert program.code_hash == hashlib.sha256(program.code).hexdigest()
    assert new_jousts(hill) == expected_jousts
    # every moved joust is what the engine plays, from the lower hash's side
    with hill.db.session() as session:
        code = {h: c for h, c in session.execute(select(ProgramRow.code_hash, ProgramRow.code))}
    for (left, right), outcomes in expected_jousts.items():
        played = engine.joust(
            engine.compile_program(code[left]), engine.compile_program(code[right])
        )
        assert arena.encode(played.outcomes) == outcomes
    # every state reads as the old code reported it
    queries = HillQueries.open(data, "markov")
    for event in EXPECTED["events"]:
        if event["report"] is not None:
            assert text_report(queries.standings_at(event["id"])) == event["report"]
    current = json_report(queries.standings(), None)
    # the statistics came later (hill.rules.statistics): there, and the rest as it was
    stats = [program.pop("stats") for program in current["programs"]]
    assert all(list(s) == list(STATS_FIELDS) for s in stats)
    assert current == EXPECTED["current"]
    # the git history is rebuilt from the events, each noted with its commit
    changes = queries.changes()
    assert len(hill.repository.log()) == len(changes) == 13
    assert [c.commit for c in reversed(changes)] == [c.hexsha for c in hill.repository.log()]


class CountingExecutor(arena.LocalExecutor):
    """The local executor, noting the jousts it plays."""

    played: list[engine.Pair] = []  # noqa: RUF012 - replaced, never changed in place

    def __call__(
        self, pairs: Sequence[engine.Pair], code_of: arena.CodeOf
    ) -> Iterator[engine.Played]:
        self.played = [*self.played, *pairs]
        return super().__call__(pairs, code_of)


def test_an_upgraded_hill_plays_only_new_jousts(data: Path) -> None:
    executor = CountingExecutor(arena.ProgramCache(), jobs=2)
    hill = Hill(HillSettings(data_dir=data, size=6), executor=executor)
    before = new_jousts(hill)
    clear = (REFERENCE / "warriors" / "wiki" / "clear.bfjoust").read_bytes()
    # bob.clear's code again (erin.sameclear has it too): every joust is known
    report = hill.challenge("gina", "clear", clear)
    assert report.standings.size == 6
    assert executor.played == []
    # a new program plays the five others, each code once: two share theirs
    poke = (REFERENCE / "warriors" / "wiki" / "poke.bfjoust").read_bytes() + b"."
    report = hill.challenge("gina", "poke2", poke)
    opponents = {e.program.code_hash for e in report.standings.entries} - {engine.code_hash(poke)}
    assert report.standings.size == 6 and len(opponents) == 4
    assert sorted(executor.played) == sorted(
        arena.oriented(engine.code_hash(poke), h)[0] for h in opponents
    )
    after = new_jousts(hill)
    assert len(after) == len(before) + 4 and after.items() >= before.items()


def test_readers_refuse_an_old_or_missing_database_and_change_nothing(data: Path) -> None:
    path = data / "hill.sqlite3"
    untouched = path.read_bytes()
    with pytest.raises(HillError, match=f"has schema 0002, this version reads {schema_revision()}"):
        HillQueries.open(data, "markov")
    with pytest.raises(HillError, match="there is no hill database"):
        HillQueries.open(data / "nothing", "markov")
    config = data.parent / "config.toml"
    config.write_text(f'[hill]\ndata_dir = "{data}"\n[web]\nport = 1\n')
    web = subprocess.run(
        [sys.executable, "-m", "hill", "web", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert web.returncode == 1 and "Traceback" not in web.stderr
    assert web.stderr.startswith(f"bfjoust web: the hill database at {path} has schema 0002")
    assert path.read_bytes() == untouched
    assert sorted(p.name for p in data.iterdir()) == ["hill.sqlite3"]  # no git, no lock, no WAL


def test_a_database_newer_than_the_code_is_refused_without_harm(data: Path) -> None:
    database = sqlite3.connect(data / "hill.sqlite3")
    database.execute("UPDATE alembic_version SET version_num = '9999'")
    database.commit()
    database.close()
    untouched = (data / "hill.sqlite3").read_bytes()
    with pytest.raises(HillError, match=r"has schema 9999.*newer than this version"):
        HillQueries.open(data, "markov")
    report = subprocess.run(
        [sys.executable, "-m", "hill", "hill", "--data", str(data), "report"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert report.returncode == 1 and "newer than this version" in report.stderr
    assert (data / "hill.sqlite3").read_bytes() == untouched


def test_the_upgrade_can_be_undone(data: Path) -> None:
    expected = old_jousts(data / "hill.sqlite3")
    database = Database(data / "hill.sqlite3")
    database.upgrade()
    database.downgrade("0002")
    assert database.revision() == "0002"
    back = old_jousts(data / "hill.sqlite3")
    assert back == expected
    database.upgrade()
    hill = Hill(HillSettings(data_dir=data, size=6))
    assert new_jousts(hill) == expected


def test_every_table_is_both_a_model_and_a_migration(tmp_path: Path) -> None:
    """A database made by the migrations alone has exactly the models'
    tables, column for column (Alembic's compare_metadata), and Alembic,
    run through migrations/env.py as the hill runs it, finds nothing to
    autogenerate: env.py hands it every table."""
    database = Database(tmp_path / "hill.sqlite3")
    database.upgrade()
    with database.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
        stored = set(sqlalchemy.inspect(connection).get_table_names()) - {"alembic_version"}
    assert stored == set(Base.metadata.tables) and len(stored) == 17
    command.check(migrations_config(database.engine))  # raises if autogenerate sees a change
    database.close()


def test_answers_stored_before_0007_are_kept(tmp_path: Path) -> None:
    """0007 turns a request's answer text into its outcome, and back."""
    database = Database(tmp_path / "hill.sqlite3")
    database.upgrade("0006")
    with database.engine.begin() as connection:
        for state, result, program, announce in (
            ("done", "New program a.b: rank 1/1. https://h/program/a.b", "a.b", True),
            ("failed", "parse error at line 1, column 1: unmatched '['", None, False),
        ):
            connection.execute(
                sqlalchemy.text(
                    "INSERT INTO requests (created_at, nick, channel, origin, command, owner,"
                    " name, state, attempts, result, program, announce, delivered)"
                    " VALUES (CURRENT_TIMESTAMP, 'a', NULL, 'irc', 'challenge', 'a', 'b',"
                    " :state, 1, :result, :program, :announce, 0)"
                ),
                {"state": state, "result": result, "program": program, "announce": announce},
            )
    database.upgrade()
    said = "New program a.b: rank 1/1. https://h/program/a.b"
    done, failed = RequestBook(database).undelivered()
    assert done.answer == Outcome(said, None, "a.b", True)
    assert answer_text(done.answer, str) == said  # said as it was
    assert failed.answer == Outcome("parse error at line 1, column 1: unmatched '['")
    database.downgrade("0006")
    with database.engine.connect() as connection:
        rows = connection.execute(sqlalchemy.text("SELECT result, program, announce FROM requests"))
        assert [tuple(row) for row in rows] == [
            ("New program a.b: rank 1/1. https://h/program/a.b", "a.b", 1),
            ("parse error at line 1, column 1: unmatched '['", None, 0),
        ]
    database.close()
