"""Per-project lockfile components: computed once per lockfile content, kept, and described."""

from __future__ import annotations

import marshal
import shutil
from pathlib import Path

from conftest import git, make_git_workspace
from vx.cache.fileids import FileTable
from vx.cache.key import Kind
from vx.cache.lockfilekeys import DIR_NAME, describe_move, lockfile_keys
from vx.git import snapshot
from vx.loader.assemble import load_workspace

DATA = Path(__file__).resolve().parent.parent / "lockfiles/data/pnpm9"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(DATA, root)
    return make_git_workspace(root, {})


def _keys(root: Path, store: Path | None, *, write: bool = True):
    ws = load_workspace(root)
    return lockfile_keys(ws, FileTable(snapshot(root)), store=store, write=write)


def test_each_project_gets_its_own_component(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    found = _keys(root, None)
    assert found.covered == frozenset({"pnpm-lock.yaml"})
    assert found.notes == ()
    digests = {p: c[0].digest for p, c in found.components.items()}
    assert all(c[0].kind is Kind.LOCKFILE for c in found.components.values())
    assert len(set(digests.values())) == len(digests)


def test_digests_are_kept_per_content_and_read_back(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    store = tmp_path / "store"
    _keys(root, store, write=False)
    assert not (store / DIR_NAME).exists()
    first = _keys(root, store)
    kept = list((store / DIR_NAME).glob("*.marshal"))
    assert len(kept) == 1
    planted = dict.fromkeys(first.components, "planted")
    kept[0].write_bytes(marshal.dumps(planted))
    again = _keys(root, store)
    assert {c[0].digest for c in again.components.values()} == {"planted"}


def test_a_bump_is_described_from_the_kept_closures(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    store = tmp_path / "store"
    before = _keys(root, store).components["lone"][0].digest
    lock = root / "pnpm-lock.yaml"
    lock.write_text(
        lock.read_text().replace("ms@2.1.2", "ms@2.1.3").replace("version: 2.1.2", "version: 2.1.3")
    )
    after = _keys(root, store).components["lone"][0].digest
    assert before != after
    assert describe_move(store, before, after) == ("ms 2.1.2 → 2.1.3",)
    assert describe_move(store, before, "unknown") == ()


def test_an_unreadable_lockfile_is_named_once(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "pnpm-lock.yaml").write_text("lockfileVersion: 5.4\n")
    git(root, "commit", "-qam", "old pnpm")
    found = _keys(root, tmp_path / "store")
    assert found.covered == frozenset()
    note = (
        "pnpm-lock.yaml: lockfileVersion 5.4 is not one vx reads — every task keys on the whole"
        " pnpm-lock.yaml, so any change to it re-runs everything"
    )
    assert found.notes == (note,)
