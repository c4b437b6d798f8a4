"""`vx last`, `vx why` and the miss reasons end to end, over a real history of several runs."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from jsonschema import Draft202012Validator
from tests.conftest import REPO, redact, write_tree
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

CACHE = {"inputs": {"files": ["src/**"], "env": ["API_URL"]}, "outputs": {"files": ["dist/**"]}}
BUILD = {"exec": "mkdir -p dist && cp src/index.txt dist/", "cache": CACHE, "dependsOn": ["^build"]}
TEST = {"exec": "sh check.sh", "cache": {"inputs": {"files": ["src/**"]}}}
CHECK = "grep -q ok src/index.txt || { echo 'src/index.txt:1: not ok'; exit 3; }\n"
HEX = re.compile(r"\b[0-9a-f]{16}\b|\b1006\d\d:[0-9a-f]{40}\b|\b[0-9a-f]{32}\b")


def schema(name: str) -> Draft202012Validator:
    doc = json.loads((REPO / "schemas" / name).read_text())
    Draft202012Validator.check_schema(doc)
    return Draft202012Validator(doc)


def history_ws(workspace) -> Path:
    """core ← lib ← app, each with a cached build; app also has a test."""
    files = tree(
        {
            "core": ((), {"build": BUILD}),
            "lib": (("core",), {"build": BUILD}),
            "app": (("lib",), {"build": BUILD, "test": TEST}),
        }
    )
    files["package-lock.json"] = {"lockfileVersion": 3}
    files["packages/app/check.sh"] = CHECK
    return workspace(files)


def reasons(result) -> dict[str, str]:
    """`pkg#task → reason` from a frame's miss rows."""
    out = {}
    for line in result.out.splitlines():
        m = re.search(r" miss +(\S+#\S+) · (.+)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def scrub(text: str, root: Path) -> str:
    text = redact(text, root)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "[TIME]", text)
    text = re.sub(r"run [0-9a-f-]{36}", "run [RUNID]", text)
    return HEX.sub("[ID]", text)


def test_why_and_miss_rows_name_each_cause(workspace, vx):
    root = history_ws(workspace)
    first = vx(["run", "build", "--all"], root).assert_ok()
    assert reasons(first) == dict.fromkeys(("core#build", "lib#build", "app#build"), "first run")

    write_tree(root, {"packages/core/src/index.txt": "core edited\n"})
    edit = vx(["run", "build", "--all"], root).assert_ok()
    assert reasons(edit) == {
        "core#build": "packages/core/src/index.txt changed",
        "lib#build": "via core#build",
        "app#build": "via lib#build",
    }
    why = vx(["why", "app#build"], root).assert_ok()
    assert scrub(why.out, root) == (
        "app#build — run [RUNID]\n"
        "  this run   [TIME] · success · executed · key [HASH]\n"
        "  previous   [TIME] · success · key [HASH]\n"
        "  verdict    cache key changed: upstream lib#build\n"
        "\n"
        "  what changed (1 component, 6 unchanged):\n"
        "    changed upstream  lib#build  [HASH] → [HASH]\n"
        "\n"
        "  root cause:\n"
        "    app#build ← lib#build ← core#build ← file packages/core/src/index.txt\n"
        "\n"
        "  what to do:\n"
        "    file  an edit re-runs by design; a file the task does not read belongs out of"
        " cache.inputs.files\n"
    )
    doc = vx(["why", "app#build", "--format", "json"], root).assert_ok().json()
    schema("why.json").validate(doc)
    assert doc["roots"][0]["chain"] == ["app#build", "lib#build", "core#build"]
    assert doc["roots"][0]["entries"][0]["name"] == "packages/core/src/index.txt"

    env_run = vx(["run", "build", "--all"], root, env={"API_URL": "https://x"}).assert_ok()
    assert set(reasons(env_run).values()) == {"env API_URL"}
    verdict = vx(["why", "core#build"], root).assert_ok().out.splitlines()[3]
    assert verdict == "  verdict    cache key changed: env API_URL"

    write_tree(root, {"package-lock.json": {"lockfileVersion": 2}})  # still unreadable: whole
    lock = vx(["run", "build", "--all"], root, env={"API_URL": "https://x"}).assert_ok()
    assert set(reasons(lock).values()) == {"package-lock.json changed"}
    verdict = vx(["why", "lib#build"], root).assert_ok().out.splitlines()[3]
    assert (
        verdict
        == "  verdict    cache key changed: workspace package-lock.json, upstream core#build"
    )

    same = vx(["run", "build", "--all"], root, env={"API_URL": "https://x"}).assert_ok()
    assert reasons(same) == {}
    hit = vx(["why", "build"], root / "packages" / "app").assert_ok().out
    assert "verdict    cache key unchanged: served from cache, nothing re-ran" in hit


def test_last_replays_lists_and_explains_a_failure(workspace, vx):
    root = history_ws(workspace)
    none = vx(["last"], root)
    none.assert_code(1)
    assert none.err == "vx last: no recorded runs yet — run something first\n"
    assert vx(["last", "--list"], root).assert_ok().out == "no recorded runs\n"

    vx(["run", "build", "--all"], root).assert_ok()
    vx(["run", "app#test", "--", "a b"], root).assert_code(1)

    replay = vx(["last"], root).assert_ok()
    lines = scrub(replay.out, root).splitlines()
    assert lines[1:3] == ["  verdict   failed (exit 1)", "  command   $ vx run app#test -- 'a b'"]
    assert lines[-1] == "re-run what failed: vx run app#test -- 'a b'"
    assert "  failed  miss  app#test  [DURATION]  key [HASH]  failed (exit 3)" in lines
    assert "failed (exit 3)" in replay.out

    doc = vx(["last", "--format", "json"], root).assert_ok().json()
    schema("last.json").validate(doc)
    failed = [t for t in doc["tasks"] if t["status"] == "failed"]
    assert failed[0]["output"] == "src/index.txt:1: not ok\n"
    assert failed[0]["locations"] == [
        {"file": str((root / "packages/app/src/index.txt").resolve()), "line": 1}
    ]

    listed = vx(["last", "--list", "5"], root).assert_ok().out.splitlines()
    assert [line.split()[0] for line in listed] == ["failed", "passed"]
    listing = vx(["last", "--list", "--format", "json"], root).assert_ok().json()
    schema("last.json").validate(listing)
    prefix = listed[1].split()[2]
    assert len(prefix) == 13
    older = vx(["last", prefix], root).assert_ok().out
    assert "  verdict   passed" in older

    green = vx(["last", "--list", "--failed"], root).assert_ok().out
    assert green.startswith("failed")
    log = vx(["last", "--log", "app#test"], root).assert_ok()
    assert log.out == "src/index.txt:1: not ok\n"
    log_doc = vx(["last", "--log", "core#build", "--format", "json"], root).assert_ok().json()
    schema("last.json").validate(log_doc)
    assert log_doc["source"] == "cache"
    unknown = vx(["last", "0123456789ab"], root)
    unknown.assert_code(1)
    assert "vx last --list" in unknown.err


def test_why_refuses_by_name(workspace, vx):
    root = history_ws(workspace)
    nothing = vx(["why", "build"], root)
    nothing.assert_code(1)
    assert nothing.err == "vx why: nothing has run yet — run something first\n"
    vx(["run", "build", "--all"], root).assert_ok()
    several = vx(["why", "build"], root)
    several.assert_code(1)
    assert several.err == (
        "vx why: build ran in several projects; name one: app#build, core#build, lib#build\n"
    )
    typo = vx(["why", "lib#buidl"], root)
    typo.assert_code(1)
    assert typo.err == "vx why: no recorded run of lib#buidl — did you mean lib#build?\n"
    first = vx(["why", "lib#build"], root).assert_ok().out
    assert "verdict    first recorded run of the task: nothing to compare" in first


def test_each_miss_row_names_what_vx_why_names(workspace, vx):
    """Edit, env change, lockfile change, upstream change two levels down: the summary's
    `miss` of every task is the first component `vx why` lists for it."""
    root = history_ws(workspace)
    vx(["run", "build", "--all"], root).assert_ok()
    steps = [
        ({"packages/core/src/index.txt": "core edited\n"}, {}),
        ({}, {"API_URL": "https://x"}),
        ({"package-lock.json": {"lockfileVersion": 3, "packages": {}}}, {"API_URL": "https://x"}),
    ]
    seen = set()
    for edit, env in steps:
        write_tree(root, edit)
        doc = vx(["run", "build", "--all", "--format", "json"], root, env=env).assert_ok().json()
        for row in doc["tasks"]:
            why = vx(["why", row["id"], "--format", "json"], root).assert_ok().json()
            first = why["diff"]["changed"][0]
            assert (row["miss"]["kind"], row["miss"]["name"]) == (first["kind"], first["name"])
            assert why["why"]["verdict"].startswith(
                f"cache key changed: {first['kind']} {first['name']}"
            )
            seen.add(row["miss"]["kind"])
    assert seen == {"file", "upstream", "env", "workspace"}


def test_last_folds_hits_past_sixteen_and_json_lists_every_row(workspace, vx):
    cached = {"exec": "true", "cache": {"inputs": {"files": ["src/**"]}}}
    root = workspace(tree({f"p{i:02d}": ((), {"build": cached}) for i in range(20)}))
    vx(["run", "build", "--all"], root).assert_ok()
    vx(["run", "build", "--all"], root).assert_ok()
    out = vx(["last"], root).assert_ok().out.splitlines()
    hit_rows = [line for line in out if line.startswith("  success  fresh")]
    assert len(hit_rows) == 16
    assert out[-1] == "  … +4 more cache hits"
    doc = vx(["last", "--format", "json"], root).assert_ok().json()
    schema("last.json").validate(doc)
    assert len(doc["tasks"]) == 20
