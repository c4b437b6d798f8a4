"""File ids from a real git snapshot: clean ids from the index, dirty ones hashed as git would."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path
from types import MappingProxyType

import pytest

from conftest import git
from vx.cache.fileids import FileTable, blob_id, worktree_id
from vx.git import GitSnapshot, IndexEntry, StatusSnapshot, snapshot

ODD = "src/we ird\nname.ts"

TREE = {
    "package.json": "{}\n",
    "src/index.ts": "export {}\n",
    "src/tool.sh": "#!/bin/sh\necho hi\n",
    ODD: "odd\n",
    "packages/a/x.ts": "a\n",
    "packages/a/sub/y.ts": "y\n",
    "packages/a-b/z.ts": "z\n",
    "packages/a.txt": "t\n",
}


@pytest.fixture
def repo(workspace) -> Path:
    root = workspace(TREE, commit=False)
    (root / "src/tool.sh").chmod(0o755)
    (root / "src/link").symlink_to("index.ts")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def hash_object(root: Path, rel: str) -> str:
    return git(root, "hash-object", "--", rel).strip()


@pytest.mark.parametrize(
    "data", [b"", b"hello\n", bytes(range(256)) * 5000], ids=["empty", "line", "binary 1.2MB"]
)
def test_blob_id_is_gits(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "blob"
    path.write_bytes(data)
    out = subprocess.run(
        ["git", "hash-object", str(path)], check=True, capture_output=True, text=True
    )
    assert blob_id(data) == out.stdout.strip()


def test_clean_ids_equal_what_is_on_disk(repo: Path) -> None:
    table = FileTable(snapshot(repo))
    for path in table.paths:
        assert table.id_of(path) == worktree_id(repo / path), path
    assert table.hashed == 0
    assert table.id_of("src/tool.sh") == f"100755:{hash_object(repo, 'src/tool.sh')}"
    assert table.id_of("src/link") == f"120000:{blob_id(b'index.ts')}"


def test_dirty_files_are_hashed_once_and_lazily(repo: Path) -> None:
    (repo / "src/index.ts").write_text("edited\n")
    (repo / "src/new.ts").write_text("new\n")
    table = FileTable(snapshot(repo))
    assert table.hashed == 0
    assert table.id_of("src/index.ts") == f"100644:{hash_object(repo, 'src/index.ts')}"
    assert table.id_of("src/new.ts") == f"100644:{hash_object(repo, 'src/new.ts')}"
    table.id_of("src/index.ts")
    table.files_under("src")
    assert table.hashed == 2


def test_reverted_edit_hashes_like_the_index(repo: Path) -> None:
    clean = FileTable(snapshot(repo)).id_of("src/index.ts")
    path = repo / "src/index.ts"
    original = path.read_bytes()
    path.write_text("edited\n")
    path.write_bytes(original)
    assert FileTable(snapshot(repo)).id_of("src/index.ts") == clean


@pytest.mark.parametrize(
    ("change", "expected_mode"),
    [
        (lambda p: p.chmod(0o755), "100755"),
        (lambda p: (p.unlink(), p.symlink_to("tool.sh")), "120000"),
    ],
    ids=["chmod +x", "file to symlink"],
)
def test_mode_is_part_of_the_id(repo: Path, change, expected_mode: str) -> None:
    before = FileTable(snapshot(repo)).id_of("src/index.ts")
    change(repo / "src/index.ts")
    after = FileTable(snapshot(repo)).id_of("src/index.ts")
    assert after != before
    assert after is not None
    assert after.startswith(expected_mode + ":")


def test_symlink_target_is_part_of_the_id(repo: Path) -> None:
    before = FileTable(snapshot(repo)).id_of("src/link")
    (repo / "src/link").unlink()
    (repo / "src/link").symlink_to("./index.ts")
    assert FileTable(snapshot(repo)).id_of("src/link") == f"120000:{blob_id(b'./index.ts')}"
    assert before != f"120000:{blob_id(b'./index.ts')}"


def test_deleted_and_vanished_files_drop_out(repo: Path) -> None:
    (repo / "src/index.ts").unlink()
    (repo / ODD).write_text("edited\n")
    table = FileTable(snapshot(repo))
    assert "src/index.ts" not in table.paths
    (repo / ODD).unlink()
    assert table.id_of(ODD) is None
    assert ODD not in dict(table.files_under("src"))


def test_odd_names_survive(repo: Path) -> None:
    (repo / "src/new one\nhere.ts").write_text("n\n")
    table = FileTable(snapshot(repo))
    files = dict(table.files_under("src"))
    assert files[ODD] == f"100644:{hash_object(repo, ODD)}"
    assert "src/new one\nhere.ts" in files


@pytest.mark.parametrize(
    ("rel_dir", "stop_at", "expected"),
    [
        ("packages/a", (), ["packages/a/sub/y.ts", "packages/a/x.ts"]),
        ("packages/a", ("packages/a/sub",), ["packages/a/x.ts"]),
        ("packages/a/", ("packages/a", "packages/a-b"), ["packages/a/sub/y.ts", "packages/a/x.ts"]),
        ("packages", ("packages/a",), ["packages/a-b/z.ts", "packages/a.txt"]),
        ("packages", ("packages/a-b", "packages/a"), ["packages/a.txt"]),
        (
            ".",
            ("packages/a", "src", "packages/a/sub"),
            ["package.json", "packages/a-b/z.ts", "packages/a.txt"],
        ),
        ("nowhere", (), []),
    ],
)
def test_files_under_stops_at_nested_dirs(repo: Path, rel_dir, stop_at, expected) -> None:
    table = FileTable(snapshot(repo))
    assert table.paths_under(rel_dir, stop_at=stop_at) == expected
    assert [p for p, _ in table.files_under(rel_dir, stop_at=stop_at)] == expected


def test_paths_under_agrees_with_a_plain_scan() -> None:
    """Many paths, built as a snapshot value, against the obvious filter."""
    names = ["a", "a-b", "a.b", "a0", "ab", "b", "a/b", "a/b-c", "a/b/c"]
    paths = sorted({f"{x}/{y}/f{i}" for i, (x, y) in enumerate(itertools.product(names, names))})
    paths += [f"bulk/{i:05d}.ts" for i in range(5000)]
    index = {p: IndexEntry("100644", blob_id(p.encode())) for p in paths}
    snap = GitSnapshot(
        Path("/nonexistent"), "", "0" * 40, MappingProxyType(index), StatusSnapshot()
    )
    table = FileTable(snap)
    for base, stops in itertools.product([*names, "."], [(), ("a/b",), ("a", "a/b/c")]):
        prefix = "" if base == "." else base + "/"
        expected = [
            p
            for p in sorted(paths)
            if p.startswith(prefix)
            and not any(p.startswith(s + "/") for s in stops if s.startswith(prefix) and s != base)
        ]
        assert table.paths_under(base, stop_at=stops) == expected, (base, stops)
