"""`vx why` on an unchanged key (each ending and cause), a no-cache task, `--run` refusals, a
history from another index version, bare names in a uv workspace, and `//` for a named uv
root."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator
from tests.conftest import REPO
from tests.e2e.runws import tree

from vx.cache.index import SCHEMA_VERSION

if TYPE_CHECKING:
    from pathlib import Path

CACHE = {"inputs": {"files": ["src/**"]}, "outputs": {"files": []}}
# lib fails while ../../flag exists (outside its inputs, so its key holds); app depends on it.
LIB = {"exec": "test ! -f ../../flag", "cache": CACHE}
APP = {"exec": "true", "cache": CACHE, "dependsOn": ["^build"]}


def files() -> dict[str, object]:
    found = tree(
        {
            "lib": ((), {"build": LIB}),
            "app": (("lib",), {"build": APP, "plain": {"exec": "echo plain"}}),
        }
    )
    found[".gitignore"] = "dist/\nflag\n"
    return found


def verdict(vx, root: Path, task: str, *extra: str) -> str:
    lines = vx(["why", task, *extra], root).assert_ok().out.splitlines()
    return next(line for line in lines if line.startswith("  verdict")).split("verdict", 1)[1]


SAME = "    cache key unchanged: re-executed — "


def test_force_names_the_flag(workspace, vx) -> None:
    root = workspace(files())
    vx(["run", "lib#build"], root).assert_ok()
    vx(["run", "lib#build", "--force"], root).assert_ok()
    assert verdict(vx, root, "lib#build") == SAME + "the run did not read the cache (--force)"
    vx(["run", "lib#build", "--cache=local:w"], root).assert_ok()
    assert verdict(vx, root, "lib#build") == (
        SAME + "the run did not read the cache (--cache=local:w)"
    )


def test_a_previous_run_that_wrote_no_cache(workspace, vx) -> None:
    root = workspace(files())
    vx(["run", "lib#build", "--no-cache"], root).assert_ok()
    vx(["run", "lib#build"], root).assert_ok()
    assert verdict(vx, root, "lib#build") == (
        SAME + "the previous run wrote no cache (no cache block, or --no-cache)"
    )


def test_a_task_without_a_cache_block_records_no_cache_outcome(workspace, vx) -> None:
    root = workspace(files())
    vx(["run", "app#plain"], root).assert_ok()
    vx(["run", "app#plain"], root).assert_ok()
    assert verdict(vx, root, "app#plain") == (
        "    cache key unchanged: this run recorded no cache outcome (the task has no cache"
        " block, or the run used --no-cache), so there is no re-run to explain"
    )
    config = root / "packages/app/vx.config.json"
    doc = json.loads(config.read_text())
    doc["tasks"]["plain"]["exec"] = "echo plainer"
    config.write_text(json.dumps(doc))
    vx(["run", "app#plain"], root).assert_ok()
    out = vx(["why", "app#plain"], root).assert_ok().out
    assert "  verdict    cache key changed: (inputs differ)\n" in out
    assert (
        "  the component diff is unavailable: this run saved no entry (the task has no cache"
        " block, or the run used --no-cache), so only the key change is known\n"
    ) in out


def test_runs_beside_a_failed_task(workspace, vx) -> None:
    root = workspace(files())
    (root / "flag").write_text("")
    vx(["run", "app#build", "--continue=always"], root).assert_code(1)
    vx(["run", "app#build", "--continue=always"], root).assert_code(1)
    replay = vx(["last"], root).assert_ok()  # a failed run with no `--` replays too
    assert replay.out.endswith("re-run what failed: vx run lib#build\n")
    assert verdict(vx, root, "app#build") == (
        SAME + "neither run saved it: both ran beside a failed task (a task run past a failed"
        " dependency under --continue is never cached)"
    )
    blocked = vx(["run", "app#build"], root).assert_code(1)
    assert "skipped" in blocked.out
    out = vx(["why", "app#build"], root).assert_ok().out.splitlines()
    assert out[1].endswith(" · skipped · no key")
    assert out[3] == (
        "  verdict    skipped (blocked by lib#build): the task never ran, so there is no re-run"
        " to explain"
    )
    doc = vx(["why", "app#build", "--format", "json"], root).assert_ok().json()
    Draft202012Validator(json.loads((REPO / "schemas/why.json").read_text())).validate(doc)
    assert doc["why"]["latest"]["key"] is None
    (root / "flag").unlink()
    vx(["run", "app#build"], root).assert_ok()
    assert verdict(vx, root, "lib#build") == (
        SAME + "the previous run on this key failed and saved nothing"
    )
    assert verdict(vx, root, "app#build") == (
        SAME + "the previous run ran beside a failed task and was not saved (a task run past a"
        " failed dependency under --continue is never cached)"
    )
    vx(["run", "app#build"], root).assert_ok()
    assert verdict(vx, root, "app#build") == (
        "    cache key unchanged: served from cache, nothing re-ran"
    )


def test_run_refusals_name_what_is_missing(workspace, vx) -> None:
    root = workspace(files())
    vx(["run", "lib#build"], root).assert_ok()
    vx(["run", "app#plain"], root).assert_ok()
    run_id = vx(["last", "--format", "json"], root).assert_ok().json()["invocation"]["runId"]
    none = vx(["why", "lib#build", "--run", "ffffffff"], root).assert_code(1)
    assert none.err == (
        "vx why: no run has an id starting ffffffff — vx last --list shows the runs\n"
    )
    other = vx(["why", "lib#build", "--run", run_id[:13]], root).assert_code(1)
    assert other.err == (
        f"vx why: run {run_id} did not run lib#build — vx last --list shows the runs\n"
    )


def test_a_group_only_history_and_an_include_match(workspace, vx) -> None:
    found = files()
    found["packages/lib/vx.config.json"] = {
        "tasks": {"all": {"dependsOn": ["^build"]}, "build": LIB}
    }
    root = workspace(found)
    vx(["run", "lib#all"], root).assert_ok()
    groups = vx(["why", "lib#all"], root).assert_code(1)
    assert groups.err == (
        "vx why: no run executed a task yet (a group records no row) — ask about a task the"
        " group depends on\n"
    )
    vx(["run", "lib#build"], root).assert_ok()
    near = vx(["why", "uild"], root).assert_code(1)
    assert near.err == "vx why: no recorded run of uild — did you mean build?\n"
    part = vx(["why", "bu"], root).assert_code(1)
    assert part.err == "vx why: no recorded run of bu — did you mean build?\n"


def test_another_index_version_is_refused(workspace, vx) -> None:
    root = workspace(files())
    vx(["run", "lib#build"], root).assert_ok()
    home = next(p for p in root.parent.iterdir() if p.name == "home")
    db = next(home.glob(".vx/*/cache/cache.db"))
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE meta SET value = '99' WHERE name = 'schema_version'")
    refused = vx(["why", "lib#build"], root).assert_code(1)
    assert refused.err == (
        f"vx why: the history in {db} was written by another vx version (index schema v99;"
        f" this vx reads v{SCHEMA_VERSION}) — a vx run there starts a new history\n"
    )
    doc = vx(["last", "--format", "json"], root).assert_code(1)
    assert json.loads(doc.out)["error"]["code"] == "VX_E_CACHE_VERSION"


def test_a_bare_name_resolves_in_a_uv_workspace(workspace, vx) -> None:
    task = {"tasks": {"build": {"exec": "true", "cache": CACHE}}}
    root = workspace(
        {
            "pyproject.toml": '[project]\nname = "root"\nversion = "0"\n'
            '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "packages/alpha/pyproject.toml": '[project]\nname = "alpha"\nversion = "1"\n',
            "packages/alpha/vx.config.json": task,
            "packages/alpha/src/a.py": "",
            "packages/beta/pyproject.toml": '[project]\nname = "beta"\nversion = "1"\n',
            "packages/beta/vx.config.json": task,
            "packages/beta/src/b.py": "",
        }
    )
    vx(["run", "build", "--all"], root).assert_ok()
    out = vx(["why", "build"], root / "packages/beta/src").assert_ok().out
    assert out.startswith("beta#build — run ")
    several = vx(["why", "build"], root).assert_code(1)
    assert "name one: alpha#build, beta#build" in several.err


def test_root_names_a_uv_root_that_has_a_name(workspace, vx) -> None:
    # The history holds rootpkg#build; `//` names that project on the command line.
    root = workspace(
        {
            "pyproject.toml": '[project]\nname = "rootpkg"\nversion = "0"\n'
            '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
            "vx.config.json": {"tasks": {"build": {"exec": "echo made", "cache": CACHE}}},
            "src/r.py": "",
            "packages/alpha/pyproject.toml": '[project]\nname = "alpha"\nversion = "1"\n',
        }
    )
    vx(["run", "//#build"], root).assert_ok()
    (root / "src/r.py").write_text("x = 1\n")
    vx(["run", "//#build"], root).assert_ok()
    out = vx(["why", "//#build"], root / "packages/alpha").assert_ok().out
    assert out.startswith("rootpkg#build — run ")
    assert out == vx(["why", "rootpkg#build"], root).assert_ok().out
    log = vx(["last", "--log", "//#build", "--format", "json"], root).assert_ok().json()
    assert (log["taskId"], log["output"]) == ("rootpkg#build", "made\n")


def test_a_control_character_in_a_name_prints_escaped(workspace, vx) -> None:
    found = files()
    found["packages/lib/src/bad\x1b[31mname.txt"] = "one\n"
    root = workspace(found)
    vx(["run", "lib#build"], root).assert_ok()
    (root / "packages/lib/src/bad\x1b[31mname.txt").write_text("two\n")
    ran = vx(["run", "lib#build", "--format", "json"], root).assert_ok().json()
    assert ran["tasks"][0]["miss"]["name"] == "packages/lib/src/bad\x1b[31mname.txt"
    out = vx(["why", "lib#build"], root).assert_ok().out
    assert "\x1b" not in out
    assert "  verdict    cache key changed: file packages/lib/src/bad\\x1b[31mname.txt\n" in out
    assert "    changed file  packages/lib/src/bad\\x1b[31mname.txt  " in out
    doc = vx(["why", "lib#build", "--format", "json"], root).assert_ok().json()
    assert doc["diff"]["changed"][0]["name"] == "packages/lib/src/bad\x1b[31mname.txt"
    (root / "packages/lib/src/bad\x1b[31mname.txt").write_text("three\n")
    row = vx(["run", "build", "--all"], root).assert_ok().out
    assert "lib#build · packages/lib/src/bad\\x1b[31mname.txt changed" in row
    assert "\x1b" not in row
