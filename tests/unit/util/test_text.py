"""Cutting echoed words to a readable length."""

from __future__ import annotations

import pytest

from vx.util.text import ECHO_LIMIT, clip, clip_repr


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("", 60, ""),
        ("build", 60, "build"),
        ("x" * 60, 60, "x" * 60),
        ("x" * 61, 60, "x" * 59 + "…"),
        ("abcdef", 4, "abc…"),
    ],
)
def test_clip(text: str, limit: int, expected: str) -> None:
    assert clip(text, limit) == expected


def test_a_clipped_name_is_never_longer_than_the_limit() -> None:
    assert len(clip("y" * 10_000)) == ECHO_LIMIT


class _Loud:
    def __repr__(self) -> str:
        return "loud" * 10_000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, "1"),
        (("a", "b"), "('a', 'b')"),
        (("x",) * 1000, "('x', 'x', 'x', 'x', 'x', 'x', ...)"),
        (_Loud(), "loud" * 7 + "...d" + "loud" * 7),
    ],
)
def test_clip_repr(value: object, expected: str) -> None:
    assert clip_repr(value) == expected


def test_clip_repr_of_a_deep_value_does_not_recurse() -> None:
    deep: object = ()
    for _ in range(100_000):
        deep = (deep,)
    assert clip_repr(deep) == "((((...),),),)"
