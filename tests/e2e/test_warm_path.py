"""The warm path against the full path: after each change, a twin of the workspace runs with
the warm path off, and both must agree on what ran, every row, and every output's bytes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest
from tests.conftest import base_env, git, run_vx
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

BUILD = {
    "dependsOn": ["^build"],
    "exec": "mkdir -p dist && cat src/*.txt > dist/out.txt && echo built",
    "cache": {
        "inputs": {"files": ["src/**"], "env": ["API_URL"]},
        "outputs": {"files": ["dist/**"]},
    },
}
WARM = "warm replay"


def files() -> dict[str, object]:
    out = tree({"a": ((), {"build": BUILD}), "b": (("a",), {"build": BUILD})})
    out["package-lock.json"] = '{"lockfileVersion": 3}\n'
    return out


def vx(ws: Path, home: Path, *args: str, warm: bool = True, **env: str) -> VxResult:
    extra = {"VX_TIMING": "1", **env}
    if not warm:
        extra["VX_WARM"] = "0"
    return run_vx(["run", "build", "--all", *args], ws, env=extra, home=home)


def rows(result: VxResult) -> list[str]:
    """The rows and footer counts, with times and the timing table taken out."""
    text = re.sub(r"\d+(\.\d+)?m?s\b", "[T]", result.out)
    return [
        " ".join(line.split()) for line in text.splitlines() if line.strip() and "time " not in line
    ]


def outputs(ws: Path) -> dict[str, bytes]:
    found = {}
    for pkg in ("a", "b"):
        dist = ws / "packages" / pkg / "dist"
        for path in sorted(dist.rglob("*")) if dist.is_dir() else ():
            found[str(path.relative_to(ws))] = path.read_bytes() if path.is_file() else b"<dir>"
    return found


@pytest.fixture
def warmed(tmp_path: Path, workspace) -> tuple[Path, Path]:
    """A workspace whose last run was all up to date, so its snapshot is on disk."""
    ws = workspace(files(), name="one/ws")
    return warm_up(ws, tmp_path / "one" / "home")


def warm_up(ws: Path, home: Path) -> tuple[Path, Path]:
    """Run until the snapshot is written and a replay of it is proven to happen."""
    vx(ws, home).assert_ok()
    second = vx(ws, home).assert_ok()
    assert WARM not in second.err, second
    third = vx(ws, home).assert_ok()
    assert WARM in third.err, third
    assert rows(third) == rows(second)
    return ws, home


def twin(tmp_path: Path, ws: Path, home: Path) -> tuple[Path, Path]:
    """A copy of the workspace and its home (cache included) for the full path to run in."""
    dst = tmp_path / "two"
    shutil.copytree(ws.parent, dst, symlinks=True)
    return dst / ws.name, dst / home.name


def agree(
    tmp_path: Path,
    warmed: tuple[Path, Path],
    change: Callable[[Path], None],
    *args: str,
    replayed: bool = False,
    **env: str,
) -> None:
    ws, home = warmed
    change(ws)
    ws2, home2 = twin(tmp_path, ws, home)
    fast = vx(ws, home, *args, **env)
    full = vx(ws2, home2, *args, warm=False, **env)
    assert fast.code == full.code, (fast, full)
    assert (WARM in fast.err) is replayed, fast
    assert WARM not in full.err
    assert rows(fast) == rows(full), (fast, full)
    assert outputs(ws) == outputs(ws2)


def write(path: Path, text: str) -> None:
    path.write_text(text)


def test_nothing_changed_replays(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda _: None, replayed=True)


def test_same_size_same_mtime_edit(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda ws: same_size_same_mtime(ws / "packages/a/src/index.txt"))


def same_size_same_mtime(path: Path) -> None:
    """Rewrite a file so that only its ctime tells: what `git status` cannot see in an
    untracked file, nor in a tracked one whose status line already says it is modified."""
    st = path.stat()
    write(path, path.read_text().swapcase())
    assert path.stat().st_size == st.st_size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("rel", ["packages/a/src/extra.txt", "packages/a/src/index.txt"])
def test_a_dirty_input_edited_again(tmp_path, workspace, rel) -> None:
    ws = workspace(files(), name="one/ws")
    write(ws / rel, "dirty before the snapshot\n")  # untracked, or tracked and modified
    warmed = warm_up(ws, tmp_path / "one" / "home")
    agree(tmp_path, warmed, lambda ws: same_size_same_mtime(ws / rel))


def test_edit_right_after_the_snapshot(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda ws: write(ws / "packages/a/src/index.txt", "A\n"))


def test_env_var_a_key_reads(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda _: None, API_URL="https://example.invalid")


def test_config_edited(tmp_path, warmed) -> None:
    def change(ws: Path) -> None:
        cfg = ws / "packages/b/vx.config.json"
        write(cfg, cfg.read_text().replace("echo built", "echo rebuilt"))

    agree(tmp_path, warmed, change)


def test_outputs_deleted_and_the_config_narrows_them(tmp_path, warmed) -> None:
    """Only git sees the config edited: nothing may be cleaned by the old globs before it says
    so, or the file the new `!` entry keeps would be lost."""

    def change(ws: Path) -> None:
        cfg = ws / "packages/b/vx.config.json"
        write(cfg, cfg.read_text().replace('"dist/**"', '"dist/**", "!dist/vendor/**"'))
        shutil.rmtree(ws / "packages/b/dist")
        (ws / "packages/b/dist/vendor").mkdir(parents=True)
        write(ws / "packages/b/dist/vendor/lib.js", "kept by hand\n")

    agree(tmp_path, warmed, change)
    assert (warmed[0] / "packages/b/dist/vendor/lib.js").read_text() == "kept by hand\n"


def test_outputs_deleted_and_an_upstream_task_now_fails(tmp_path, warmed) -> None:
    """b's outputs are not brought back for a run in which b never gets to run."""

    def change(ws: Path) -> None:
        shutil.rmtree(ws / "packages/b/dist")
        (ws / "packages/a/src/broken.txt").mkdir()  # `cat src/*.txt` fails on a directory
        write(ws / "packages/a/src/broken.txt/keep", "")

    agree(tmp_path, warmed, change)
    assert not (warmed[0] / "packages/b/dist").exists()


def test_a_torn_snapshot_is_not_replayed(tmp_path, warmed) -> None:
    """Snapshots are written unsynced: one whose bytes a power loss zeroed in part is refused by
    its digest, though `marshal` could still read it."""

    def change(ws: Path) -> None:
        (snapshot,) = (ws.parent / "home/.vx/warm").glob("*.marshal")
        data = bytearray(snapshot.read_bytes())
        data[len(data) // 2 : len(data) // 2 + 16] = bytes(16)
        snapshot.write_bytes(bytes(data))

    agree(tmp_path, warmed, change)


def test_package_json_edited(tmp_path, warmed) -> None:
    def change(ws: Path) -> None:
        manifest = ws / "packages/a/package.json"
        write(manifest, manifest.read_text().replace('"1.0.0"', '"1.0.1"'))

    agree(tmp_path, warmed, change)


def test_package_added_and_one_removed(tmp_path, warmed) -> None:
    def change(ws: Path) -> None:
        (ws / "packages/c/src").mkdir(parents=True)
        write(ws / "packages/c/package.json", '{"name": "c", "version": "1.0.0"}\n')
        write(ws / "packages/c/vx.config.json", (ws / "packages/a/vx.config.json").read_text())
        write(ws / "packages/c/src/index.txt", "c\n")
        shutil.rmtree(ws / "packages/b")

    agree(tmp_path, warmed, change)


def test_checkout_of_another_branch(tmp_path, warmed) -> None:
    def change(ws: Path) -> None:
        git(ws, "checkout", "-q", "-b", "other")
        write(ws / "packages/b/src/index.txt", "b on another branch\n")
        git(ws, "commit", "-q", "-am", "other")

    agree(tmp_path, warmed, change)


def test_checkout_of_a_branch_with_the_same_tree(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda ws: git(ws, "checkout", "-q", "-b", "same"))


def test_output_deleted(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda ws: (ws / "packages/a/dist/out.txt").unlink(), replayed=True)


def test_output_modified(tmp_path, warmed) -> None:
    agree(
        tmp_path,
        warmed,
        lambda ws: write(ws / "packages/b/dist/out.txt", "tampered\n"),
        replayed=True,
    )


def test_output_gains_a_file(tmp_path, warmed) -> None:
    agree(
        tmp_path, warmed, lambda ws: write(ws / "packages/b/dist/extra.txt", "x\n"), replayed=True
    )


def test_every_output_removed_then_replayed_twice(tmp_path, warmed) -> None:
    """A restore replayed from the snapshot leaves one the next run can replay again."""
    ws, home = warmed
    for pkg in ("a", "b"):
        shutil.rmtree(ws / "packages" / pkg / "dist")
    agree(tmp_path, warmed, lambda _: None, replayed=True)
    again = vx(ws, home).assert_ok()
    assert WARM in again.err, again
    assert "up-to-date" in again.out or "cached" in again.out


def test_other_forwarded_args(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda _: None, "--", "--verbose")


def test_other_cache_flags(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda _: None, "--cache=local:w")


def test_force(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda _: None, "--force")


def test_another_cache_dir(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda _: None, "--cache-dir", "elsewhere")


def test_lockfile_change(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda ws: write(ws / "package-lock.json", '{"lockfileVersion": 2}\n'))


def test_untracked_input_appears(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda ws: write(ws / "packages/a/src/new.txt", "new\n"))


def test_cache_entry_pruned(tmp_path, warmed) -> None:
    def change(_: Path) -> None:
        _, home = warmed
        for store in home.glob(".vx/*/cache"):
            for artifact in store.glob("*.tar.zst"):
                artifact.unlink()

    agree(tmp_path, warmed, change)


def test_history_records_a_replayed_run(warmed) -> None:
    ws, home = warmed
    vx(ws, home).assert_ok()
    (db,) = home.glob(".vx/*/cache/cache.db")
    import sqlite3

    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT count(*) FROM invocations").fetchone()[0]
        tasks = conn.execute(
            "SELECT count(*) FROM runs WHERE run_id = (SELECT max(run_id) FROM invocations)"
        ).fetchone()[0]
    assert runs == 4
    assert tasks == 2


def test_all_hit_run_imports(warmed) -> None:
    ws, home = warmed
    env = {"VX_TIMING": "1", "PYTHONPROFILEIMPORTTIME": "1"}
    result = run_vx(["run", "build", "--all"], ws, env=env, home=home).assert_ok()
    assert WARM in result.err
    loaded = set(re.findall(r"\|\s+(\S+)\s*$", result.err, re.MULTILINE))
    forbidden = {
        "asyncio",
        "subprocess",
        "vx.workspace.config_load",
        "vx.workspace.config_schema",
        "vx.loader.assemble",
        "vx.graph.build",
        "vx.run.scheduler",
        "vx.run.session",
        "tarfile",
        "zstandard",
    }
    assert not loaded & forbidden, sorted(loaded & forbidden)
    assert "vx.run.warm" in loaded


def test_a_replayed_restore_imports_no_dataclasses(warmed) -> None:
    """A restore is a few syscalls per output: `dataclasses` (with `inspect` and `ast`),
    `tempfile` (with `random`) or `tarfile` (with `shutil`, `bz2` and `lzma`) would cost more
    than restoring a small task."""
    ws, home = warmed
    for pkg in ("a", "b"):
        shutil.rmtree(ws / "packages" / pkg / "dist")
    env = {"VX_TIMING": "1", "PYTHONPROFILEIMPORTTIME": "1"}
    result = run_vx(["run", "build", "--all"], ws, env=env, home=home).assert_ok()
    assert WARM in result.err
    assert (ws / "packages/b/dist/out.txt").is_file()
    loaded = set(re.findall(r"\|\s+(\S+)\s*$", result.err, re.MULTILINE))
    assert "vx.cache.archive" in loaded
    site = subprocess.run(  # what the interpreter loads on its own (a .pth may load tempfile)
        [sys.executable, "-X", "importtime", "-c", "pass"],
        env=base_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    loaded -= set(re.findall(r"\|\s+(\S+)\s*$", site.stderr, re.MULTILINE))
    forbidden = {"dataclasses", "inspect", "ast", "tempfile", "random", "asyncio", "subprocess"}
    forbidden |= {"tarfile", "shutil"}
    assert not loaded & forbidden, sorted(loaded & forbidden)


def test_a_snapshot_is_never_taken_mid_edit(workspace, tmp_path: Path) -> None:
    """An input changed while the recording run was under way leaves no snapshot to trust."""
    ws = workspace(files())
    home = tmp_path / "home"
    vx(ws, home).assert_ok()
    script = ws / "edit.sh"
    write(script, "#!/bin/sh\nsleep 0.3\necho edited > packages/a/src/index.txt\n")
    script.chmod(0o755)
    editor = subprocess.Popen([str(script)], cwd=ws)
    try:
        vx(ws, home).assert_ok()
    finally:
        editor.wait()
    after = vx(ws, home).assert_ok()
    assert WARM not in after.err


def test_a_filter_is_a_shape_of_its_own(tmp_path, warmed) -> None:
    agree(tmp_path, warmed, lambda _: None, "--filter", "a")


def test_a_filtered_run_replays_its_own_shape(warmed) -> None:
    ws, home = warmed
    vx(ws, home, "--filter", "b...").assert_ok()
    again = vx(ws, home, "--filter", "b...").assert_ok()
    assert WARM in again.err, again
    other = vx(ws, home, "--filter", "a").assert_ok()
    assert WARM not in other.err, other
    assert "b#build" not in other.out, other


def test_a_ref_filter_never_replays_a_stale_answer(workspace, tmp_path: Path) -> None:
    ws = workspace(files())
    home = tmp_path / "home"
    git(ws, "checkout", "-q", "-b", "feature")
    write(ws / "packages/a/src/index.txt", "feature\n")
    git(ws, "commit", "-q", "-am", "feature")
    for replayed in (False, False, True):
        r = vx(ws, home, "--filter", "[main]").assert_ok()
        assert (WARM in r.err) is replayed, r
        assert re.search(r"result +1 task ", r.out), r
    # main catches up: nothing the warm path fingerprints moved, but the answer did
    git(ws, "branch", "-f", "main", "feature")
    r = vx(ws, home, "--filter", "[main]").assert_ok()
    assert WARM not in r.err, r
    assert re.search(r"result +0 tasks ", r.out), r
    assert "nothing the filters name changed since main" in r.err, r


def affected(ws: Path, home: Path, base: str | None) -> VxResult:
    flag = "--affected" if base is None else f"--affected={base}"
    return run_vx(["run", "build", flag], ws, env={"VX_TIMING": "1"}, home=home)


def test_affected_replays_until_its_base_moves(workspace, tmp_path: Path) -> None:
    ws = workspace(files())
    home = tmp_path / "home"
    git(ws, "checkout", "-q", "-b", "feature")
    write(ws / "packages/a/src/index.txt", "feature\n")
    git(ws, "commit", "-q", "-am", "feature")
    runs = [affected(ws, home, "main").assert_ok() for _ in range(3)]
    assert [WARM in r.err for r in runs] == [False, False, True], runs
    assert rows(runs[2]) == rows(runs[1])
    assert re.search(r"result +2 tasks ", runs[2].out), runs[2]
    git(ws, "branch", "-f", "main", "feature")  # main catches up: the change is in the base
    moved = affected(ws, home, "main").assert_ok()
    assert WARM not in moved.err, moved
    assert re.search(r"result +0 tasks ", moved.out), moved
    assert "nothing affected since main" in moved.err, moved


def test_bare_affected_sees_a_base_that_appears(workspace, tmp_path: Path) -> None:
    ws = workspace(files())
    home = tmp_path / "home"
    write(ws / "packages/b/src/index.txt", "second\n")
    git(ws, "commit", "-q", "-am", "second")  # no remote, main is HEAD: the base is HEAD~1
    runs = [affected(ws, home, None).assert_ok() for _ in range(3)]
    assert [WARM in r.err for r in runs] == [False, False, True], runs
    assert re.search(r"result +2 tasks ", runs[2].out), runs[2]
    git(ws, "update-ref", "refs/remotes/origin/HEAD", git(ws, "rev-parse", "HEAD").strip())
    fetched = affected(ws, home, None).assert_ok()
    assert WARM not in fetched.err, fetched
    assert "nothing affected since origin/HEAD" in fetched.err, fetched


def test_an_affected_edit_undone_to_the_base_is_seen(workspace, tmp_path: Path) -> None:
    """A file the branch changed, edited in the work tree and then back to the base's bytes:
    `git status` says "modified" throughout, but the diff from the base no longer names it."""
    ws = workspace(files())
    home = tmp_path / "home"
    git(ws, "checkout", "-q", "-b", "feature")
    write(ws / "packages/a/src/index.txt", "feature\n")
    git(ws, "commit", "-q", "-am", "feature")
    write(ws / "packages/a/src/index.txt", "dirty\n")
    runs = [affected(ws, home, "main").assert_ok() for _ in range(3)]
    assert WARM in runs[2].err, runs[2]
    base = git(ws, "show", "main:packages/a/src/index.txt")
    write(ws / "packages/a/src/index.txt", base)
    fast = affected(ws, home, "main").assert_ok()
    assert WARM not in fast.err, fast
    assert re.search(r"result +0 tasks ", fast.out), fast


def test_nothing_affected_replays_with_its_note(workspace, tmp_path: Path) -> None:
    ws = workspace(files())
    home = tmp_path / "home"
    # The first run has nothing to execute and records its snapshot at once: a file written
    # within the racy window before it would make the warm path distrust that snapshot (and
    # rightly run the full path once more), so the workspace's files are let age past it.
    time.sleep(0.1)
    runs = [affected(ws, home, "HEAD").assert_ok() for _ in range(3)]
    assert [WARM in r.err for r in runs] == [False, True, True], runs  # nothing to execute
    assert rows(runs[2]) == rows(runs[1])
    for r in runs:
        assert "nothing affected since HEAD" in r.err, r


def test_an_env_prefix_keys_every_variable_it_passes(workspace, tmp_path: Path) -> None:
    """`inputs.env: ["PUBLIC_*"]`: each matching variable's value is in the key, and one that
    comes or goes is a change the warm path sees."""
    build = {
        "exec": "mkdir -p dist && env | grep ^PUBLIC_ | sort > dist/env.txt",
        "cache": {"inputs": {"env": ["PUBLIC_*"]}, "outputs": {"files": ["dist/**"]}},
    }
    ws = workspace(tree({"a": ((), {"build": build})}))
    home = tmp_path / "home"

    def run(**env: str) -> VxResult:
        return vx(ws, home, **env).assert_ok()

    first = [run(PUBLIC_A="1") for _ in range(3)]
    assert WARM in first[2].err, first[2]
    run(PUBLIC_A="2")
    assert (ws / "packages/a/dist/env.txt").read_text() == "PUBLIC_A=2\n"
    run(PUBLIC_A="2")
    added = run(PUBLIC_A="2", PUBLIC_B="x")
    assert WARM not in added.err, added
    assert (ws / "packages/a/dist/env.txt").read_text() == "PUBLIC_A=2\nPUBLIC_B=x\n"
