"""`vx run --dry` and `--graph`: the plan says what the next run does, and writes nothing."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from tests.conftest import REPO, redact
from tests.e2e.cachews import query, tree_bytes
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

PLAN_SCHEMA = json.loads((REPO / "schemas/plan.json").read_text())
CACHED = {
    "dependsOn": ["^build"],
    "exec": "mkdir -p dist && cp src/index.txt dist/out.txt",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}
LINT = {"exec": "touch linted"}  # uncached; its file says whether it ran


def layout() -> dict[str, Any]:
    """a ← b ← c, each with a cached build; b also has an uncached lint."""
    return tree(
        {
            "a": ((), {"build": CACHED}),
            "b": (("a",), {"build": CACHED, "lint": LINT}),
            "c": (("b",), {"build": CACHED}),
        }
    )


def plan_json(vx, root: Path, *args: str) -> dict[str, Any]:
    result = vx(["run", *args, "--dry=json"], root).assert_ok()
    doc = json.loads(result.out)
    jsonschema.validate(doc, PLAN_SCHEMA)
    return doc


def predicted(doc: dict[str, Any]) -> dict[str, str]:
    return {t["id"]: t["cacheStatus"] for t in doc["tasks"]}


SUMMARY_WORD = {"hit-local": "cache-hit", "miss": "success", "no-cache": "success"}


def warmed(workspace, vx) -> Path:
    """The workspace after one full run, with b's source edited since: a hits, b and c miss."""
    root = workspace(layout())
    vx(["run", "build", "lint", "--all"], root).assert_ok()
    (root / "packages/b/linted").unlink()
    (root / "packages/b/src/index.txt").write_text("b, edited\n")
    return root


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((), {"a#build": "hit-local", "b#build": "miss", "c#build": "miss"}),
        (("--force",), {"a#build": "miss", "b#build": "miss", "c#build": "miss"}),
        (("--cache=local:r",), {"a#build": "hit-local", "b#build": "miss", "c#build": "miss"}),
        (("--cache=local:w",), {"a#build": "miss", "b#build": "miss", "c#build": "miss"}),
        (("--no-cache",), {"a#build": "no-cache", "b#build": "no-cache", "c#build": "no-cache"}),
    ],
    ids=["default", "force", "read-only", "write-only", "no-cache"],
)
def test_the_plan_predicts_what_the_following_run_does(workspace, vx, flags, expected) -> None:
    root = warmed(workspace, vx)
    args = ("build", "lint", "--all", *flags)
    doc = plan_json(vx, root, *args)
    assert predicted(doc) == {**expected, "b#lint": "no-cache"}
    assert doc["cache"] == {
        "read": not flags or flags == ("--cache=local:r",),
        "write": flags in ((), ("--force",), ("--cache=local:w",)),
    }

    ran = vx(["run", *args, "--format", "json"], root).assert_ok()
    rows = {t["id"]: t for t in ran.json()["tasks"]}
    for task in doc["tasks"]:
        row = rows[task["id"]]
        assert row["status"] == SUMMARY_WORD[task["cacheStatus"]], task["id"]
        assert row.get("noCache", False) == (task["cacheStatus"] == "no-cache"), task["id"]
        assert row["hash"] in (None, task["hash"]), task["id"]


def test_the_text_plan_and_its_forecast(workspace, vx, tmp_path: Path) -> None:
    root = workspace(layout())
    first = vx(["run", "build", "lint", "--all", "--dry"], root).assert_ok()
    assert first.err == ""
    assert redact(first.out, tmp_path) == (
        "planned (nothing runs):\n"
        "  ▶  a#build  cache miss — would exec  [HASH]\n"
        "  ▶  b#build  cache miss — would exec  [HASH]\n"
        "  ·  b#lint   no cache — would exec    [HASH]\n"
        "  ▶  c#build  cache miss — would exec  [HASH]\n"
        "\n"
        "4 tasks planned: 0 cache hits, 4 would run\n"
    )
    vx(["run", "build", "--all"], root).assert_ok()
    (root / "packages/b/src/index.txt").write_text("b, edited\n")
    again = vx(["run", "build", "lint", "--all", "--dry"], root).assert_ok()
    assert redact(again.out, tmp_path) == (
        "planned (nothing runs):\n"
        "  ◉  a#build  cache hit (local)        [HASH]\n"
        "  ▶  b#build  cache miss — would exec  [HASH]  ~[DURATION]\n"
        "  ·  b#lint   no cache — would exec    [HASH]\n"
        "  ▶  c#build  cache miss — would exec  [HASH]  ~[DURATION]\n"
        "\n"
        "4 tasks planned: 1 cache hit, 3 would run\n"
        "predicted: ~[DURATION] wall · ~[DURATION] total execution"
        " · 1 task without history (+?)\n"
    )
    doc = plan_json(vx, root, "build", "lint", "--all")
    p50 = {t["id"]: t.get("p50Ms") for t in doc["tasks"]}
    assert p50["b#lint"] is None
    assert all(isinstance(p50[t], float) for t in ("a#build", "b#build", "c#build"))
    outlook = doc["predicted"]
    assert outlook["unknownCount"] == 1
    assert outlook["criticalPath"] == ["b#build", "c#build"]
    assert outlook["wallMs"] == pytest.approx(p50["b#build"] + p50["c#build"], abs=0.01)
    assert outlook["workMs"] == outlook["wallMs"]


def test_the_graph_in_dot(workspace, vx, tmp_path: Path) -> None:
    root = workspace(layout())
    vx(["run", "build", "--all"], root).assert_ok()
    (root / "packages/c/src/index.txt").write_text("c, edited\n")
    shown = vx(["run", "c#build", "--graph"], root).assert_ok()
    dot = (
        "digraph vx {\n"
        "  rankdir=LR;\n"
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];\n'
        '  "a#build" [label="a#build\\nhit-local", fillcolor=green];\n'
        '  "b#build" [label="b#build\\nhit-local", fillcolor=green];\n'
        '  "c#build" [label="c#build\\nmiss", fillcolor=orange];\n'
        '  "b#build" -> "a#build";\n'
        '  "c#build" -> "b#build";\n'
        "}\n"
    )
    assert shown.out == dot
    assert shown.err == ""

    written = vx(["run", "c#build", "--graph=out/graph.dot"], root).assert_ok()
    assert written.out == ""
    target = root / "out/graph.dot"
    assert redact(written.err, tmp_path) == f"[vx] task graph written to {target}\n".replace(
        str(tmp_path), "[TMP]"
    )
    assert target.read_text() == dot


def test_a_graph_path_that_cannot_be_written_is_one_line(workspace, vx) -> None:
    root = workspace(layout())
    refused = vx(["run", "c#build", "--graph=package.json/sub/graph.dot"], root).assert_code(1)
    target = root / "package.json/sub/graph.dot"
    assert refused.out == ""
    assert refused.err == (
        f"--graph: cannot write {target}: Not a directory; name a file in a writable directory\n"
    )


def test_a_plan_executes_nothing_and_writes_nothing(workspace, vx, tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = workspace(layout())
    for args in (["--dry"], ["--dry=json"], ["--graph"]):
        vx(["run", "build", "lint", "--all", *args], root).assert_ok()
    assert not (root / "packages/b/linted").exists()
    assert not list(root.glob("packages/*/dist"))
    # no store, no history, no remembered identity: only the stored `--dry=json` answer
    assert [k.rpartition("/")[0] for k in tree_bytes(home)] == [".vx/warm/plans"]

    vx(["run", "build", "--all"], root).assert_ok()
    vx(["run", "build", "--all"], root).assert_ok()  # all up to date: the warm path records it
    (root / "packages/b/src/index.txt").write_text("b, edited\n")
    (store,) = home.glob(".vx/*/cache")
    assert list(home.glob(".vx/warm/*"))

    def state() -> tuple[dict[str, bytes | str], ...]:
        files = {
            k: v
            for k, v in tree_bytes(home).items()
            if not k.endswith(("-shm", "-wal")) and not k.startswith(".vx/warm/plans/")
        }
        work = {k: v for k, v in tree_bytes(root).items() if not k.startswith(".git/")}
        return files, work

    def rows() -> list[list[Any]]:
        return [
            query(store, f"SELECT * FROM {table}")  # noqa: S608  fixed names
            for table in ("entries", "entry_inputs", "runs", "invocations")
        ]

    before, history = state(), rows()
    plan = vx(["run", "build", "lint", "--all", "--dry"], root).assert_ok()
    assert plan.out.startswith("planned (nothing runs):\n")
    doc = plan_json(vx, root, "build", "--all")
    assert predicted(doc)["b#build"] == "miss"  # a dry run never replays the warm snapshot
    vx(["run", "build", "--all", "--force", "--graph"], root).assert_ok()
    assert state() == before  # b's stale dist/ is not cleaned; no snapshot is touched
    assert rows() == history
    assert not (root / "packages/b/linted").exists()


def test_excluded_dependencies_are_keyed_as_a_full_run_keys_them(workspace, vx) -> None:
    root = workspace(layout())
    full = {t["id"]: t["hash"] for t in plan_json(vx, root, "c#build")["tasks"]}
    doc = plan_json(vx, root, "c#build", "--exclude-dependencies")
    assert predicted(doc) == {"a#build": "excluded", "b#build": "excluded", "c#build": "miss"}
    assert {t["id"]: t["hash"] for t in doc["tasks"]} == full
    ran = vx(["run", "c#build", "--exclude-dependencies", "--format", "json"], root).assert_ok()
    assert {t["id"]: t["hash"] for t in ran.json()["tasks"]} == {"c#build": full["c#build"]}


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--dry", "--graph"], "--dry and --graph both plan without running: pick one"),
        (
            ["--graph=g.dot", "--summarize"],
            "--summarize writes about a run, and --graph runs nothing: drop one of them",
        ),
        (
            ["--dry", "--format", "json"],
            "--format json prints a run's summary; for the plan as JSON use --dry=json",
        ),
        (
            ["--graph", "--format=json"],
            "--format json and a bare --graph both print on stdout: write --graph=<path>",
        ),
        (["--dry=yaml"], '--dry takes text or json, not "yaml" — see vx run --help'),
    ],
)
def test_planning_flags_that_clash_are_refused(workspace, vx, args, line) -> None:
    root = workspace(layout())
    refused = vx(["run", "c#build", *args], root).assert_code(1)
    assert refused.err == line + "\n"
    assert not (root / "g.dot").exists()


def test_a_refusal_under_dry_json_is_a_json_document(workspace, vx) -> None:
    root = workspace(layout())
    refused = vx(["run", "c#nope", "--dry=json"], root).assert_code(1)
    doc = json.loads(refused.out)
    assert doc["ok"] is False
    assert doc["error"]["code"] == "VX_E_UNKNOWN_TASK"
    assert refused.err.count("\n") == 1
