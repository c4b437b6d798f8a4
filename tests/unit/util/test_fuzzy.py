"""Edit distance and near-miss suggestions."""

from __future__ import annotations

import itertools

import pytest

from vx.util.fuzzy import did_you_mean, distance, listing


def full_distance(a: str, b: str) -> int:
    """The textbook optimal-string-alignment table, every cell computed."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i, j in itertools.product(range(1, len(a) + 1), range(1, len(b) + 1)):
        cost = a[i - 1] != b[j - 1]
        d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
        if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
            d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


WORDS = ["", *("".join(w) for n in range(1, 5) for w in itertools.product("abc", repeat=n))]


@pytest.mark.parametrize("limit", [0, 1, 2, 3])
def test_the_banded_distance_agrees_with_the_full_table(limit: int) -> None:
    for a, b in itertools.product(WORDS[::3], WORDS[::2]):
        assert distance(a, b, limit) == min(full_distance(a, b), limit + 1), (a, b)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("build", "build", 0),
        ("biuld", "build", 1),
        ("buidl", "build", 1),
        ("bld", "build", 2),
        ("test", "build", 3),
        ("x" * 10_000, "z" + "x" * 10_000, 1),
        ("x" * 10_000, "y" * 10_000, 3),
    ],
)
def test_distance(a: str, b: str, expected: int) -> None:
    assert distance(a, b) == expected


def test_long_names_get_their_suggestion_and_short_listings() -> None:
    long = "x" * 10_000
    assert did_you_mean("z" + long, [long, "build"]) == long
    assert listing([long, "build"]) == "x" * 59 + "…, build"
