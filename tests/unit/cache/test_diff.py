"""Two component lists compared: what moved, how, in the key's order, and what did not."""

from __future__ import annotations

from vx.cache.diff import Change, diff_components, own_changes, unchanged_count
from vx.cache.key import KeyComponent, Kind


def c(kind: Kind, name: str, digest: str) -> KeyComponent:
    return KeyComponent(kind, name, digest)


BASE = (
    c(Kind.FORMAT, "vx", "1"),
    c(Kind.WORKSPACE, "package-lock.json", "l1"),
    c(Kind.FILE, "src/a.ts", "a1"),
    c(Kind.FILE, "src/b.ts", "b1"),
    c(Kind.ENV, "API_URL", "e1"),
    c(Kind.UPSTREAM, "lib#build", "k1"),
)


def test_identical_lists_have_no_change():
    assert diff_components(BASE, BASE) == ()
    assert unchanged_count(BASE, BASE) == len(BASE)


def test_changed_added_and_removed_in_key_order():
    new = (
        c(Kind.UPSTREAM, "lib#build", "k2"),  # given out of order: the key's order wins
        c(Kind.FORMAT, "vx", "1"),
        c(Kind.WORKSPACE, "package-lock.json", "l1"),
        c(Kind.FILE, "src/a.ts", "a2"),
        c(Kind.FILE, "src/c.ts", "c1"),
        c(Kind.ENV, "API_URL", "e1"),
    )
    changes = diff_components(BASE, new)
    assert changes == (
        Change(Kind.FILE, "src/a.ts", "a1", "a2"),
        Change(Kind.FILE, "src/b.ts", "b1", None),
        Change(Kind.FILE, "src/c.ts", None, "c1"),
        Change(Kind.UPSTREAM, "lib#build", "k1", "k2"),
    )
    assert [ch.how for ch in changes] == ["changed", "removed", "added", "changed"]
    assert unchanged_count(BASE, new) == 3


def test_files_sort_by_name_within_their_kind():
    old = (c(Kind.FILE, "z", "1"), c(Kind.FILE, "a", "1"))
    new = (c(Kind.FILE, "z", "2"), c(Kind.FILE, "a", "2"))
    assert [ch.name for ch in diff_components(old, new)] == ["a", "z"]


def test_forwarded_args_keep_their_positions():
    old = (c(Kind.FORWARD, "1", "x"), c(Kind.FORWARD, "0", "y"))
    new = (c(Kind.FORWARD, "1", "y"), c(Kind.FORWARD, "0", "x"))
    assert [ch.name for ch in diff_components(old, new)] == ["1", "0"]


def test_own_changes_leave_out_upstream_keys():
    changes = (
        Change(Kind.ENV, "X", "1", "2"),
        Change(Kind.UPSTREAM, "lib#build", "k1", "k2"),
    )
    assert own_changes(changes) == (Change(Kind.ENV, "X", "1", "2"),)
