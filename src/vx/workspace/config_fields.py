"""Typed readers for config values: each checks one value and refuses it at its field path."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from vx.errors import ConfigError
from vx.util.fuzzy import MAX_EDITS, distance, listing
from vx.util.text import clip, clip_repr

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

_PLAIN_KEY = re.compile(r"[^.\[\]\"\s]+")
_NON_BLANK = re.compile(r"\S")

# The integers a JSON number holds exactly, and the most any count, size or duration may be.
MAX_NUMBER = 2**53


def quote(text: str) -> str:
    """A value as it would be written in the JSON file, for messages; a long one is cut.

    A lone surrogate (a `.py` config can hold one) is escaped, so the line can be printed.
    """
    quoted = json.dumps(clip(text), ensure_ascii=False)
    return quoted.encode("utf-8", "backslashreplace").decode("utf-8")


def shown(value: object) -> str:
    """A value of the wrong type, for messages: its short `repr`."""
    return clip_repr(value)


class Site:
    """Where a value sits: the file's display path and the field path inside it.

    A config is checked field by field, and only a refusal ever shows a path: each step
    keeps its parent and its own key, and `pointer` is spelled out when it is asked for.
    (Building every field's path eagerly was a tenth of loading a thousand configs.)
    """

    __slots__ = ("_parent", "_step", "path")

    def __init__(self, path: str, pointer: str | int = "", *, _parent: Site | None = None) -> None:
        self.path = path
        self._parent = _parent
        self._step = pointer

    @property
    def pointer(self) -> str:
        steps: list[str | int] = []
        site = self
        while site._parent is not None:
            steps.append(site._step)
            site = site._parent
        out = str(site._step)  # the pointer the top site was given, as it was given
        for step in reversed(steps):
            if isinstance(step, int):
                out += f"[{step}]"
            else:
                part = _part(step)
                out = f"{out}.{part}" if out else part
        return out

    def key(self, name: str) -> Site:
        """The site of field `name` in this object; odd keys are quoted so paths stay readable."""
        return Site(self.path, name, _parent=self)

    def index(self, i: int) -> Site:
        """The site of item `i` in this list."""
        return Site(self.path, i, _parent=self)

    def fail(self, message: str) -> NoReturn:
        """Refuse the value here: `path: pointer: message`."""
        raise ConfigError(self.path, message, self.pointer)


def _part(name: str) -> str:
    """A field name as a path step: quoted when it holds a dot, a bracket, a quote or a space."""
    name = clip(name)
    plain = _PLAIN_KEY.fullmatch(name) and name.isprintable()
    return name if plain else quote(name)


class FrozenJson(dict[str, Any]):
    """A read-only dict: immutable like every model value, yet `json.dumps` takes it as it is.

    Its lists are tuples, so compare it with a JSON value through `json.dumps`, not `==`.
    """

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("a resolved config is read-only")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[type[FrozenJson], tuple[dict[str, Any]]]:
        return (FrozenJson, (dict(self),))


def unknown_field(name: str, known: Iterable[str], also: Iterable[str] = ()) -> str:
    """`unknown field "x"` with the nearest known fields, or the list of them when none is near.

    Every field at the nearest distance is offered: "taks" is one edit from both "tags" and
    "tasks", and picking one would guess.
    """
    fields = tuple(known)
    scored = sorted((distance(name, c), c) for c in {*fields, *also} if c != name)
    near = [c for d, c in scored if d == scored[0][0] and d <= MAX_EDITS] if scored else []
    if near:
        return f"unknown field {quote(name)} (did you mean {' or '.join(map(quote, near))}?)"
    return f"unknown field {quote(name)} (known fields: {listing(fields)})"


def fields(
    value: object, site: Site, known: tuple[str, ...], *, ignored: tuple[str, ...] = ()
) -> Mapping[str, object]:
    """An object whose keys are all among `known` (or `ignored`, which are allowed but unused)."""
    if type(value) is not dict and not isinstance(value, Mapping):
        site.fail("expected an object")
    for key in value:
        if not isinstance(key, str):
            site.fail(f"field names must be strings, got {shown(key)}")
        if key not in known and key not in ignored:
            site.fail(unknown_field(key, known, ignored))
    return value


def string(value: object, site: Site) -> str:
    r"""Any string, blank included (a description may be empty), that is text all through.

    A NUL cannot reach a command line or an environment, and a lone surrogate (which a JSON
    `\ud800` escape or a program can make) is no character at all: both are refused here
    rather than failing later, mid-run.
    """
    if not isinstance(value, str):
        site.fail("expected a string")
    if "\0" in value:
        site.fail("holds a NUL character, which no command, name or path may contain")
    if not value.isascii() and not _encodes(value):
        site.fail(r"holds a lone surrogate (a \ud800-\udfff escape), which is no character")
    return value


def _encodes(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def non_blank(value: object, site: Site, what: str = "string") -> str:
    """A string with something other than whitespace in it."""
    if not isinstance(value, str) or not _NON_BLANK.search(value):
        site.fail(f"expected a non-empty {what}")
    return string(value, site)


def boolean(value: object, site: Site) -> bool:
    """`true` or `false`; "yes", 1 and friends are refused rather than guessed at."""
    if not isinstance(value, bool):
        site.fail("expected true or false")
    return value


def _integer(value: object) -> int | None:
    # JSON Schema counts 5.0 as an integer; so do we, or the two would disagree.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def positive_int(value: object, site: Site, most: int = MAX_NUMBER, unit: str = "") -> int:
    """An integer from 1 to `most`; `unit` names what it counts in the refusal (" ms")."""
    number = _integer(value)
    if number is None or number < 1:
        site.fail("expected a positive integer")
    if number > most:
        site.fail(f"expected a positive integer of at most {most}{unit}")
    return number


def non_negative_int(value: object, site: Site, most: int = MAX_NUMBER) -> int:
    """An integer from 0 to `most`."""
    number = _integer(value)
    if number is None or number < 0:
        site.fail("expected a non-negative integer")
    if number > most:
        site.fail(f"expected a non-negative integer of at most {most}")
    return number


def string_list(
    value: object, site: Site, item: Callable[[object, Site], str] = string
) -> tuple[str, ...]:
    """A list (a tuple too, from a `.py` config) whose items `item` accepts."""
    if isinstance(value, str):
        site.fail(f"expected a list of strings, not a string: write [{quote(value)}]")
    if not isinstance(value, (list, tuple)):
        site.fail("expected a list of strings")
    return tuple(item(v, site.index(i)) for i, v in enumerate(value))
