"""Task logs in the cache end to end: stored compressed, counted in the cache's size (what
`vx info` reports and `cacheRetention.maxSize` evicts by), and replayed whole."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.conftest import make_git_workspace, run_vx
from tests.e2e.cachews import query

if TYPE_CHECKING:
    from pathlib import Path

LINES = 200_000
# A test suite's log: long, repetitive, no outputs beside it (about 7 MB).
CHATTY = {
    "exec": f"python3 -c \"[print(f'ok {{i}} - it works as it should') for i in range({LINES})]\"",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": []}},
}


def files(retention: dict[str, str]) -> dict[str, object]:
    return {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        "vx.workspace.json": {"cacheDir": "../cache", "cacheRetention": retention},
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"test": CHATTY}},
        "packages/a/src/x": "x\n",
    }


def test_a_long_log_is_stored_compressed_counted_and_replayed_whole(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", files({"maxSize": "1G"}))
    store = tmp_path / "cache"
    first = run_vx(["run", "a#test", "--output-logs=full"], ws).assert_ok()
    raw = sum(len(line) + 1 for line in first.out.splitlines() if " - it works as " in line)
    assert raw > 6_000_000
    ((stored,),) = query(store, "SELECT sum(length(data)) FROM entry_log")
    assert stored < raw / 10, "the log is kept compressed"
    assert (store / "cache.db").stat().st_size < raw / 5

    info = run_vx(["info", "--format=json"], ws).assert_ok().json()
    assert info["cacheEntries"] == 1
    assert info["cacheBytes"] >= stored, "the log's bytes count in the cache's size"

    again = run_vx(["run", "a#test", "--output-logs=full"], ws).assert_ok()
    replayed = [line for line in again.out.splitlines() if " - it works as " in line]
    assert len(replayed) == LINES
    assert replayed[0].endswith("ok 0 - it works as it should")
    assert replayed[-1].endswith(f"ok {LINES - 1} - it works as it should")


def test_max_size_evicts_an_entry_by_its_log(tmp_path: Path) -> None:
    """Its artifact is a few hundred bytes; its log, tens of kilobytes even compressed."""
    ws = make_git_workspace(tmp_path / "ws", files({"maxSize": "1K"}))
    store = tmp_path / "cache"
    run_vx(["run", "a#test"], ws).assert_ok()
    assert query(store, "SELECT key FROM entries") == []
    assert query(store, "SELECT key FROM entry_log") == []
    info = run_vx(["info", "--format=json"], ws).assert_ok().json()
    assert (info["cacheEntries"], info["cacheBytes"]) == (0, 0)
