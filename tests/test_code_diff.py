"""The program diff (hill.web.history.code_diff): hand-worked examples."""

from __future__ import annotations

from support.reference import warrior_path

from hill.web.history.code_diff import Limits, code_diff

CONTEXT = Limits(whole=0, context_lines=1, context_chars=6)


def test_small_versions_are_shown_whole_with_the_changes_marked() -> None:
    diff = code_diff("(>)*9([-]>)*21", "(>)*8([+]>)*21")
    assert diff.whole and not diff.truncated
    assert (diff.changes, diff.deleted, diff.inserted) == (2, 2, 2)
    (hunk,) = diff.hunks
    assert hunk.old.text == "(>)*9([-]>)*21" and hunk.new.text == "(>)*8([+]>)*21"
    assert hunk.old.marks == ((4, 5), (7, 8)) == hunk.new.marks  # the 9 and the -
    assert (hunk.old.line, hunk.old.column, hunk.old.cut_before, hunk.old.cut_after) == (
        1,
        1,
        False,
        False,
    )


def test_the_same_code_has_no_hunks() -> None:
    diff = code_diff("[-]", "[-]")
    assert diff.hunks == () and diff.changes == 0 and not diff.truncated


def test_a_new_program_is_all_inserted() -> None:
    diff = code_diff("", ">+[]")
    (hunk,) = diff.hunks
    assert hunk.old.text == "" and hunk.old.marks == ()
    assert hunk.new.text == ">+[]" and hunk.new.marks == ((0, 4),)
    assert (diff.deleted, diff.inserted) == (0, 4)


def test_a_change_in_a_long_line_shows_a_few_characters_around_it() -> None:
    old = "a" * 20 + "+" + "b" * 20
    new = "a" * 20 + "-" + "b" * 20
    (hunk,) = code_diff(old, new, CONTEXT).hunks
    assert hunk.old.text == "aaaaaa+bbbbbb" and hunk.new.text == "aaaaaa-bbbbbb"
    assert hunk.old.marks == hunk.new.marks == ((6, 7),)
    assert (hunk.old.line, hunk.old.column) == (1, 15)
    assert hunk.old.cut_before and hunk.old.cut_after


def test_changes_far_apart_are_two_hunks_and_close_ones_one() -> None:
    old = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
    far = old.replace("two", "TWO").replace("six", "SIX")
    first, second = code_diff(old, far, CONTEXT).hunks
    # the changed line, one line of context each side, at most 6 characters
    assert (first.old.text, first.new.text) == ("one\ntwo\nthree", "one\nTWO\nthree")
    assert (first.old.line, first.old.column) == (1, 1) and not first.old.cut_before
    assert first.old.marks == ((4, 7),)
    assert (second.old.text, second.new.text) == ("five\nsix\nseven", "five\nSIX\nseven")
    assert (second.new.line, second.new.column) == (5, 1)
    near = old.replace("two", "TWO").replace("four", "FOUR")
    (merged,) = code_diff(old, near, CONTEXT).hunks
    assert merged.new.text == "one\nTWO\nthree\nFOUR\nfive"
    assert merged.new.marks == ((4, 7), (14, 18))


def test_past_the_limit_the_diff_is_truncated() -> None:
    old = "".join(f"{i:03}[{'+' * 40}]\n" for i in range(100))
    new = old.replace("[+", "[-")
    diff = code_diff(old, new, Limits(whole=0, shown=100))
    assert diff.truncated and diff.deleted == diff.inserted == 100
    assert sum(len(h.new.text) for h in diff.hunks) <= 100
    assert diff.hunks[-1].new.cut_after


def test_the_800_kb_program_changed_in_two_places() -> None:
    code = warrior_path("esohill-20241026/Lymia.lugh.bfjoust").read_text()
    changed = code[:1000] + "X" + code[1001:400000] + "[-]" + code[400000:]
    diff = code_diff(code, changed)
    assert not diff.truncated and (diff.deleted, diff.inserted) == (1, 4)
    first, second = diff.hunks
    assert first.new.text[first.new.marks[0][0]] == "X"
    assert (first.new.line, first.new.column) == (1, 1000 - Limits.context_chars + 1)
    start, end = second.new.marks[0]
    assert second.new.text[start:end] == "[-]" and second.old.marks == ()
    assert len(first.old.text) + len(second.old.text) < 400
