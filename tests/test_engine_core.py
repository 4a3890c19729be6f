"""The engine's plain-C core (hill/engine/core) through its Python binding:
how each battle ended, the source-size limit, and a run of the engine's
tests under AddressSanitizer and UndefinedBehaviorSanitizer."""

from __future__ import annotations

import mmap
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support.reference import warrior_path

from hill import engine
from hill.engine import _engine, compile_program

ROOT = Path(__file__).resolve().parents[1]
END = engine.END_BITS


@pytest.fixture(scope="module")
def reference_programs(reference_names: list[str]) -> list[engine.Program]:
    return [compile_program(warrior_path(name).read_bytes()) for name in reference_names]


def test_how_each_battle_ended_agrees_with_its_outcome_and_its_trace(
    reference_programs: list[engine.Program],
) -> None:
    rng = random.Random(11)
    checked = set()
    for _ in range(60):
        left, right = rng.sample(reference_programs, 2)
        result = engine.joust(left, right, stats=True)
        assert result.records is not None
        for index, (outcome, ended) in enumerate(
            zip(result.outcomes, result.records["ended"].tolist(), strict=True)
        ):
            left_lost = bool(ended & (END["left_flag"] | END["left_fell"]))
            right_lost = bool(ended & (END["right_flag"] | END["right_fell"]))
            limit = bool(ended & END["limit"])
            assert limit == (not left_lost and not right_lost), (index, ended)
            assert outcome == int(right_lost) - int(left_lost), (index, ended, outcome)
            checked.add(ended)
            if rng.random() < 0.05:  # the trace says the same in words
                length, polarity = engine.battle_config(index)
                reason = engine.trace(left, right, length, polarity).reason
                if ended & END["limit"]:
                    assert reason.startswith("no decision")
                elif ended & (END["left_fell"] | END["right_fell"]):
                    assert "ran off the tape" in reason
                else:
                    assert "stayed at zero" in reason
    # the hill's programs end their battles every way
    assert {END["limit"], END["left_flag"], END["right_flag"]} <= checked


def test_a_fall_and_the_limit_are_told_apart() -> None:
    still = compile_program(".")
    falls = compile_program("<")
    records = engine.joust(still, falls, stats=True).records
    assert records is not None
    assert set(records["ended"].tolist()) == {END["right_fell"]}
    records = engine.joust(still, still, stats=True).records
    assert records is not None
    assert set(records["ended"].tolist()) == {END["limit"]}


def test_a_source_too_large_for_the_offsets_is_refused() -> None:
    # an anonymous mapping: its pages are never touched, the size is refused first
    with (
        mmap.mmap(-1, engine.MAX_SOURCE + 1) as huge,
        pytest.raises(_engine.ParseError) as caught,
    ):
        _engine.compile(huge)
    assert caught.value.args == ("source_too_large", engine.MAX_SOURCE, -1)
    assert "source_too_large" in _engine.PARSE_ERRORS
    assert set(_engine.PARSE_ERRORS) == set(engine.ERROR_MESSAGES)


def test_the_engine_commands_refuse_a_source_too_large(tmp_path: Path) -> None:
    huge = tmp_path / "huge.bfjoust"
    with huge.open("wb") as file:  # sparse: no disk used
        file.truncate(engine.MAX_SOURCE + 1)
    done = subprocess.run(
        [sys.executable, "-m", "hill", "check", str(huge)], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "the program is longer than 536,870,911 bytes" in done.stderr
    assert "Traceback" not in done.stderr


def _sanitized_copy(target: Path) -> Path:
    """The hill and its tests copied, with the extension built under ASan and UBSan."""
    for part in ("hill", "tests"):
        shutil.copytree(
            ROOT / part, target / part, ignore=shutil.ignore_patterns("*.so", "__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", target)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    subprocess.run(
        [
            "gcc", "-shared", "-fPIC", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror",
            "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
            "-fno-omit-frame-pointer", f"-I{sysconfig.get_paths()['include']}",
            "hill/engine/_engine.c", "hill/engine/core/bfjoust.c",
            "-o", f"hill/engine/_engine{suffix}",
        ],
        cwd=target,
        check=True,
    )  # fmt: skip
    return target


def _runtime(name: str) -> str:
    path = subprocess.run(
        ["gcc", f"-print-file-name={name}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if not os.path.isabs(path):
        pytest.fail(f"gcc has no {name}: install libgcc's sanitizer runtimes")
    return path


def test_the_engine_tests_pass_under_the_sanitizers(tmp_path: Path) -> None:
    """The engine's own tests, run against an ASan/UBSan build of the core:
    any out-of-bounds access, use after free or undefined behaviour fails."""
    copy = _sanitized_copy(tmp_path / "copy")
    logs = tmp_path / "sanitizer"
    env = {
        **os.environ,
        "LD_PRELOAD": f"{_runtime('libasan.so')} {_runtime('libubsan.so')}",
        # Python's own allocations are not the engine's: leaks are not checked
        "ASAN_OPTIONS": f"detect_leaks=0:log_path={logs}",
        "UBSAN_OPTIONS": f"print_stacktrace=1:log_path={logs}",
    }
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
            "tests/test_engine.py", "tests/test_engine_properties.py",
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
    )  # fmt: skip
    reports = "".join(path.read_text() for path in tmp_path.glob("sanitizer*"))
    assert reports == ""
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    where = subprocess.run(
        [sys.executable, "-c", "import hill.engine._engine as e; print(e.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(copy))
