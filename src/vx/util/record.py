"""`Record`: an immutable named tuple, declared as a `typing.NamedTuple` is, made for less.

`typing.NamedTuple` checks every field's annotation when the class is made; under `from
__future__ import annotations` each one is a string it compiles into a `ForwardRef`, about
0.15 ms a class, and a run's path defines a hundred of these classes before its first task.
Nothing in vx reads a field's annotation at run time, so a `Record` skips the check: it is
`collections.namedtuple`'s class with the body's methods, docstring and annotations set on it,
as `typing.NamedTuple` would set them. Type checkers see `typing.NamedTuple` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["Record"]

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
