"""The outbox on its own: which line goes out next, what it keeps, what it
drops, and `on_sent`; and the plain text it sends."""

from __future__ import annotations

import asyncio
import time
import unicodedata
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from structlog.testing import capture_logs

import bot.backlog as backlog_module
from bot.backlog import Backlog, Kind
from bot.outbox import Outbox
from bot.penalty import PenaltyMeter
from bot.text import plain
from bot.throttle import CommandGate


def _outbox(**limits: Any) -> Outbox:
    return Outbox(PenaltyMeter(1000.0, 100), backlog=Backlog(**limits))


def _drain(outbox: Outbox) -> list[str]:
    lines = []
    while (taken := outbox.take()) is not None:
        lines.append(taken)
    return lines


def test_recipients_take_turns_and_answers_and_refusals_wait_alike() -> None:
    outbox = _outbox()
    for i in range(2):
        outbox.backlog.add(Kind.REFUSAL, "flooder", [f"flooder refusal {i}"])
        outbox.backlog.add(Kind.ANSWER, "flooder", [f"flooder answer {i}"])
    outbox.backlog.add(Kind.ANSWER, "prober", ["prober answer"])
    assert _drain(outbox) == [
        "flooder refusal 0",  # the first to come
        "prober answer",  # after one line of the flooder's, not after all
        "flooder answer 0",  # then the flooder's, in the order they came
        "flooder refusal 1",
        "flooder answer 1",
    ]
    assert len(outbox) == 0


def test_a_refusal_is_not_starved_by_answers_that_keep_coming() -> None:
    """Two players asking -rank a little faster than the pace starved every
    refusal of a third (a late contest entry, a malformed program) until it
    was dropped after 30 s (issue 33.1): now it waits in carol's turn."""
    outbox = _outbox()
    outbox.backlog.add(Kind.REFUSAL, "carol", ["carol: contest spring closed"])
    sent = []
    for turn in range(6):  # alice and bob always have an answer waiting
        for who in ("alice", "bob"):
            outbox.backlog.add(Kind.ANSWER, who, [f"{who} rank {turn}"])
        taken = outbox.take()
        assert taken is not None
        sent.append(taken)
    assert "carol: contest spring closed" in sent[:3], sent


def test_queries_go_first_in_the_turn_of_whom_they_are_about() -> None:
    outbox = _outbox()
    outbox.backlog.add(Kind.ANSWER, "prober", ["p0", "p1"])
    outbox.backlog.add(Kind.ANSWER, "flooder", ["f0"])
    outbox.query("flooder", "WHOIS flooder")
    outbox.query("flooder", "WHOIS flooder_")  # the flooder's share pays for both
    # the flooder's turn begins with the queries (p1 first: the shorter queue)
    assert _drain(outbox) == ["p0", "p1", "WHOIS flooder_", "WHOIS flooder", "f0"]


def test_a_short_answer_does_not_wait_behind_a_long_one() -> None:
    outbox = _outbox()
    outbox.backlog.add(Kind.ANSWER, "flooder", ["f0", "f1", "f2"])
    assert outbox.take() is not None  # f0 sent
    outbox.backlog.add(Kind.ANSWER, "prober", ["p0"])
    assert _drain(outbox) == ["p0", "f1", "f2"]


def test_hosts_take_turns_and_short_answers_go_first_within_a_host() -> None:
    for prober_host in ("10.0.0.3", "10.0.0.2"):  # on another host, on the crowd's
        outbox = _outbox()
        for i in range(10):  # a crowd on one host, three lines each
            outbox.backlog.locate(f"crowd{i}", "10.0.0.2")
            outbox.backlog.add(Kind.ANSWER, f"crowd{i}", [f"c{i}.0", f"c{i}.1", f"c{i}.2"])
        assert outbox.take() is not None
        outbox.backlog.locate("prober", prober_host)
        outbox.backlog.add(Kind.ANSWER, "prober", ["p"])  # waiting behind 29 lines of the crowd
        assert [outbox.take() for _ in range(2)].count("p") == 1


def test_a_crowds_answers_queued_late_keep_no_player_of_its_host_waiting() -> None:
    """200 clients of one host ask `-help` at once; the bot answers each
    (three replies) as its read of the hill ends, so the answers keep
    coming, one a line sent, and the host's cap drops most of them.  A
    player of the same host who asks after the crowd goes within four lines
    (issue 33.3: his answer, queued before the crowd's last ones, went after
    them: 13.5-18.5 s, and up to 60 lines on a real server)."""
    outbox = _outbox()
    backlog = outbox.backlog
    crowd_asked = time.time()

    def help_answer(i: int) -> None:
        backlog.locate(f"crowd{i}", "10.0.0.2")
        for line in ("usage", "warning", "top"):
            backlog.add(Kind.ANSWER, f"crowd{i}", [f"c{i} {line}"], asked=crowd_asked)

    for i in range(100):
        help_answer(i)
    sent = [outbox.take() for _ in range(20)]
    for probe in range(3):
        backlog.locate("player", "10.0.0.2")
        backlog.add(Kind.ANSWER, "player", [f"rank{probe}"])
        asked = len(sent)
        for i in range(20):  # the crowd's answers keep coming, one a line sent
            help_answer(100 + 20 * probe + i)
            sent.append(outbox.take())
        assert f"rank{probe}" in sent[asked : asked + 4], sent[asked:]


def test_a_crowds_last_lines_do_not_push_out_a_players_answer() -> None:
    """The host's share is full of the crowd's one-line answers; a player
    of that host asks and his answer finds room; then the crowd's last
    lines keep coming (each `-help` ends with the top of the hill, queued as
    its read ends, its first lines already sent).  They answer requests
    asked before his, so they give way to his answer, not it to them (it
    was dropped: on ngircd a probe had no answer in 60 s, issue 33.3)."""
    outbox = _outbox(per_host=6)
    backlog = outbox.backlog
    crowd_asked = time.time() - 5
    for i in range(40):
        backlog.locate(f"crowd{i}", "10.0.0.2")
    for i in range(6):
        assert backlog.add(Kind.ANSWER, f"crowd{i}", [f"c{i} top"], asked=crowd_asked)
    backlog.locate("player", "10.0.0.2")
    assert backlog.add(Kind.ANSWER, "player", ["rank"])  # a crowd's answer gives way
    sent = []
    for i in range(6, 40):
        backlog.add(Kind.ANSWER, f"crowd{i}", [f"c{i} top"], asked=crowd_asked + i / 100)
        if i % 4 == 0:
            sent.append(outbox.take())
    assert "rank" in sent[:3], sent
    # of the crowd's answers not sent, those asked last stay, the oldest gave way
    kept = sorted(int(line[1:].split()[0]) for line in _drain(outbox))
    unsent = [i for i in range(40) if f"c{i} top" not in sent]
    assert len(kept) == 6 and kept == unsent[-6:]


def test_nobody_waits_for_ever_behind_short_answers() -> None:
    outbox = _outbox()
    outbox.backlog.locate("helped", "10.0.0.2")
    outbox.backlog.add(Kind.ANSWER, "helped", ["h0", "h1", "h2"])
    sent = []
    for i in range(6):  # a one-line answer for someone else before every line
        outbox.backlog.locate("asker", "10.0.0.3")
        outbox.backlog.add(Kind.ANSWER, "asker", [f"a{i}"])
        sent.append(outbox.take())
    assert [line for line in sent if line.startswith("h")] == ["h0", "h1", "h2"]


def test_one_host_is_capped_and_its_longest_queue_gives_way() -> None:
    outbox = _outbox(per_host=6)
    backlog = outbox.backlog
    for nick in ("crowd0", "crowd1", "crowd2", "prober"):
        backlog.locate(nick, "10.0.0.2")
    assert backlog.add(Kind.ANSWER, "crowd0", ["a", "b", "c"])  # can be asked again
    assert backlog.add(Kind.ANSWER, "crowd1", ["d", "e", "f"], on_sent=lambda: None)  # stored
    assert backlog.add(Kind.ANSWER, "crowd2", ["g", "h", "i"])  # crowd0's answer gives way
    assert backlog.add(Kind.ANSWER, "prober", ["p"])  # crowd2's answer gives way
    assert not backlog.add(Kind.ANSWER, "crowd0", ["j", "k", "l"])  # none as long as it
    assert backlog.add(Kind.ANSWER, "crowd2", ["s"], on_sent=lambda: None)  # stored: past the cap
    backlog.locate("elsewhere", "10.0.0.3")
    assert backlog.add(Kind.ANSWER, "elsewhere", ["x", "y", "z"])  # other hosts are not held up
    assert sorted(_drain(outbox)) == ["d", "e", "f", "p", "s", "x", "y", "z"]


def _answer_wait(lines_before: int, host: str) -> tuple[float, int]:
    """A crowd's backlog of 60 lines on one host goes out as the meter
    allows (1 a second, burst 4, on a simulated clock); a player on `host`
    asks after `lines_before` of them: the seconds their one-line answer
    waits, and the crowd's lines sent meanwhile."""
    clock = [0.0]
    meter = PenaltyMeter(1.0, 4, clock=lambda: clock[0])
    outbox = Outbox(meter)
    for i in range(20):
        outbox.backlog.locate(f"crowd{i}", "10.0.0.2")
        outbox.backlog.add(Kind.ANSWER, f"crowd{i}", ["x", "y", "z"])
    outbox.backlog.locate("prober", host)
    sent, asked = 0, 0.0
    while True:
        if sent == lines_before and not asked:
            outbox.backlog.add(Kind.ANSWER, "prober", ["rank"])
            asked = clock[0] or 1e-9
        message = outbox.backlog.next()
        assert message is not None
        if meter.free(meter.cost(message.lines[0])):
            line = outbox.backlog.pop(message)
            meter.charge(line)
            if line == "rank":
                return clock[0] - asked, sent - lines_before
            sent += 1
        else:
            clock[0] += 0.05


def test_an_answer_just_asked_goes_before_a_backlog() -> None:
    """On another host it is the next line out; on the crowd's host, after
    one of the crowd's at most; so it waits a line's time (1/0.9 s at the
    default pace), or two."""
    for host, crowd_lines in (("10.0.0.3", 0), ("10.0.0.2", 1)):
        waits = [_answer_wait(before, host) for before in range(1, 30)]
        assert all(crowd <= crowd_lines for _, crowd in waits), waits
        seconds = [s for s, _ in waits]
        print(
            f"a one-line answer from {host} behind a backlog on 10.0.0.2 waits "
            f"{sum(seconds) / len(seconds):.2f} s on average, {max(seconds):.2f} s at worst"
        )


def test_drops_are_logged_once_an_interval_with_their_count(monkeypatch) -> None:
    monkeypatch.setattr(backlog_module, "DROPS_LOGGED_EVERY", 0.05)
    outbox = _outbox(per_recipient=1)
    with capture_logs() as logs:
        for i in range(100):
            outbox.backlog.add(Kind.REFUSAL, "flooder", [f"r{i}"])  # 99 find no room
        time.sleep(0.06)
        assert outbox.take() is not None  # the next line sent logs what is counted
        assert outbox.take() is None
    drops = [entry for entry in logs if entry["event"] == "outbox full, messages dropped"]
    assert [entry["REFUSAL"] for entry in drops] == [1, 98]


def test_lines_of_long_messages_interleave() -> None:
    outbox = _outbox()
    outbox.backlog.add(Kind.ANSWER, "ann", ["a0", "a1", "a2"])
    outbox.backlog.add(Kind.ANSWER, "ben", ["b0", "b1"])
    assert _drain(outbox) == ["a0", "b0", "a1", "b1", "a2"]


def test_bounds_per_recipient_and_in_all_refusals_give_way() -> None:
    outbox = _outbox(per_recipient=3, total=5)
    assert all(outbox.backlog.add(Kind.REFUSAL, "flooder", [f"r{i}"]) for i in range(3))
    assert not outbox.backlog.add(Kind.REFUSAL, "flooder", ["r3"])  # full for this recipient
    assert outbox.backlog.add(Kind.ANSWER, "flooder", ["answer"])  # a refusal makes room
    assert outbox.backlog.add(Kind.ANSWER, "ann", ["a0", "a1"])
    assert not outbox.backlog.add(Kind.REFUSAL, "ben", ["b"])  # full in all
    assert outbox.backlog.add(Kind.ANSWER, "ben", ["b"])  # the oldest refusal makes room
    assert len(outbox) == 5
    assert sorted(_drain(outbox)) == ["a0", "a1", "answer", "b", "r2"]
    assert not outbox.backlog.add(Kind.ANSWER, "cy", ["c"] * 4)  # never fits


def test_stale_refusals_are_dropped_answers_wait() -> None:
    outbox = _outbox(refusal_ttl=0.05)
    outbox.backlog.add(Kind.REFUSAL, "ann", ["try again in 26 s"])
    outbox.backlog.add(Kind.ANSWER, "ann", ["an answer"])
    time.sleep(0.1)
    outbox.backlog.add(Kind.REFUSAL, "ben", ["fresh"])
    assert _drain(outbox) == ["an answer", "fresh"]


def test_queries_are_forgotten_with_the_connection() -> None:
    outbox = _outbox()
    outbox.query("ann", "WHOIS ann")
    outbox.backlog.add(Kind.ANSWER, "ann", ["kept"])
    outbox.query("ben", "WHOIS ben")
    outbox.backlog.forget_queries()
    assert len(outbox) == 1 and _drain(outbox) == ["kept"]


def test_text_is_plain_split_and_on_sent_follows_its_last_line() -> None:
    async def scenario() -> tuple[list[str], dict[str, list[int]]]:
        outbox = _outbox()
        written: list[str] = []
        sent: dict[str, list[int]] = {"long": [], "short": []}
        long = "\x02bold\x02 \x0304,12red\x03 \u202eevil\u202c " + "word " * 40
        outbox.add_text(
            "PRIVMSG", "#c", long, budget=60, prefix="\x1fnick\x1f: ",
            on_sent=lambda: sent["long"].append(len(written)),
        )  # fmt: skip
        outbox.add_text(
            "NOTICE", "ann", "short", budget=60, on_sent=lambda: sent["short"].append(len(written))
        )
        runner = asyncio.create_task(outbox.run(lambda: True, written.append))
        async with asyncio.timeout(5):
            while len(outbox):
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        runner.cancel()
        return written, sent

    written, sent = asyncio.run(scenario())
    privmsgs = [w for w in written if w.startswith("PRIVMSG")]
    assert len(privmsgs) > 3 and len(written) == len(privmsgs) + 1
    assert privmsgs[0].startswith("PRIVMSG #c :nick: bold red evil word word")
    assert all(w.startswith("PRIVMSG #c :nick: ") for w in privmsgs)
    assert all(len(w.partition(" :")[2].encode()) <= 60 for w in privmsgs)  # the budget
    # each on_sent ran once, just after its message's last line was written
    assert [written[n - 1] for n in sent["long"]] == [privmsgs[-1]]
    assert [written[n - 1] for n in sent["short"]] == ["NOTICE ann :short"]


def test_the_command_gate_admits_a_burst_then_a_rate_per_user() -> None:
    gate = CommandGate(rate=20.0, burst=3)
    assert [gate.admit("flooder") for _ in range(5)] == [True, True, True, False, False]
    assert gate.ignored == {"flooder": 2}
    assert gate.admit("someone else")
    time.sleep(0.06)
    assert gate.admit("flooder") and gate.ignored == {}


FORMATTING = [
    ("\x02bold\x02", "bold"),
    ("\x0304red\x03", "red"),
    ("\x034,12on blue", "on blue"),
    ("\x03,12comma", ",12comma"),  # no foreground: not a colour, the text stays
    ("\x03123", "3"),  # at most two digits are the colour
    ("\x04FF00FFhex\x04", "hex"),
    ("\x04ff00ff,00FF00hex", "hex"),
    ("\x1ditalic\x1d \x1funder\x1f \x1estrike\x1e \x11mono\x11 \x16rev\x16 \x0freset", None),
    ("\x01ACTION waves\x01", "ACTION waves"),
    ("abc\u202edcba\u202c", "abcdcba"),
    ("\u2066iso\u2069 \u200emark\u200f \u061carabic", "iso mark arabic"),
    ("caf\u00e9 \u05e9\u05dc\u05d5\u05dd 1\u06f2", None),  # letters and digits of any script stay
    # invisible: zero-width space, joiners, word joiner, BOM, soft hyphen, a tag character
    ("zero\u200bwidth \u200cjoin\u200d \u2060word\ufeff", "zerowidth join word"),
    ("soft\u00adhyphen \U000e0041tag\U000e007f", "softhyphen tag"),
    ("\u3164\u115f \u034f", " "),  # fillers that show nothing, though not format characters
    ("\x03\u200b04red", "04red"),  # no colour comes back once the invisible is gone
]


def test_plain_removes_formatting_and_invisible_characters() -> None:
    for text, expected in FORMATTING:
        if expected is None:
            expected = "".join(c for c in text if c.isprintable())
        assert plain(text) == expected, repr(text)


@given(st.text())
def test_plain_leaves_no_control_it_strips(text: str) -> None:
    stripped = plain(text)
    assert not set(stripped) & set("\x01\x02\x0f\x11\x16\x1d\x1e\x1f\x03\x04")
    assert not set(stripped) & {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
    assert not set(stripped) & {"\u200e", "\u200f", "\u061c"}
    assert not [ch for ch in stripped if unicodedata.category(ch) == "Cf"]
    assert plain(stripped) == stripped


def test_a_players_first_line_goes_before_the_rest_of_answers_begun() -> None:
    """ngircd relays a crowd's `-help` slowly: many are heard after a
    player's `-rank`, their first lines go out, and their last lines (the
    top of the hill, queued as each read ends) come while his answer waits.
    One line each, as his: the short-answer turn takes his first line
    before the rest of theirs (it took them, asked last, and the other turn
    took them too, waiting before him: 60 lines on ngircd, issue 33.3)."""
    outbox = _outbox()
    player_asked = time.time()
    crowd = _crowd_heard_after(outbox, 30, player_asked)
    crowd("usage")
    assert len(_drain(outbox)) == 30  # every crowd answer begun
    crowd("top")
    outbox.backlog.add(Kind.ANSWER, "player", ["rank"], asked=player_asked)
    sent = _drain(outbox)
    assert "rank" in sent[:2], sent
    assert len(sent) == 31  # and every crowd answer ends


def test_the_rest_of_answers_begun_gives_way_to_a_players_answer() -> None:
    """The host's share is full; a player's answer waits in it; the last
    lines of a crowd heard after him keep coming (their first lines sent).
    They give way, not his answer (asked before theirs, it was the one
    dropped: on ngircd a probe had no answer in 60 s, issue 33.3)."""
    outbox = _outbox(per_host=6)
    player_asked = time.time()
    crowd = _crowd_heard_after(outbox, 40, player_asked)
    crowd("usage", take=True)  # every crowd answer begun
    assert outbox.backlog.add(Kind.ANSWER, "player", ["rank"], asked=player_asked)
    crowd("top")
    assert "rank" in _drain(outbox)


def test_a_crowd_heard_after_a_player_does_not_push_his_answer_out() -> None:
    """The host's share is full of a crowd heard after a player (ngircd
    relays a crowd slowly), his answer queued before theirs: each asked for
    help, three lines in one answer, so his one line is never the longest
    queue and stays (when help came in three answers of a line each, the
    crowd's first lines, as short as his and asked after, pushed it out:
    a probe had no answer in 60 s, issue 33.3)."""
    outbox = _outbox(per_host=6)
    player_asked = time.time()
    crowd = _crowd_heard_after(outbox, 40, player_asked)
    assert outbox.backlog.add(Kind.ANSWER, "player", ["rank"], asked=player_asked)
    crowd("usage", "prose", "top")
    assert "rank" in _drain(outbox)


def _crowd_heard_after(outbox: Outbox, count: int, player_asked: float) -> Callable[..., None]:
    """A crowd of `count` on a player's host, each heard after him; the
    function returned queues an answer for each, a line per text (`take`:
    one line sent after each)."""
    backlog = outbox.backlog
    for nick in ["player", *(f"crowd{i}" for i in range(count))]:
        backlog.locate(nick, "10.0.0.2")

    def lines(*texts: str, take: bool = False) -> None:
        for i in range(count):
            backlog.add(
                Kind.ANSWER,
                f"crowd{i}",
                [f"c{i} {text}" for text in texts],
                asked=player_asked + 1 + i / 100,
            )
            if take:
                outbox.take()

    return lines
