"""A program's versions, numbered once, for the program page, the all-time
ladder and the tournaments' archive pool alike.

Every submission of `owner.name` counts (a `-test` is a trial, not a
submission), in the order they came: 1, 2, ...  A code submitted again
under the same name is the version it was, numbered by its first
submission; `owner.name@N` names version N.
"""

from __future__ import annotations

from collections.abc import Iterable


def submission_numbers(full_names: Iterable[str]) -> list[int]:
    """Each submission's number among its name's, for submissions (their
    full names) in the order they came."""
    counts: dict[str, int] = {}
    numbers = []
    for full in full_names:
        counts[full] = counts.get(full, 0) + 1
        numbers.append(counts[full])
    return numbers


def first_versions(submissions: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The version of each distinct (full name, code hash) among the
    submissions, in the order they came: its first submission's number."""
    submissions = list(submissions)
    numbers = submission_numbers(full for full, _ in submissions)
    versions: dict[tuple[str, str], int] = {}
    for key, number in zip(submissions, numbers, strict=True):
        versions.setdefault(key, number)
    return versions


def label(full_name: str, version: int) -> str:
    """What version `version` of `owner.name` is called: `owner.name@version`."""
    return f"{full_name}@{version}"
