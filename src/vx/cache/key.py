"""Cache keys: the components a key folds, their canonical order, and the hash over them.

A key is 16 lowercase hex digits of xxh3-64 over a length-prefixed encoding of every component,
so no two different component lists can meet by concatenation (`("ab", "c")` vs `("a", "bc")`).
Components are ordered by kind, and by name within a kind whose order carries no meaning;
forwarded args keep the order they were typed in. The same components are what the index
stores for `vx why`, which is why each one is named and digested on its own.

Bump `KEY_FORMAT_VERSION` whenever what goes into a component or its encoding changes:
every stored entry then misses once instead of answering for inputs it never saw.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING

import xxhash

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Iterable

KEY_FORMAT_VERSION = "vx-cache-v3"


class Kind(StrEnum):
    """What a component stands for; the declaration order is the canonical order."""

    FORMAT = "format"
    WORKSPACE = "workspace"
    LOCKFILE = "lockfile"
    TOOLCHAIN = "toolchain"
    PACKAGE = "package"
    CONFIG = "config"
    FILE = "file"
    ENV = "env"
    RUNTIME = "runtime"
    WS_RUNTIME = "ws-runtime"
    FORWARD = "forward"
    UPSTREAM = "upstream"


_RANK = {kind: rank for rank, kind in enumerate(Kind)}
_ORDERED = frozenset({Kind.FORWARD})
_LENGTH = struct.Struct(">I")


class KeyComponent(Record):
    """One input of a key: `name` says which (a path, a variable, a task id), `digest` its value."""

    kind: Kind
    name: str
    digest: str


def format_component() -> KeyComponent:
    """The component every key opens with: the version of this very encoding."""
    return KeyComponent(Kind.FORMAT, "version", KEY_FORMAT_VERSION)


def canonical(components: Iterable[KeyComponent]) -> tuple[KeyComponent, ...]:
    """`components` in the order the key hashes them: by kind, then by name where order is moot."""
    indexed = list(enumerate(components))
    indexed.sort(
        key=lambda ic: (_RANK[ic[1].kind], "" if ic[1].kind in _ORDERED else ic[1].name, ic[0])
    )
    return tuple(c for _, c in indexed)


def derive_key(components: Iterable[KeyComponent]) -> str:
    """The 16-hex key of `components`; they must include `format_component()` exactly once."""
    return hash_canonical(canonical(components))


def hash_canonical(ordered: tuple[KeyComponent, ...]) -> str:
    """`derive_key` of components already in `canonical` order (as `task_components` returns
    them), without sorting them a second time: a plan of a thousand tasks keys each once."""
    if not ordered or ordered[0] != format_component() or ordered[1:2] == ordered[:1]:
        msg = f"a key must fold the format version {KEY_FORMAT_VERSION!r} once, first"
        raise ValueError(msg)
    seen: set[tuple[Kind, str]] = set()
    pack = _LENGTH.pack
    buffer = bytearray(pack(len(ordered)))
    for component in ordered:
        if component.kind not in _ORDERED:
            slot = (component.kind, component.name)
            if slot in seen:
                msg = f"duplicate key component {component.kind} {component.name!r}"
                raise ValueError(msg)
            seen.add(slot)
        for part in (component.kind.value, component.name, component.digest):
            raw = part.encode("utf-8", "surrogateescape")
            buffer += pack(len(raw))
            buffer += raw
    return str(xxhash.xxh3_64_hexdigest(bytes(buffer)))


def digest_bytes(data: bytes) -> str:
    """A value's digest for a component: 32 hex digits of xxh3-128."""
    return str(xxhash.xxh3_128_hexdigest(data))


UNSET = "unset"


def env_digest(value: str | None) -> str:
    """A variable's component digest: `unset` for an absent one, never the value itself."""
    return UNSET if value is None else digest_text(value)


def digest_text(text: str) -> str:
    """`digest_bytes` of `text` as UTF-8 (undecodable path bytes kept as they were)."""
    return digest_bytes(text.encode("utf-8", "surrogateescape"))


def digest_json(value: object) -> str:
    """The digest of a JSON value in canonical form: sorted keys, no whitespace, no NaN."""
    text = json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_plain,
    )
    return digest_text(text)


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    msg = f"not a JSON value: {type(value).__name__}"
    raise TypeError(msg)
