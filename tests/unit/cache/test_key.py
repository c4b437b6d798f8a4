"""Key derivation: canonical order, collision-free encoding, and the pinned format version."""

from __future__ import annotations

import re
from types import MappingProxyType

import pytest

from vx.cache.key import (
    KEY_FORMAT_VERSION,
    KeyComponent,
    Kind,
    canonical,
    derive_key,
    digest_json,
    format_component,
)

FMT = format_component()

BASE = (
    FMT,
    KeyComponent(Kind.WORKSPACE, "package-lock.json", "100644:aa"),
    KeyComponent(Kind.CONFIG, "build", "c1"),
    KeyComponent(Kind.FILE, "src/a.ts", "100644:01"),
    KeyComponent(Kind.FILE, "src/b.ts", "100644:02"),
    KeyComponent(Kind.ENV, "API_URL", "e1"),
    KeyComponent(Kind.ENV, "MODE", "unset"),
    KeyComponent(Kind.FORWARD, "0", "f0"),
    KeyComponent(Kind.FORWARD, "1", "f1"),
    KeyComponent(Kind.UPSTREAM, "lib#build", "0123456789abcdef"),
)


def test_key_format_is_pinned() -> None:
    """Changing the format version or the encoding re-keys every stored entry: do it on purpose.

    When this fails because you meant it, bump KEY_FORMAT_VERSION and update both values here.
    """
    assert KEY_FORMAT_VERSION == "vx-cache-v3"
    assert derive_key(BASE) == "920f93e2c1ce784a"


def test_key_is_16_lowercase_hex() -> None:
    assert re.fullmatch(r"[0-9a-f]{16}", derive_key(BASE))
    assert re.fullmatch(r"[0-9a-f]{16}", derive_key([FMT]))


def test_unordered_kinds_ignore_input_order() -> None:
    shuffled = list(BASE)
    forward = [c for c in shuffled if c.kind is Kind.FORWARD]
    rest = [c for c in shuffled if c.kind is not Kind.FORWARD]
    rest = rest[3:] + rest[:3][::-1]
    assert derive_key(rest + forward) == derive_key(BASE)
    assert canonical(rest + forward)[0] == FMT


def test_forwarded_args_keep_their_order() -> None:
    swapped = [
        KeyComponent(Kind.FORWARD, "0", "f1")
        if c == BASE[7]
        else KeyComponent(Kind.FORWARD, "1", "f0")
        if c == BASE[8]
        else c
        for c in BASE
    ]
    assert derive_key(swapped) != derive_key(BASE)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ((KeyComponent(Kind.FILE, "ab", "c"),), (KeyComponent(Kind.FILE, "a", "bc"),)),
        (
            (KeyComponent(Kind.ENV, "A", "x"), KeyComponent(Kind.ENV, "B", "y")),
            (KeyComponent(Kind.ENV, "A", "xB"),),
        ),
        ((KeyComponent(Kind.ENV, "A", "x"),), (KeyComponent(Kind.RUNTIME, "A", "x"),)),
        ((KeyComponent(Kind.ENV, "A", "unset"),), (KeyComponent(Kind.ENV, "A", ""),)),
        ((), (KeyComponent(Kind.FORWARD, "0", ""),)),
    ],
    ids=["split name/digest", "merged components", "kind", "unset vs empty", "empty forward"],
)
def test_different_lists_never_meet(left, right) -> None:
    assert derive_key([FMT, *left]) != derive_key([FMT, *right])


@pytest.mark.parametrize(
    "components",
    [
        [],
        [KeyComponent(Kind.CONFIG, "build", "c")],
        [KeyComponent(Kind.FORMAT, "version", "vx-cache-v0")],
        [FMT, FMT],
        [FMT, KeyComponent(Kind.FILE, "a", "1"), KeyComponent(Kind.FILE, "a", "2")],
    ],
    ids=["empty", "no format", "other format", "format twice", "duplicate file"],
)
def test_malformed_lists_are_defects(components) -> None:
    with pytest.raises(ValueError):
        derive_key(components)


def test_digest_json_is_canonical() -> None:
    a = {"exec": {"command": "tsc", "env": MappingProxyType({"b": "1", "a": "2"})}, "n": [1, 2]}
    b = {"n": [1, 2], "exec": {"env": {"a": "2", "b": "1"}, "command": "tsc"}}
    assert digest_json(a) == digest_json(b)
    assert digest_json({"n": [2, 1]}) != digest_json({"n": [1, 2]})
    assert re.fullmatch(r"[0-9a-f]{32}", digest_json({}))
