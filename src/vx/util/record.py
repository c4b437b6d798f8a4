"""`Record`: an immutable named tuple, declared as a `typing.NamedTuple` is, made for less.

`typing.NamedTuple` checks every field's annotation when the class is made; under `from
__future__ import annotations` each one is a string it compiles into a `ForwardRef`, about
0.15 ms a class, and a run's path defines a hundred of these classes before its first task.
Nothing in vx reads a field's annotation at run time, so a `Record` skips the check: it is
`collections.namedtuple`'s class with the body's methods, docstring and annotations set on it,
as `typing.NamedTuple` would set them. Type checkers see `typing.NamedTuple` itself.

`Frozen` is for the few values whose constructor checks an invariant (a named tuple's may not
be replaced): a `__slots__` class that writes its fields once in its own `__init__` and refuses
every later write; equality, hash and repr come from the slots.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

__all__ = ["Frozen", "Record"]

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    from collections import namedtuple
    from typing import Any

    _PROHIBITED = frozenset(
        {
            "__new__",
            "__init__",
            "__slots__",
            "__getnewargs__",
            "_fields",
            "_field_defaults",
            "_make",
            "_replace",
            "_asdict",
            "_source",
        }
    )
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _RecordMeta(type):
        def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
            if ns.get("_record_root"):
                return super().__new__(mcls, name, bases, ns)
            fields: dict[str, object] = ns.get("__annotations__", {})
            defaults: list[object] = []
            for field in fields:
                if field in ns:
                    defaults.append(ns[field])
                elif defaults:
                    msg = f"{name}: field {field} without a default follows one with a default"
                    raise TypeError(msg)
            cls = namedtuple(name, fields, defaults=defaults, module=ns["__module__"])  # noqa: PYI024
            cls.__annotations__ = dict(fields)
            for key, value in ns.items():
                if key in _PROHIBITED:
                    msg = f"{name}: a Record may not set {key}"
                    raise AttributeError(msg)
                if key not in _SPECIAL and key not in fields:
                    setattr(cls, key, value)
            return cls

    class Record(metaclass=_RecordMeta):
        _record_root = True


class Frozen:
    """An immutable `__slots__` value; a subclass's `__init__` sets its fields with `_init`."""

    __slots__ = ()

    def _init(self, **values: object) -> None:
        """Set the fields: once, from `__init__`."""
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        msg = f"{type(self).__name__} is immutable: cannot set {name}"
        raise AttributeError(msg)

    def __delattr__(self, name: str) -> NoReturn:
        msg = f"{type(self).__name__} is immutable: cannot delete {name}"
        raise AttributeError(msg)

    def _names(self) -> tuple[str, ...]:
        return type(self).__slots__

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._names())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._names())
        return f"{type(self).__name__}({fields})"
