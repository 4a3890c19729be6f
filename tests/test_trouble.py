"""hill.logs.Trouble: a lasting trouble says one line at most every ten
minutes, even when tries that need no disk go through between those that
fail (issue 33.5: 14 pairs of "waits"/"goes on" in 2 minutes of a full disk)."""

from __future__ import annotations

from structlog.testing import capture_logs

from hill.errors import DiskFull
from hill.logs import Throttle, Trouble

FULL = DiskFull.trouble


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines(logs: list[dict[str, object]]) -> list[str]:
    return [str(entry["event"]) for entry in logs]


def test_a_full_disk_between_tries_that_need_none_says_little() -> None:
    clock = Clock()
    trouble = Trouble("the request runner", clock=clock)
    with capture_logs() as logs:
        for _ in range(24):  # 2 minutes: a write fails, a read goes through, every 5 s
            trouble.struck(FULL)
            clock.now += 2.5
            trouble.cleared()
            clock.now += 2.5
    said = lines(logs)
    assert said == [f"the request runner waits: {FULL}",
                    f"the request runner goes on after 2 s: {FULL} no longer"]  # fmt: skip
    with capture_logs() as logs:  # ten minutes on, still full: one line
        for _ in range(130):
            trouble.struck(FULL)
            clock.now += 2.5
            trouble.cleared()
            clock.now += 2.5
    assert [line.split(":")[0] for line in lines(logs)] == ["the request runner waits"]
    assert logs[0]["came_back"] > 100
    with capture_logs() as logs:  # freed: said once it stayed away a minute
        for _ in range(20):
            trouble.cleared()
            clock.now += 5
    assert len(logs) == 1 and "goes on after" in lines(logs)[0]


def test_a_trouble_that_lasts_says_one_line_every_ten_minutes_then_its_end() -> None:
    clock = Clock()
    trouble = Trouble("git", clock=clock)
    with capture_logs() as logs:
        for _ in range(1300):  # 21 minutes and a half of failed tries
            trouble.struck(FULL)
            clock.now += 1
        trouble.cleared()
    assert lines(logs) == [f"git waits: {FULL}"] * 3 + [
        f"git goes on after 1300 s: {FULL} no longer"
    ]
    assert [entry["failed"] for entry in logs[:3]] == [1, 600, 600]


def test_the_throttle_says_each_kind_once_an_interval_with_the_count_left_out() -> None:
    clock = Clock()
    throttle = Throttle(60.0, clock=clock)
    said = []
    for second in range(150):  # a handshake fails every second, an accept every other
        kinds = ("accept failed", "handshake") if second % 2 == 0 else ("handshake",)
        for kind in kinds:
            left_out = throttle.due(kind)
            if left_out is not None:
                said.append((second, kind, left_out))
        clock.now += 1
    assert said == [
        (0, "accept failed", 0),
        (0, "handshake", 0),
        (60, "accept failed", 29),
        (60, "handshake", 59),
        (120, "accept failed", 29),
        (120, "handshake", 59),
    ]
