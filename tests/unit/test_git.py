"""git plumbing against real repositories: listings, status, identity and the one-line refusals."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import git
from vx import git as vxgit
from vx.git import GitSnapshot

ODD = "we ird\nname.txt"


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def test_snapshot_lists_index_with_modes(workspace, tmp_path: Path) -> None:
    root = workspace({"a.txt": "a\n", "bin/run": "#!/bin/sh\n", ODD: "odd\n"})
    (root / "bin/run").chmod(0o755)
    (root / "link").symlink_to("a.txt")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "more")
    snap = vxgit.snapshot(root)
    assert snap.prefix == ""
    assert snap.head == git(root, "rev-parse", "HEAD").strip()
    assert {p: e.mode for p, e in snap.index.items()} == {
        "a.txt": "100644",
        "bin/run": "100755",
        "link": "120000",
        ODD: "100644",
    }
    assert snap.index["a.txt"].blob == git(root, "hash-object", "a.txt").strip()
    assert snap.status == vxgit.StatusSnapshot()


def test_status_sorts_every_kind_of_change(workspace) -> None:
    root = workspace(
        {
            ".gitignore": "*.log\n",
            "keep.txt": "k\n",
            "edit.txt": "e\n",
            "gone.txt": "g\n",
            "old.txt": "o\n",
            ODD: "odd\n",
        }
    )
    (root / "edit.txt").write_text("changed\n")
    (root / ODD).write_text("changed\n")
    (root / "gone.txt").unlink()
    git(root, "mv", "old.txt", "new name.txt")
    (root / "dir with space").mkdir()
    (root / "dir with space/new\nfile").write_text("n\n")
    (root / "debug.log").write_text("ignored\n")
    status = vxgit.status(root)
    assert status.modified == {"edit.txt", ODD}
    assert status.deleted == {"gone.txt"}
    assert status.untracked == {"dir with space/new\nfile"}
    assert dict(status.renames) == {"new name.txt": "old.txt"}
    assert "new name.txt" in vxgit.ls_files_stage(root)


def test_type_change_and_intent_to_add_count_as_modified(workspace) -> None:
    root = workspace({"a.txt": "a\n", "b.txt": "b\n"})
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to("b.txt")
    (root / "c.txt").write_text("c\n")
    git(root, "add", "-N", "c.txt")
    assert vxgit.status(root).modified == {"a.txt", "c.txt"}


def test_root_below_the_top_level_gets_root_relative_paths(workspace) -> None:
    top = workspace(
        {
            "outside.txt": "o\n",
            "sub/ws/package.json": "{}\n",
            "sub/ws/src/a.ts": "a\n",
            "sub/ws/old.ts": "x\n",
            "sub/wsx/b.ts": "b\n",
        }
    )
    root = top / "sub/ws"
    (root / "src/a.ts").write_text("edited\n")
    (root / "src/new.ts").write_text("n\n")
    (top / "outside.txt").write_text("edited\n")
    (top / "stray.txt").write_text("s\n")
    git(top, "mv", "sub/ws/old.ts", "sub/ws/renamed.ts")
    snap = vxgit.snapshot(root)
    assert snap.prefix == "sub/ws/"
    assert set(snap.index) == {"package.json", "src/a.ts", "renamed.ts"}
    assert snap.status.modified == {"src/a.ts"}
    assert snap.status.untracked == {"src/new.ts"}
    assert dict(snap.status.renames) == {"renamed.ts": "old.ts"}


def test_snapshot_runs_each_git_command_once(workspace, tmp_path: Path) -> None:
    root = workspace({"a.txt": "a\n"})
    (root / "a.txt").write_text("b\n")
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    log = tmp_path / "git.log"
    real = shutil.which("git")
    assert real is not None
    shim = shim_dir / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = _env(PATH=f"{shim_dir}{os.pathsep}{os.environ['PATH']}")
    vxgit.snapshot(root, env=env)
    calls = log.read_text().splitlines()
    assert len(calls) == 3
    assert [c.split()[1] for c in calls] == ["rev-parse", "ls-files", "status"]


def test_a_started_snapshot_is_the_snapshot_with_git_run_side_by_side(
    workspace, tmp_path: Path
) -> None:
    top = workspace({"sub/ws/package.json": "{}\n", "sub/ws/a.ts": "a\n", "sub/ws/b.ts": "b\n"})
    root = top / "sub/ws"
    (root / "a.ts").write_text("edited\n")
    (root / "new.ts").write_text("n\n")
    git(top, "mv", "sub/ws/b.ts", "sub/ws/c.ts")
    log = tmp_path / "git.log"
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    shim = shim_dir / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{shutil.which("git")}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = _env(PATH=f"{shim_dir}{os.pathsep}{os.environ['PATH']}")
    early = vxgit.start_snapshot(root, env=env)()
    late = vxgit.snapshot(root)
    for field in GitSnapshot.__slots__:
        assert getattr(early, field) == getattr(late, field), field
    assert sorted(c.split()[1] for c in log.read_text().splitlines()) == [
        "ls-files",
        "rev-parse",
        "status",
    ]


def test_a_started_snapshot_says_what_git_refused_in_one_line(workspace) -> None:
    root = workspace({"a.txt": "a\n"})
    (root / ".git" / "index").write_bytes(b"garbage")  # ls-files and status both refuse it
    with pytest.raises(vxgit.GitError) as caught:
        vxgit.start_snapshot(root)()
    assert str(caught.value).startswith("vx requires git: `git ")
    assert "\n" not in str(caught.value).strip()


def test_head_branch_and_detached(workspace) -> None:
    root = workspace({"a.txt": "a\n"})
    sha = git(root, "rev-parse", "HEAD").strip()
    assert vxgit.head(root) == sha
    assert vxgit.branch(root) == "main"
    git(root, "checkout", "-q", "--detach")
    assert vxgit.branch(root) is None


def test_repo_identity_is_shared_by_clones(workspace, tmp_path: Path) -> None:
    root = workspace({"a.txt": "a\n"})
    first = git(root, "rev-list", "--max-parents=0", "HEAD").strip()
    (root / "b.txt").write_text("b\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "second")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True)
    assert vxgit.repo_identity(root) == f"root:{first}"
    assert vxgit.repo_identity(clone) == f"root:{first}"


def test_repo_identity_without_commit_is_the_git_dir(workspace) -> None:
    root = workspace({"a.txt": "a\n"}, commit=False)
    assert vxgit.repo_identity(root) == f"dir:{os.path.realpath(root / '.git')}"


def test_git_missing_is_one_line(workspace, tmp_path: Path) -> None:
    root = workspace({"a.txt": "a\n"})
    empty = tmp_path / "empty-path"
    empty.mkdir()
    with pytest.raises(vxgit.GitError) as caught:
        vxgit.snapshot(root, env=_env(PATH=str(empty)))
    assert caught.value.message == (
        "vx requires git: failed to spawn 'git' (not found on PATH) — install git and re-run"
    )


@pytest.mark.parametrize("where", ["plain dir", "git dir", "bare"])
def test_outside_a_work_tree_is_one_line(workspace, tmp_path: Path, where: str) -> None:
    if where == "plain dir":
        root = tmp_path / "plain"
        root.mkdir()
    elif where == "git dir":
        root = workspace({"a.txt": "a\n"}) / ".git"
    else:
        root = tmp_path / "bare.git"
        subprocess.run(["git", "init", "-q", "--bare", str(root)], check=True)
    # The ceiling keeps git from finding some repository that encloses the tmp dir.
    env = _env(GIT_CEILING_DIRECTORIES=str(tmp_path))
    with pytest.raises(vxgit.GitError) as caught:
        vxgit.snapshot(root, env=env)
    assert caught.value.message == f"vx requires git: {root} is not inside a git work tree"


@pytest.mark.parametrize("call", [vxgit.snapshot, vxgit.head])
def test_no_commit_is_one_line(workspace, call) -> None:
    root = workspace({"a.txt": "a\n"}, commit=False)
    with pytest.raises(vxgit.GitError) as caught:
        call(root)
    assert caught.value.message == (
        f"vx requires git: {root} is a git repository with no commit yet — commit once and re-run"
    )


def test_ignores_all_tells_leftover_build_output(workspace, tmp_path: Path) -> None:
    root = workspace({".gitignore": "dist/\n", "kept/a.txt": "a\n"})
    (root / "new").mkdir()
    (root / "new/b.txt").write_text("b\n")
    (root / "gone/dist").mkdir(parents=True)
    (root / "gone/dist/x.js").write_text("x\n")
    assert vxgit.ignores_all(root, "gone")
    assert not vxgit.ignores_all(root, "kept")  # tracked
    assert not vxgit.ignores_all(root, "new")  # untracked, not ignored
    plain = tmp_path / "plain"
    (plain / "d").mkdir(parents=True)
    (plain / "d/f").write_text("f\n")
    assert not vxgit.ignores_all(plain, "d", env=_env(GIT_CEILING_DIRECTORIES=str(tmp_path)))
    assert not vxgit.ignores_all(root, "gone", env=_env(PATH=str(tmp_path / "nowhere")))


def test_only_vx_git_spawns_git() -> None:
    # Every git process goes through vx.git, which pins LC_ALL=C and GIT_OPTIONAL_LOCKS=0.
    src = Path(vxgit.__file__).parent
    spawning = [
        str(path.relative_to(src))
        for path in sorted(src.rglob("*.py"))
        if path.name != "git.py" and re.search(r"""\[\s*["']git["']\s*,""", path.read_text())
    ]
    assert spawning == []
