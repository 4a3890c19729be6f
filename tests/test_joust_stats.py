"""The jousts' battle statistics kept once, beside their outcomes: packed
exactly and compactly (hill.engine.packing), stored with every joust the
hill plays, and replayed once for the jousts stored before (the hill's
first), by the bot in the background or `bfjoust hill stats` with a
progress bar; the Dask batches carry them too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import delete
from support.reference import REFERENCE, warrior_path

from hill import engine
from hill.config import HillSettings
from hill.engine import arena, packing
from hill.play.cluster import joust_batch, unpack_batch
from hill.store.joust_stats import lacking_stats, load_stats, stats_progress
from hill.store.queries import hill_hashes
from hill.store.tables import JoustStats
from hill.writers.backfill import StatsBackfill
from hill.writers.hill import Hill

NAMES = [
    "esohill-20131008/Deewiant_allegro.bfjoust",
    "esohill-20131008/Deewiant_pendolino.bfjoust",
    "wiki/poke.bfjoust",
    "wiki/wiggle_clear.bfjoust",
    "esohill-20131008/Arc_Koen_self_defense.bfjoust",
]


def programs() -> list[tuple[str, bytes]]:
    return [(Path(n).stem.replace(".", "_"), warrior_path(n).read_bytes()) for n in NAMES]


def same_records(a: np.ndarray, b: np.ndarray) -> bool:
    return all(np.array_equal(a[k], b[k]) for k in ("cycles", "heat", "tape", "decoy"))


def test_packing_is_exact_and_compact() -> None:
    compiled = [engine.compile_program(code) for _, code in programs()]
    sizes = []
    for left in compiled:
        for right in compiled:
            records = engine.joust(left, right, stats=True).records
            packed = packing.pack(records)
            assert same_records(packing.unpack(packed), records)
            sizes.append(len(packed))
    # the engine's 14112 bytes a joust; a few hundred bytes a battle at most
    assert max(sizes) < 42 * 300 and np.mean(sizes) < 0.3 * 42 * engine.STATS_RECORD.itemsize
    with pytest.raises(ValueError, match="42 records"):
        packing.pack(records[:5])
    for bad in (b"", b"\x07garbage", packed[:1] + b"x" * 20):
        with pytest.raises((ValueError, Exception)):
            packing.unpack(bad)


def test_every_joust_the_hill_plays_keeps_its_statistics(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path, size=10), jobs=2)
    for name, code in programs():
        hill.challenge("esohill", name, code)
    hill.challenge("tester", "probe", warrior_path(NAMES[0]).read_bytes() + b"+", test_only=True)
    with hill.db.session() as session:
        kept, stored = stats_progress(session)
        assert kept == stored == 10 + 5  # the hill's 10 pairs, the test's 5
        standings = hill.queries.standings()
        a, b = standings.entries[0].program, standings.entries[3].program
        pair, sign = arena.oriented(a.code_hash, b.code_hash)
        packed = load_stats(session, [pair])[pair]
    codes = dict(programs())
    left, right = (a, b) if sign > 0 else (b, a)
    compiled = [engine.compile_program(codes[p.name]) for p in (left, right)]
    played = engine.joust(*compiled, stats=True)
    assert same_records(packing.unpack(packed), played.records)


def test_the_jousts_stored_before_are_replayed_once_the_hills_first(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path, size=4), jobs=2)
    for name, code in programs():  # five programs on a hill of four: one left, 9 jousts
        hill.challenge("esohill", name, code)
    with hill.lock.transaction() as session:  # as a hill of before the statistics
        session.execute(delete(JoustStats))
    backfill = StatsBackfill(hill, jobs=1)
    assert backfill.progress() == (0, 9)
    with hill.db.session() as session:
        on_hill = set(hill_hashes(session))
        assert len(on_hill) == 4
        first = lacking_stats(session, sorted(on_hill), 6)
    assert all(set(pair) <= on_hill for pair in first)  # the hill's 6 pairs come first
    work = backfill.work(6)
    assert (work.played, work.disagreed, work.done) == (6, 0, False)
    with hill.db.session() as session:
        assert lacking_stats(session, sorted(on_hill), 10) and all(
            not set(pair) <= on_hill for pair in lacking_stats(session, sorted(on_hill), 10)
        )
    work = backfill.work(64)
    assert (work.played, work.done) == (3, True)
    assert backfill.progress() == (9, 9)
    assert backfill.work(64) == type(work)(0, 0, True)  # once: nothing is played again


def test_bfjoust_hill_stats_replays_an_old_hill(tmp_path: Path) -> None:
    data = tmp_path / "var"
    data.mkdir()
    shutil.copy(REFERENCE.parent / "hill-0002" / "hill.sqlite3", data / "hill.sqlite3")
    command = [sys.executable, "-m", "hill", "hill", "--data", str(data), "stats"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "30 of 30 jousts have their battle statistics\n"
    assert "statistics: 100%" in done.stderr and "30/30" in done.stderr  # the progress bar
    again = subprocess.run([*command, "--quiet"], capture_output=True, text=True, timeout=300)
    assert again.stdout == done.stdout and again.stderr == ""


def test_a_dask_batch_carries_the_statistics() -> None:
    codes = {engine.code_hash(code): code for _, code in programs()}
    hashes = sorted(codes)
    pairs = [(hashes[0], hashes[1]), (hashes[2], hashes[3])]
    with_stats = unpack_batch(joust_batch(pairs, True, codes), len(pairs))
    without = unpack_batch(joust_batch(pairs, False, codes), len(pairs))
    for (a, b), result, plain in zip(pairs, with_stats, without, strict=True):
        expected = engine.joust(
            engine.compile_program(codes[a]), engine.compile_program(codes[b]), stats=True
        )
        assert result.outcomes == plain.outcomes == expected.outcomes
        assert same_records(result.records, expected.records) and plain.records is None
