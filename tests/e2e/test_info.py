"""`vx info` end to end: every row, its JSON against the schema, a broken config, a flaky task,
and `cacheRetention` applied at a run's end."""

from __future__ import annotations

import json
import os
import platform
import re
import sqlite3
import time
from contextlib import closing
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator
from tests.conftest import REPO, make_git_workspace, run_vx
from tests.e2e.cachews import query

if TYPE_CHECKING:
    from pathlib import Path

FLAKY = {
    "exec": "test ! -f ../../flag",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": []}},
}
BUILD = {
    "exec": "mkdir -p dist && cp src/x dist/x",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}


def files() -> dict[str, object]:
    return {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\nflag\n",
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"build": BUILD, "test": FLAKY}},
        "packages/a/src/x": "x\n",
        "packages/b/package.json": {"name": "b"},
        "packages/b/vx.config.json": {"tasks": {"build": BUILD}},
        "packages/b/src/x": "y\n",
    }


def validate(doc: object) -> None:
    schema = json.loads((REPO / "schemas/info.json").read_text())
    Draft202012Validator(schema).validate(doc)


def test_info_rows_and_json_after_a_flake(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", files())
    home = tmp_path / "home"
    run_vx(["run", "build", "test", "--all"], ws, home=home).assert_ok()
    (ws / "flag").write_text("")
    run_vx(["run", "a#test", "--force"], ws, home=home).assert_code(1)
    (ws / "flag").unlink()
    run_vx(["run", "a#test"], ws, home=home).assert_ok()
    pretty = run_vx(["info"], ws, home=home).assert_ok()
    store = next(home.glob(".vx/*/cache"))
    out = pretty.out.replace(str(store.relative_to(home)), "[STORE]")
    out = re.sub(r"(?m)^(vx|python|git|workers|memory|tracing|sandbox): +.*$", r"\1: [VARIES]", out)
    assert out == (
        "vx: [VARIES]\n"
        "python: [VARIES]\n"
        "git: [VARIES]\n"
        "git status cache: core.fsmonitor off, core.untrackedCache off\n"
        f"workspace root:   {ws}\n"
        "projects:         2 (3 tasks)\n"
        "plugins:          none\n"
        "workers: [VARIES]\n"
        "memory: [VARIES]\n"
        "cache dir:        ~/[STORE]\n"
        "cache store:      ~/[STORE]\n"
        "cache versions:   keys vx-cache-v3 · index schema v4\n"
        f"cache entries:    3 ({pretty.out.split('cache entries:    3 (')[1].split(')')[0]})\n"
        "task runs (24h):  5 (1 cache hit)\n"
        "flaky tasks:      1 — a#test (1 of 3 runs failed on unchanged inputs)\n"
        "tracing: [VARIES]\n"
        "sandbox: [VARIES]\n"
    )
    doc = run_vx(["info", "--format", "json"], ws, home=home).assert_ok().json()
    validate(doc)
    assert doc["python"] == platform.python_version()
    assert doc["workspaceRoot"] == str(ws)
    assert (doc["projects"], doc["tasks"], doc["configErrors"]) == (2, 3, [])
    assert doc["cacheStore"] == str(store)
    assert (doc["cacheEntries"], doc["runs24h"], doc["hits24h"], doc["restored24h"]) == (3, 5, 1, 0)
    assert doc["orphans"] == {"artifacts": 0, "bytes": 0}
    assert doc["flakyTasks"] == [
        {"taskId": "a#test", "project": "a", "task": "test", "keys": 1, "passes": 2, "failures": 1}
    ]
    assert doc["cacheRetention"] is None


def test_a_broken_config_is_counted_not_fatal(tmp_path: Path) -> None:
    tree = files()
    tree["packages/b/vx.config.json"] = {"tasks": {"build": {"exec": "x", "cahce": {}}}}
    tree["vx.workspace.json"] = {"cacheDir": ".cache", "cacheRetention": {"maxSize": "10G"}}
    ws = make_git_workspace(tmp_path / "ws", tree)
    result = run_vx(["info"], ws, home=tmp_path / "home").assert_ok()
    assert "projects:         2 (2 tasks · 1 config did not load)\n" in result.out
    assert re.search(r"(?m)^config errors: +packages/b/vx\.config\.json: .*cahce", result.out)
    assert "cache store:      none: the cache dir holds the entries\n" in result.out
    assert "cache entries:    0 (0 B of 10 GB, 0%)\n" in result.out
    doc = run_vx(["info", "--format=json"], ws, home=tmp_path / "home").assert_ok().json()
    validate(doc)
    assert [e["path"] for e in doc["configErrors"]] == ["packages/b/vx.config.json"]
    assert doc["cacheStore"] is None
    assert doc["cacheDir"] == str(ws / ".cache")
    assert doc["cacheRetention"] == {"maxSize": "10G", "maxBytes": 10 * 2**30}


def test_cache_retention_prunes_at_a_runs_end_and_sweeps_hourly(tmp_path: Path) -> None:
    tree = files()
    tree["vx.workspace.json"] = {"cacheDir": "../cache", "cacheRetention": {"olderThan": "7d"}}
    ws = make_git_workspace(tmp_path / "ws", tree)
    store = tmp_path / "cache"
    home = tmp_path / "home"
    run_vx(["run", "build", "--all"], ws, home=home).assert_ok()
    assert (store / "retention.stamp").is_file()
    old = time.time() - 30 * 86_400
    orphan = store / "abcdefabcdefabcd.tar.zst"
    orphan.write_bytes(b"left by a reset")
    os.utime(orphan, (old, old))
    run_vx(["run", "a#build"], ws, home=home).assert_ok()
    assert orphan.exists(), "nothing is due and the last pass was within the hour"
    os.utime(store / "retention.stamp", (old, old))
    run_vx(["run", "a#build"], ws, home=home).assert_ok()
    assert not orphan.exists(), "an hour after the last pass, the sweep runs"
    with closing(sqlite3.connect(store / "cache.db")) as conn, conn:
        conn.execute("UPDATE entries SET last_used_at = ? WHERE project = 'b'", (int(old * 1000),))
    # A full run (a warm replay adds no bytes and waits for the stamp's hour) finds b due.
    run_vx(["run", "a#build", "--force"], ws, home=home).assert_ok()
    assert [p for (p,) in query(store, "SELECT project FROM entries")] == ["a"]


def test_the_tracing_row_names_the_tracer_vx_tracer_chose(tmp_path: Path) -> None:
    from vx.trace.probe import tracing_available

    ws = make_git_workspace(tmp_path / "ws", files())
    home = tmp_path / "home"
    for choice in ("seccomp", "strace"):
        probe = tracing_available(None, choice)
        doc = run_vx(["info", "--format", "json"], ws, home=home, env={"VX_TRACER": choice})
        validate(doc.assert_ok().json())
        tracing = doc.json()["tracing"]
        assert tracing == {
            "available": probe.ok,
            "reason": probe.reason or None,
            "tracer": choice if probe.ok else None,
        }
        row = run_vx(["info"], ws, home=home, env={"VX_TRACER": choice}).assert_ok().out
        label = {"seccomp": "seccomp notification", "strace": "strace"}[choice]
        if probe.ok:
            assert f"tracing:          available ({label}; vx run --audit)\n" in row
    bad = run_vx(["info", "--format", "json"], ws, home=home, env={"VX_TRACER": "ptrace"})
    assert bad.assert_ok().json()["tracing"] == {
        "available": False,
        "reason": "VX_TRACER=ptrace is not one of auto, seccomp, strace",
        "tracer": None,
    }
