"""Makes hill.sqlite3 and expected.json here with the hill as it was at
schema 0002 (commit 869b116, before jousts were kept by content):

    git worktree add /tmp/old 869b116 && cd /tmp/old && make setup
    .venv/bin/python /path/to/tests/data/hill-0002/make.py /path/to/tests/data/hill-0002

A small hill that has seen every kind of event: joins, a push-off, an
update, a test, two programs with the same code, a withdrawal, a removal
and a rescore.  expected.json holds each event's standings as that code
reported them, for tests/test_migrations.py.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from hill.reports import json_report, text_report
from hill.service import Hill

from hill.config import HillSettings

WIKI = Path(__file__).resolve().parents[1] / "reference" / "warriors" / "wiki"


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder)
        hill = Hill(HillSettings(data_dir=data, size=6), jobs=2)
        code = {p.stem: p.read_bytes() for p in WIKI.glob("*.bfjoust")}
        for owner, name in [
            ("alice", "poke"),
            ("bob", "clear"),
            ("carol", "triplock"),
            ("alice", "trail"),
            ("bob", "wiggle_clear"),
            ("carol", "timer_clear"),
            ("dave", "offset_clear"),  # the hill is full: the last one leaves
        ]:
            hill.challenge(owner, name, code[name])
        hill.challenge("alice", "poke", code["poke"] + b"(.)*3")  # an update
        hill.challenge("erin", "careless", code["careless_clear"], test_only=True)
        hill.challenge("erin", "sameclear", code["clear"])  # bob.clear's code again
        hill.withdraw("alice", "trail")
        hill.remove(hill.standings().entries[0].program.full_name, "admin")  # the best
        hill.challenge("frank", "anti", code["anti_shudder_clear"])
        hill.rescore("admin")
        expected = {
            "events": [
                {
                    "id": e.id,
                    "kind": e.kind,
                    "summary": e.summary,
                    # (a test's standings cannot be read: its jousts were not kept)
                    "report": None if e.kind == "test" else text_report(hill.event_standings(e.id)),
                }
                for e in hill.events()
            ],
            "current": json_report(hill.standings(), None),
        }
        hill.close()
        database = sqlite3.connect(data / "hill.sqlite3")
        database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        database.execute("PRAGMA journal_mode=DELETE")
        database.execute("VACUUM")
        database.close()
        shutil.copy(data / "hill.sqlite3", out / "hill.sqlite3")
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
