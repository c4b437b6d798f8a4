"""A dev server only cache hits depend on is not started, and starts late when a hit misses."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import jsonschema
from tests.conftest import REPO
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

# The server leaves a marker before it says it is ready; the check reads it, so a check that
# executed ran against a started, ready server.
# A requested server holds its run until it exits: `dist/stop` (ignored by git) lets it exit.
SERVE = "mkdir -p dist; echo up > dist/started; echo listening; test -f dist/stop || exec sleep 300"
CHECK = "cat ../srv/dist/started; mkdir -p dist; echo checked > dist/out.txt"
CACHE = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}


def files() -> dict:
    server = {"exec": {"command": SERVE, "persistent": True, "readyWhen": "listening"}}
    check = {"dependsOn": ["srv#dev"], "exec": CHECK, "cache": CACHE}
    return tree({"srv": ((), {"dev": server}), "app": (("srv",), {"check": check})})


def _cold(workspace, vx, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A workspace whose app#check was run once (the server with it) and saved."""
    root = workspace(files())
    store = tmp_path / "store"
    args = ["run", "check", "--cache-dir", str(store)]
    first = vx(args, root / "packages/app").assert_ok()
    assert "up\n" in first.out  # the check read the server's marker
    (root / "packages/srv/dist/started").unlink()
    return root, store, args


def test_a_server_only_a_hit_needs_is_not_started(workspace, vx, tmp_path):
    root, store, args = _cold(workspace, vx, tmp_path)
    app = root / "packages/app"

    plan = vx([*args, "--dry"], app).assert_ok()
    assert "  \u2212  srv#dev    not started — only hits need it" in plan.out, repr(plan)
    assert "1 not started" in plan.out, repr(plan)
    doc = json.loads(vx([*args, "--dry=json"], app).assert_ok().out)
    jsonschema.validate(doc, json.loads((REPO / "schemas/plan.json").read_text()))
    assert {t["id"]: t["cacheStatus"] for t in doc["tasks"]} == {
        "srv#dev": "not-started",
        "app#check": "hit-local",
    }

    r = vx([*args, "--summarize=summary.json"], app).assert_ok()
    assert not (root / "packages/srv/dist/started").exists(), repr(r)
    assert "srv#dev • not started: every dependant restored from the cache" in r.out, repr(r)
    assert (app / "dist/out.txt").read_text() == "checked\n"
    summary = json.loads((app / "summary.json").read_text())
    jsonschema.validate(summary, json.loads((REPO / "schemas/summary.json").read_text()))
    assert (summary["ok"], summary["aborted"], summary["notStarted"]) == (True, [], ["srv#dev"])
    assert "1 success · 1 total · not counted: 1 not started" in r.out, repr(r)
    last = vx(["last", "--cache-dir", str(store)], app).assert_ok()
    assert "verdict   passed" in last.out, repr(last)  # the history does not call it a failure


def test_an_edit_that_makes_the_dependant_miss_starts_the_server(workspace, vx, tmp_path):
    root, _store, args = _cold(workspace, vx, tmp_path)
    app = root / "packages/app"
    (app / "src/index.txt").write_text("app, edited\n")

    plan = vx([*args, "--dry"], app).assert_ok()
    assert "not started" not in plan.out, repr(plan)

    r = vx(args, app).assert_ok()
    assert (root / "packages/srv/dist/started").exists(), repr(r)
    assert "up\n" in r.out, repr(r)  # the check executed against the server


def test_a_hit_that_cannot_restore_starts_the_server_first(workspace, vx, tmp_path):
    root, store, args = _cold(workspace, vx, tmp_path)
    app = root / "packages/app"
    (artifact,) = store.glob("*.tar.zst")
    artifact.write_bytes(b"not a cache entry")
    (app / "dist/out.txt").unlink()  # not up to date: the run must read the entry

    r = vx(args, app).assert_ok()
    assert "is unreadable; running it" in r.err, repr(r)
    assert (root / "packages/srv/dist/started").exists(), repr(r)
    assert "up\n" in r.out, repr(r)  # the late server was ready before the check executed
    assert (app / "dist/out.txt").read_text() == "checked\n"


def test_a_requested_server_always_starts(workspace, vx, tmp_path):
    root, _store, args = _cold(workspace, vx, tmp_path)

    app = root / "packages/app"
    requested = [*args[:2], "srv#dev", *args[2:]]
    plan = vx([*requested, "--dry"], app).assert_ok()
    assert "  ◉  app#check" in plan.out, repr(plan)  # its only dependant is still a hit
    assert "not started" not in plan.out, repr(plan)

    (root / "packages/srv/dist/stop").touch()
    r = vx(requested, app).assert_ok()
    assert (root / "packages/srv/dist/started").exists(), repr(r)
    assert "not started" not in r.out, repr(r)
