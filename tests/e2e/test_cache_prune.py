"""`vx cache prune` end to end on a real store, and beside a run restoring 200 tasks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator
from tests.conftest import REPO, VX, base_env, make_git_workspace, run_vx
from tests.e2e.cachews import generated, name, query

if TYPE_CHECKING:
    from pathlib import Path

DAY_S = 86_400


def prune_doc(result: object) -> dict[str, object]:
    doc = json.loads(result.out)  # type: ignore[attr-defined]
    Draft202012Validator(json.loads((REPO / "schemas/cache.json").read_text())).validate(doc)
    return doc


def listing(store: Path) -> set[str]:
    """The store's files, SQLite's own beside `cache.db` left out."""
    return {p.name for p in store.iterdir() if not p.name.startswith("cache.db")}


def age(store: Path, seconds: float) -> None:
    """Every entry and artifact last used `seconds` ago."""
    then = time.time() - seconds
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        conn.execute("UPDATE entries SET last_used_at = ?", (int(then * 1000),))
    for artifact in store.glob("*.tar.zst"):
        os.utime(artifact, (then, then))


def test_dry_run_names_what_the_real_prune_then_removes(tmp_path: Path) -> None:
    files, _ = generated(4)
    ws = make_git_workspace(tmp_path / "ws", files)
    home = tmp_path / "home"
    run_vx(["run", "build", "--all", "--cache-dir", "../cache"], ws, home=home).assert_ok()
    store = tmp_path / "cache"
    age(store, 10 * DAY_S)
    keys = sorted(k for (k,) in query(store, "SELECT key FROM entries"))
    fresh = [k for (k,) in query(store, "SELECT key FROM entries WHERE project = ?", name(0))]
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        conn.execute(
            "UPDATE entries SET last_used_at = ? WHERE key = ?", (int(time.time() * 1000), fresh[0])
        )
    orphan = store / "abcdefabcdefabcd.tar.zst"
    shutil.copy(store / f"{keys[0]}.tar.zst", orphan)
    temp = store / "abcdefabcdefabcd.tar.zst.tmp-x1y2z3_4"
    temp.write_bytes(b"half a save")
    foreign = store / "release.tar.zst"
    foreign.write_bytes(b"not ours")
    for path in (orphan, temp, foreign):  # the orphan faces the policy; the temp only its hour
        then = time.time() - (20 if path is orphan else 1) * DAY_S
        os.utime(path, (then, then))
    before = listing(store)
    args = ["cache", "prune", "--older-than", "7d", "--cache-dir", "../cache"]
    dry = run_vx([*args, "--dry-run", "--format", "json"], ws, home=home).assert_ok()
    assert listing(store) == before
    text = run_vx([*args, "--dry-run"], ws, home=home).assert_ok()
    assert text.out == "Would prune 3 entries (" + text.out.split("(", 1)[1]
    assert "would reap 2 orphaned artifacts" in text.out
    real = run_vx([*args, "--format", "json"], ws, home=home).assert_ok()
    assert prune_doc(dry) == {**prune_doc(real), "dryRun": True}
    assert prune_doc(real)["evicted"] == 3
    assert prune_doc(real)["orphans"] == 2
    after = listing(store)
    gone = {f"{k}.tar.zst" for k in keys if k != fresh[0]} | {orphan.name, temp.name}
    assert before - after == gone
    assert foreign.name in after
    assert [k for (k,) in query(store, "SELECT key FROM entries")] == [fresh[0]]
    again = run_vx([*args], ws, home=home).assert_ok()
    assert again.out == "Pruned 0 entries (0 B freed)\n"


def test_refusals_name_the_flag(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", generated(1)[0])
    cases = {
        ("cache", "prune"): "needs --older-than <duration> or --max-size <size>",
        ("cache", "prune", "--max-size", "0"): "--max-size 0 would evict every entry",
        ("cache", "prune", "--older-than=0d"): "--older-than 0d would evict every entry",
        ("cache", "prune", "--max-size", "10"): "a bare number has no unit: write 10G, or 10B",
        ("cache", "prune", "--older-than", "soon"): "--older-than takes a duration like 30d",
        (
            "cache",
            "prun",
            "--max-size",
            "1G",
        ): 'unknown vx cache subcommand: "prun" (did you mean prune?)',
        ("cache", "list"): "vx last --list",
        ("cache",): "vx cache needs a subcommand",
    }
    for args, words in cases.items():
        result = run_vx(list(args), ws, home=tmp_path / "home").assert_code(1)
        assert words in result.err, result
        assert "Traceback" not in result.err
    never = run_vx(["cache", "prune", "--max-size", "1G"], ws, home=tmp_path / "home").assert_ok()
    assert never.out == "Pruned 0 entries (0 B freed)\n"
    assert not (tmp_path / "home" / ".vx").exists() or not list(
        (tmp_path / "home").glob(".vx/*/cache")
    )


def test_a_prune_looping_beside_a_run_of_200_restores_fails_none(tmp_path: Path) -> None:
    """A prune the run cannot see (another workspace sharing the cache dir) evicts everything,
    over and over, while the run restores: each restore either reads its artifact or misses
    and runs the task; none fails."""
    from vx.cache.evict import Policy, apply_prune, list_cache, plan_prune
    from vx.cache.index import open_index

    files, _ = generated(200)
    ws = make_git_workspace(tmp_path / "ws", files)
    store = tmp_path / "cache"
    home = tmp_path / "home"
    args = ["run", "build", "--all", "--cache-dir", str(store), "--format", "json"]
    run_vx(args, ws, home=home).assert_ok()
    expected = {
        name(i): (ws / f"packages/{name(i)}/dist/bundle.js").read_bytes() for i in range(200)
    }
    for i in range(200):
        shutil.rmtree(ws / f"packages/{name(i)}/dist")
    env = base_env({"HOME": str(home)})
    proc = subprocess.Popen(
        [sys.executable, str(VX), *args],
        cwd=ws,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    evicted: list[int] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            index = open_index(store)
            try:
                now = int(time.time() * 1000)
                plan = plan_prune(list_cache(store, index), Policy(max_bytes=1), now)
                evicted.append(apply_prune(plan, store, index).evicted)
            finally:
                index.close()

    pruner = threading.Thread(target=loop)
    pruner.start()
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        stop.set()
        pruner.join()
    assert proc.returncode == 0, err
    rows = json.loads(out)["tasks"]
    assert len(rows) == 200
    assert {row["status"] for row in rows} == {"success"}, err
    assert "unreadable" not in err, "an entry pruned between its row and its file is a miss"
    assert {row["miss"]["kind"] for row in rows if "miss" in row} <= {"pruned"}
    assert sum(evicted) > 0
    for i in range(200):
        assert (ws / f"packages/{name(i)}/dist/bundle.js").read_bytes() == expected[name(i)]


def test_an_artifact_pruned_after_its_row_was_read_is_a_plain_miss(tmp_path: Path) -> None:
    """What a prune racing a restore leaves the restore: the row read, then no file. A miss
    with no line about an unreadable entry, its reason the prune, and a save in its place."""
    files, _ = generated(2)
    ws = make_git_workspace(tmp_path / "ws", files)
    store = tmp_path / "cache"
    home = tmp_path / "home"
    args = ["run", "build", "--all", "--cache-dir", str(store), "--format", "json"]
    run_vx(args, ws, home=home).assert_ok()
    ((key,),) = query(store, "SELECT key FROM entries WHERE project = ?", name(0))
    (store / f"{key}.tar.zst").unlink()
    shutil.rmtree(ws / f"packages/{name(0)}/dist")

    r = run_vx(args, ws, home=home).assert_ok()
    assert r.err.count("[vx]") == 0, r.err
    rows = {row["id"]: row for row in json.loads(r.out)["tasks"]}
    row = rows[f"{name(0)}#build"]
    assert (row["status"], row["miss"]["kind"]) == ("success", "pruned"), row
    assert row["miss"]["reason"] == "pruned or evicted"
    assert (store / f"{key}.tar.zst").is_file(), "saved again"


def test_a_miss_after_a_prune_says_so_not_first_run(tmp_path: Path) -> None:
    files, _ = generated(1)
    ws = make_git_workspace(tmp_path / "ws", files)
    home = tmp_path / "home"
    run = ["run", "build", "--all", "--cache-dir", "../cache"]
    first = run_vx(run, ws, home=home).assert_ok()
    assert "· first run" in first.out
    run_vx(["cache", "prune", "--max-size", "1B", "--cache-dir", "../cache"], ws, home=home)
    assert query(tmp_path / "cache", "SELECT key FROM entries") == []
    again = run_vx(run, ws, home=home).assert_ok()
    assert "· pruned or evicted" in again.out, again.out
    assert "first run" not in again.out
