"""A readable diff of two versions of a program, syntax-neutral and bounded.

BF Joust programs are often one long line (the 800 KB Lymia.lugh is one),
so a diff by lines says only "everything changed".  This one is by
character: Google's diff-match-patch (its C++ build, `fast_diff_match_patch`,
which releases the GIL) finds the changes within a time limit (past it the
diff is coarser, never wrong), with its semantic clean-up so that the
changes fall on whole words where they can.  Each changed place is then
shown as a pair of excerpts, the old text and the new, with a little
context (a few lines, or a few characters of a long line) and the changed
ranges marked; both versions are shown whole when they are small.  What
would go past `Limits.shown` characters is left out, and `truncated` says
so (the pages link the raw versions then).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import fast_diff_match_patch as dmp

Mark = tuple[int, int]  # a changed range [start, end) of an excerpt, in characters


@dataclass(frozen=True)
class Limits:
    """How much of a diff is computed and shown."""

    whole: int = 2000  # versions both this short are shown whole
    context_lines: int = 2  # context around a change: lines ...
    context_chars: int = 80  # ... but no more characters than this
    shown: int = 12000  # characters shown of each version, in all
    seconds: float = 0.5  # the diff's time limit


@dataclass(frozen=True)
class Excerpt:
    """A stretch of one version: its text, where it starts, what changed in it."""

    text: str
    line: int  # 1-based, in the whole version
    column: int  # 1-based, in characters
    marks: tuple[Mark, ...]
    cut_before: bool  # the version has text before it that is not shown
    cut_after: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "line": self.line,
            "column": self.column,
            "marks": [list(m) for m in self.marks],
            "cut_before": self.cut_before,
            "cut_after": self.cut_after,
        }


@dataclass(frozen=True)
class Hunk:
    """One changed place (or a few close together): the old text and the new."""

    old: Excerpt
    new: Excerpt


@dataclass(frozen=True)
class CodeDiff:
    """What changed from one version to the next, in excerpts."""

    hunks: tuple[Hunk, ...]
    changes: int  # changed places in all, shown or not
    deleted: int  # characters
    inserted: int
    whole: bool  # both versions are shown whole
    truncated: bool  # some changes are not shown

    def to_json(self) -> dict[str, Any]:
        return {
            "hunks": [{"old": h.old.to_json(), "new": h.new.to_json()} for h in self.hunks],
            "changes": self.changes,
            "deleted": self.deleted,
            "inserted": self.inserted,
            "whole": self.whole,
            "truncated": self.truncated,
        }


@dataclass
class _Window:
    """A stretch of both versions to show: [old_start, old_end) and [new_start, new_end)."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int
    old_marks: list[Mark] = field(default_factory=list)
    new_marks: list[Mark] = field(default_factory=list)


def code_diff(old: str, new: str, limits: Limits = Limits()) -> CodeDiff:
    """The diff of `old` to `new` (either may be empty: a program added or removed)."""
    ops = dmp.diff(old, new, timelimit=limits.seconds, cleanup="Semantic", counts_only=True)
    changes = _changes(ops)
    deleted = sum(n for op, n in ops if op == "-")
    inserted = sum(n for op, n in ops if op == "+")
    if not changes:
        return CodeDiff((), 0, 0, 0, whole=False, truncated=False)
    if len(old) <= limits.whole and len(new) <= limits.whole:
        window = _Window(0, len(old), 0, len(new))
        for change in changes:
            window.old_marks += change.old_marks
            window.new_marks += change.new_marks
        hunk = Hunk(_excerpt(old, window, "old"), _excerpt(new, window, "new"))
        return CodeDiff((hunk,), len(changes), deleted, inserted, whole=True, truncated=False)
    windows = _with_context(old, changes, limits)
    hunks, truncated = _shown(old, new, windows, limits.shown)
    return CodeDiff(tuple(hunks), len(changes), deleted, inserted, False, truncated)


def _changes(ops: list[tuple[str, int]]) -> list[_Window]:
    """Each run of deletions and insertions between two unchanged stretches."""
    changes: list[_Window] = []
    at_old = at_new = 0
    current: _Window | None = None
    for op, n in ops:
        if op == "=":
            current = None
        else:
            if current is None:
                current = _Window(at_old, at_old, at_new, at_new)
                changes.append(current)
            if op == "-":
                current.old_marks.append((at_old, at_old + n))
                current.old_end = at_old + n
            else:
                current.new_marks.append((at_new, at_new + n))
                current.new_end = at_new + n
        at_old += n if op in "=-" else 0
        at_new += n if op in "=+" else 0
    return changes


def _context_before(text: str, at: int, limits: Limits) -> int:
    """Where the context before position `at` starts: the start of its line
    and of `context_lines` lines above, but at most `context_chars` back."""
    start = text.rfind("\n", 0, at) + 1
    for _ in range(limits.context_lines):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    return max(start, at - limits.context_chars)


def _context_after(text: str, at: int, limits: Limits) -> int:
    """Where the context after position `at` ends: the end of its line and
    of `context_lines` lines below, but at most `context_chars` on."""
    end = text.find("\n", at)
    for _ in range(limits.context_lines):
        if end < 0:
            break
        end = text.find("\n", end + 1)
    return min(len(text) if end < 0 else end, at + limits.context_chars)


def _with_context(old: str, changes: list[_Window], limits: Limits) -> list[_Window]:
    """The changes with their context, those whose contexts meet merged.
    Context is unchanged text, the same in both versions (a context that
    reaches into another change is merged with it), so it is measured in
    the old version and spans as many characters in the new."""
    windows: list[_Window] = []
    for change in changes:
        before = change.old_start - _context_before(old, change.old_start, limits)
        after = _context_after(old, change.old_end, limits) - change.old_end
        if windows and change.old_start - before <= windows[-1].old_end:
            window = windows[-1]
            window.old_marks += change.old_marks
            window.new_marks += change.new_marks
        else:
            window = change
            window.old_start -= before
            window.new_start -= before
            windows.append(window)
        window.old_end, window.new_end = change.old_end + after, change.new_end + after
    return windows


def _shown(old: str, new: str, windows: list[_Window], budget: int) -> tuple[list[Hunk], bool]:
    """The windows as hunks until `budget` characters of a version are
    shown (the last one cut there); whether some were left out."""
    hunks: list[Hunk] = []
    for window in windows:
        if budget <= 0:
            return hunks, True
        size = max(window.old_end - window.old_start, window.new_end - window.new_start)
        window.old_end = min(window.old_end, window.old_start + budget)
        window.new_end = min(window.new_end, window.new_start + budget)
        hunks.append(Hunk(_excerpt(old, window, "old"), _excerpt(new, window, "new")))
        if size > budget:
            return hunks, True
        budget -= size
    return hunks, False


def _excerpt(text: str, window: _Window, side: str) -> Excerpt:
    start, end = (
        (window.old_start, window.old_end) if side == "old" else (window.new_start, window.new_end)
    )
    marks = window.old_marks if side == "old" else window.new_marks
    line_start = text.rfind("\n", 0, start) + 1
    return Excerpt(
        text=text[start:end],
        line=text.count("\n", 0, start) + 1,
        column=start - line_start + 1,
        marks=tuple(
            (max(a, start) - start, min(b, end) - start) for a, b in marks if a < end and b > start
        ),
        cut_before=start > 0,
        cut_after=end < len(text),
    )
