"""The bot's pacing against InspIRCd's flood count, as InspIRCd 3 keeps it.

`InspircdLoop` replays the server's main loop in simulated time (from its
source: src/inspircd.cpp `Run`, src/usermanager.cpp
`DoBackgroundUserStuff`, src/users.cpp `OnDataReady`): each pass of the
loop first forgives `commandrate` once if the clock is on a new second (one
forgiving however many seconds passed), then waits up to a second for the
client's lines and counts each line it reads; the client is cut off
("Excess Flood") once its count reaches the threshold.  Whatever the phase
of the server's seconds, the network's delay and the bot's own delays,
the lines the bot's meter lets out never reach the threshold, as long as
`burst + 2 * rate` stays below it.  (The real servers are in
tests/test_bot_pacing.py.)"""

from __future__ import annotations

import asyncio
import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.penalty import PenaltyMeter, penalty


class SimulatedClock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class InspircdLoop:
    """One client's flood count on InspIRCd 3 (see the module's docstring);
    `phase`: where the server's seconds begin on the bot's clock."""

    def __init__(self, rate: float, threshold: int, phase: float) -> None:
        self.rate = rate
        self.threshold = threshold
        self.phase = phase
        self.highest = 0.0

    def second(self, t: float) -> int:
        return math.floor(t + self.phase)

    def run(self, registered: float, arrivals: list[tuple[float, int]]) -> float:
        """The highest count reached by the lines (arrival time, penalty),
        the count starting from zero at `registered`."""
        count = 0.0
        last = self.second(registered)
        now = registered
        pending = list(arrivals)
        while pending:
            if self.second(now) != last:  # the pass's first look at the clock
                last = self.second(now)
                count = max(0.0, count - self.rate)
            # then it waits for lines, a second at most, and reads what came
            now = max(now, min(pending[0][0], now + 1.0))
            while pending and pending[0][0] <= now:
                count += pending.pop(0)[1]
                self.highest = max(self.highest, count)
        return self.highest


def _sent(meter: PenaltyMeter, clock: SimulatedClock, lines: int, pause: float) -> list[float]:
    """When the bot's lines go out: each as soon as the meter lets it,
    `pause` after the one before at least (the bot's own delays)."""
    times = []
    while len(times) < lines:
        if meter.fits(1):
            meter.charge("PRIVMSG #bfjoust :a line")
            times.append(clock.now)
            clock.now += pause
        else:
            clock.now += max(0.001, meter.delay(1))
    return times


@settings(max_examples=60, deadline=None)
@given(
    phase=st.floats(0, 1, exclude_max=True),
    latency=st.floats(0, 0.02),
    pause=st.sampled_from([0.0, 0.003, 0.05, 0.3]),
    rate=st.sampled_from([1, 2, 4]),
    threshold=st.sampled_from([8, 10, 20]),
)
def test_the_meter_never_lets_inspircd_count_to_its_threshold(
    phase: float,
    latency: float,
    pause: float,
    rate: int,
    threshold: int,
) -> None:
    burst = threshold - 2 * rate - 1  # as close as allowed
    assume(burst >= 1)
    clock = SimulatedClock(1000.0 + phase / 3)
    meter = PenaltyMeter(rate=rate, burst=burst, clock=clock)
    meter.reset(registered=True)
    registered = clock.now
    sent = _sent(meter, clock, 150, pause)
    server = InspircdLoop(rate, threshold, phase)
    assert server.run(registered, [(t + latency, 1) for t in sent]) < threshold
    # and it is not slow for nothing: at the class's rate where the threshold allows
    expected = min(rate * 0.9, 1 / pause if pause else math.inf)
    assert len(sent) / (sent[-1] - registered + 1) > expected * 0.9


def test_a_bucket_too_close_to_the_threshold_would_be_cut_off() -> None:
    """Why the meter keeps two seconds' forgiving below the threshold: a
    bucket at the class's rate (8 a second) with bursts just below the
    threshold, lines a few ms apart, is cut off.  InspIRCd reads a line that
    wakes it before it looks at the clock, so a second whose forgiving came
    before a burst forgives nothing of it."""
    rate, threshold = 8, 8
    sent, tokens, t, last = [], 7.0, 0.0, 0.0
    while len(sent) < 150:
        tokens = min(7.0, tokens + (t - last) * rate)
        last = t
        if tokens >= 1:
            tokens -= 1
            sent.append(t)
        t += 0.003
    assert InspircdLoop(rate, threshold, 0.5).run(0.0, [(s, 1) for s in sent]) >= threshold


def test_lines_cost_what_inspircd_charges() -> None:
    charged = {
        line: penalty(line, registered=True)
        for line in ("PRIVMSG #c :hi", "NOTICE a :x", "JOIN #c", "WHOIS ann", "PART #c", "ISON x")
    }
    assert charged == {
        "PRIVMSG #c :hi": 1,
        "NOTICE a :x": 1,
        "JOIN #c": 2,
        "WHOIS ann": 2,
        "PART #c": 5,
        "ISON x": 1,
    }
    assert penalty("NICK hillbot", registered=False) == 0  # registration's
    assert penalty("NICK hillbot", registered=True) == 4  # a change of nick
    assert penalty("USER b 0 * :x", registered=False) == penalty("PONG :irc", True) == 0
    assert penalty("CAP LS 302", registered=False) == penalty("AUTHENTICATE +", False) == 1


def test_the_bots_own_lines_go_before_answers() -> None:
    async def scenario() -> list[str]:
        meter = PenaltyMeter(rate=50.0, burst=4)
        for _ in range(4):
            meter.charge("PRIVMSG #c :x")
        order: list[str] = []

        async def wait(name: str, urgent: bool) -> None:
            await meter.room(2, urgent=urgent)
            order.append(name)
            meter.charge("JOIN #c" if urgent else "WHOIS x")

        # both get their room (the timeout only guards against a hang)
        await asyncio.wait_for(asyncio.gather(wait("answer", False), wait("join", True)), 60)
        return order

    assert asyncio.run(scenario()) == ["join", "answer"]
