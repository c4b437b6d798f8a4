"""Record and Frozen: immutable values that cost little to define."""

from __future__ import annotations

import pytest

from vx.util.record import Frozen, Record


class Point(Record):
    """A point; `label` names it."""

    x: int
    y: int = 0
    label: str | None = None

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)


class Span(Frozen):
    __slots__ = ("end", "start")
    start: int
    end: int

    def __init__(self, start: int, end: int) -> None:
        if end < start:
            raise ValueError("a span ends after it starts")
        self._init(start=start, end=end)


def test_a_record_is_a_named_tuple_with_its_body() -> None:
    p = Point(3, label="a")
    assert p == (3, 0, "a")
    assert p._fields == ("x", "y", "label")
    assert p._field_defaults == {"y": 0, "label": None}
    assert Point(-1, 2).norm1 == 3
    assert p.moved(2) == Point(5, 0, "a")
    assert repr(p) == "Point(x=3, y=0, label='a')"
    assert Point.__doc__ == "A point; `label` names it."
    assert Point.__module__ == __name__
    assert Point.__qualname__ == "Point"
    assert list(Point.__annotations__) == ["x", "y", "label"]


def test_a_record_refuses_writes() -> None:
    p = Point(1)
    with pytest.raises(AttributeError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        p.z = 2  # type: ignore[attr-defined]


def test_a_field_without_a_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="field b without a default"):

        class Bad(Record):
            a: int = 0
            b: int


@pytest.mark.parametrize("name", ["__new__", "__init__", "_replace", "_make"])
def test_a_record_may_not_replace_the_tuple_machinery(name: str) -> None:
    with pytest.raises(AttributeError, match=f"may not set {name}"):
        type(Record)("Bad", (Record,), {"__module__": __name__, name: lambda *_: None})


def test_frozen_checks_in_init_and_then_refuses_writes() -> None:
    span = Span(1, 4)
    assert (span.start, span.end) == (1, 4)
    with pytest.raises(ValueError, match="ends after"):
        Span(4, 1)
    with pytest.raises(AttributeError, match="Span is immutable: cannot set start"):
        span.start = 0  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete end"):
        del span.end  # type: ignore[misc]


def test_frozen_equality_hash_and_repr_come_from_the_slots() -> None:
    assert Span(1, 4) == Span(1, 4)
    assert Span(1, 4) != Span(1, 5)
    assert Span(1, 4) != (1, 4)
    assert len({Span(1, 4), Span(1, 4), Span(2, 3)}) == 2
    assert repr(Span(1, 4)) == "Span(end=4, start=1)"
