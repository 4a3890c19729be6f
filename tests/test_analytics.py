"""hill.analytics on the real engine's statistics: a program seen from
either side of a joust is the same program, how each battle ended agrees
with the battle's own trace, profiles add up, and the strategy map groups
programs that play alike."""

from __future__ import annotations

import numpy as np
import pytest

from hill import engine
from hill.analytics.battles import ON_TAPE, battles, own_side
from hill.analytics.pool import analyse
from hill.analytics.profile import TAPE_ROWS, features, problems, profile
from hill.analytics.strategy import MAX_FAMILIES, strategy_map
from hill.engine.varied import reference_pool, varied_pool


@pytest.fixture(scope="module")
def programs() -> list[engine.Program]:
    """Real programs and varied ones (rushes, decoys, defenders, noise)."""
    pool = reference_pool()[:10] + varied_pool(14, seed=7)
    return [engine.compile_program(code) for _, code in pool]


def test_a_program_is_the_same_from_either_side(programs: list[engine.Program]) -> None:
    agree = []
    for a, b in zip(programs, programs[3:] + programs[:3], strict=True):
        ab = engine.joust(a, b, stats=True)
        ba = engine.joust(b, a, stats=True)
        assert ba.outcomes == tuple(-o for o in ab.outcomes)
        left = own_side(ab.records, left=True)  # a on the left
        right = own_side(ba.records, left=False)  # a on the right, mirrored
        cycles, heat, decoy, flag = left
        assert np.array_equal(heat, right[1])
        # a decoy is read as the program moves away, and within a cycle the
        # left program moves first: a cell both touch in that cycle (a lock
        # against a clear, next to the flag) may read differently from the
        # other side; almost every other cell is the same (mirrored wrong,
        # almost none would be)
        same = (decoy == right[2])[ON_TAPE]
        assert same.mean() > 0.8, same.mean()
        agree.append(same.mean())
        # the flag's value changes sign in kettle (its + and - swap), never its zero
        assert np.array_equal(flag == 0, right[3] == 0)
        # the cycles too, but for a fall off the tape: its last cycle counts
        # when the left program falls, not when the right one does
        assert set(np.unique(cycles - right[0])) <= {-1, 0, 1}
        # the heat counts the cycles the battle went on (all of them at the limit)
        counted = heat.sum(axis=1)
        at_limit = cycles >= engine.MAX_CYCLES
        assert np.all((counted == cycles - 1) | (counted == cycles))
        assert np.all(counted[at_limit] == engine.MAX_CYCLES)
    assert np.mean(agree) > 0.97


def test_how_a_battle_ended_agrees_with_its_trace(programs: list[engine.Program]) -> None:
    checked = {"flag": 0, "off": 0, "limit": 0}
    for a, b in zip(programs, programs[5:] + programs[:5], strict=True):
        result = engine.joust(a, b, stats=True)
        fought = battles([result.records], [True], np.array([result.outcomes]))
        for i in range(engine.BATTLES):
            tape, polarity = engine.battle_config(i)
            battle = engine.trace(a, b, tape, polarity)
            right_fell = not 0 <= int(battle.right_pointer[-1]) < tape
            assert battle.outcome == result.outcomes[i]
            # the right program's fall: its cycle does not count
            assert battle.cycles == result.records["cycles"][i] + right_fell
            if battle.outcome != -1 and not fought.tied_at_limit[0, i]:
                assert not fought.lost_by_flag[0, i] and not fought.lost_off_tape[0, i]
                continue
            if fought.tied_at_limit[0, i]:
                assert battle.cycles == engine.MAX_CYCLES
                checked["limit"] += 1
            elif not 0 <= battle.left_pointer[-1] < tape and battle.tapes[-1][0] != 0:
                assert fought.lost_off_tape[0, i]
                checked["off"] += 1
            elif battle.tapes[-1][0] == 0 and battle.tapes[-2][0] == 0:
                assert fought.lost_by_flag[0, i]
                checked["flag"] += 1
    assert all(checked.values()), checked  # every cause was met


def test_a_profile_adds_up(programs: list[engine.Program]) -> None:
    me, others = programs[0], programs[1:]
    results = [engine.joust(me, o, stats=True) for o in others]
    outcomes = np.array([r.outcomes for r in results])
    fought = battles([r.records for r in results], [True] * len(others), outcomes)
    found = profile(fought)
    assert found.jousts == len(others)
    shares = np.nansum(found.heat, axis=1)
    assert np.allclose(shares[shares > 0], 1.0)
    for row, tape in enumerate(TAPE_ROWS):  # cells past the tape are none
        assert np.isnan(found.heat[row, tape:]).all()
        assert not np.isnan(found.decoys_by_tape[row, :tape]).any()
    assert np.all(found.duels[:, 1] <= found.duels[:, 0]) and np.all(
        found.duels[:, 0] <= found.duels[:, 2]
    )
    lost = (outcomes < 0).sum()
    assert found.lost_by_flag.sum() + found.lost_off_tape.sum() == lost == found.lost.sum()
    worst = problems(found, 5)
    assert [found.lost[i] for i in worst] == sorted((found.lost[i] for i in worst), reverse=True)
    for i in worst:  # its sample is the first battle it lost the commoner way
        by_flag = found.lost_flag[i] >= found.lost_off[i]
        way = fought.lost_by_flag if by_flag else fought.lost_off_tape
        first = found.sample[i]
        assert outcomes[i, first] == -1 and way[i, first] and not way[i, :first].any()
    vector = features(found)
    assert np.isclose(np.linalg.norm(vector), np.sqrt(3))  # three unit blocks


def test_the_strategy_map_groups_programs_that_play_alike() -> None:
    rng = np.random.default_rng(3)
    kinds = [rng.random(40) for _ in range(3)]
    features = np.array(
        [kinds[i % 3] + 0.03 * rng.random(40) for i in range(15)]
    )  # three kinds, five of each, interleaved
    found = strategy_map(features)
    assert sorted(found.order) == list(range(15))
    # each kind sits together in the dendrogram's order and is one family
    runs = [found.order[i : i + 5] for i in (0, 5, 10)]
    assert sorted(sorted({p % 3 for p in run}) for run in runs) == [[0], [1], [2]]
    assert len({found.families[p] for p in runs[0]}) == 1 and 0 not in found.families
    assert len(set(found.families)) == 3 <= MAX_FAMILIES
    # the linkage is scipy's, over positions in the order: leaves first, then clusters
    assert found.linkage.shape == (14, 4) and found.linkage[-1, 3] == 15
    assert found.alike(0, 4) == sorted(found.alike(0, 4), key=lambda x: x[1])
    assert all(j % 3 == 0 for j, _ in found.alike(0, 4))
    assert strategy_map(features[:1]).order == [0] and strategy_map(features[:0]).order == []


def test_a_pool_waits_for_the_jousts_without_statistics(programs: list[engine.Program]) -> None:
    pool = programs[:4]
    names = [f"p{i}" for i in range(4)]
    outcomes = np.zeros((4, 4, engine.BATTLES), dtype=np.int8)
    figures = {}
    for a in range(4):
        for b in range(a + 1, 4):
            result = engine.joust(pool[a], pool[b], stats=True)
            outcomes[a, b], outcomes[b, a] = result.outcomes, [-o for o in result.outcomes]
            if (a, b) != (0, 1):  # this one's statistics are not in yet
                figures[(a, b)] = (result.records, True)
    analysis = analyse(names, outcomes, ~np.eye(4, dtype=bool), figures)
    assert not analysis.complete
    assert analysis.waiting[0] == [1] and analysis.waiting[1] == [0] and not analysis.waiting[2]
    assert analysis.opponents[0] == [2, 3] and analysis.profiles[0].jousts == 2
    assert np.isnan(analysis.duels[0, 1]) and not np.isnan(analysis.duels[0, 2])
    assert analysis.duels[2, 3] == analysis.duels[3, 2]  # one joust, either side
    assert sorted(analysis.order()) == [0, 1, 2, 3]
