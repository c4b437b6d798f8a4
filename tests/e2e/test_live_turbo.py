"""A pnpm + Turbo repo read live (`"tasksFrom": "turbo"`) and through `vx migrate`: the tasks,
the graph `turbo run build --dry=json` draws, the run order it allows, and a second run all
hits; the migrated configs resolve to the very tasks the live reader gave."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from tests.conftest import git, write_tree
from tests.e2e.npmtools import npm_tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.conftest import VxResult

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"

TURBO_REPO: dict[str, Any] = {
    "package.json": {
        "name": "acme",
        "private": True,
        "packageManager": "pnpm@9.12.0",
        "scripts": {"lint": "echo lint the repo"},
    },
    "pnpm-workspace.yaml": "packages:\n  - 'apps/*'\n  - 'packages/*'\n",
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
    "vx.workspace.json": {"tasksFrom": "turbo"},
    "turbo.json": """{
  "$schema": "https://turborepo.com/schema.json",
  "ui": "tui",
  // every task's hash reads these
  "globalDependencies": [".env.defaults"],
  "globalEnv": ["DEPLOY_ENV"],
  "tasks": {
    "build": {"dependsOn": ["^build"], "outputs": ["dist/**"], "outputLogs": "new-only"},
    "core#build": {"dependsOn": ["codegen"], "outputs": ["dist/**"]},
    "codegen": {"outputs": ["gen/**"]},
    "test": {"dependsOn": ["build"], "inputs": ["$TURBO_DEFAULT$", "!README.md", "$TURBO_ROOT$/tsconfig.base.json"]},
    "dev": {"cache": false, "persistent": true},
    "web#export": {"outputs": [".next/**"]},
    "//#lint": {},
  },
}
""",
    ".env.defaults": "DEPLOY_ENV=dev\n",
    "tsconfig.base.json": "{}\n",
    ".gitignore": "node_modules\n.next\n.turbo\ngen\norder.log\n",
    "apps/web/package.json": {
        "name": "web",
        "dependencies": {"ui": "workspace:*"},
        "scripts": {
            "build": (
                "mkdir -p .next/cache && echo page > .next/page.html && echo tmp > .next/cache/t"
                " && echo web >> ../../order.log"
            ),
            "dev": "node -e 'setInterval(() => {}, 1000)'",
            "export": "mkdir -p .next/export && echo html > .next/export/index.html",
            "test": "echo test web",
        },
    },
    "apps/web/turbo.json": {
        "extends": ["//"],
        "tasks": {
            "build": {
                "outputs": [".next/**", "!.next/cache/**"],
                "env": ["NEXT_PUBLIC_*", "API_URL"],
            }
        },
    },
    # ui has no build script: turbo runs its build as a no-op that still waits for ^build
    "packages/ui/package.json": {
        "name": "ui",
        "dependencies": {"core": "workspace:*"},
        "scripts": {"test": "echo test ui"},
    },
    "packages/core/package.json": {
        "name": "core",
        "scripts": {
            "codegen": "mkdir -p gen && echo gen > gen/types.ts && echo codegen >> ../../order.log",
            "build": "mkdir -p dist && echo core > dist/index.js && echo core >> ../../order.log",
            "test": "echo test core",
        },
    },
    "packages/core/.gitignore": "dist/*\n!dist/keep.d.ts\n",
    "packages/core/dist/keep.d.ts": "export type Kept = 1;\n",
}

WARNINGS = [
    (
        'turbo.json: "ui" is not honoured by vx — vx frames each task\'s output; --output-logs'
        " sets how much"
    ),
    (
        'turbo.json: "outputLogs" (at tasks.build) is not honoured by vx — set it per run with'
        " --output-logs"
    ),
    (
        'apps/web/turbo.json: env entry "NEXT_PUBLIC_*" (at tasks.build) is not honoured by vx'
        " — vx reads variables by exact name: list each one"
    ),
    (
        "web#export: its output '.next/**' overlaps web#build's '.next/**' with no dependsOn edge"
        " between them — vx cleans outputs before a run and a restore, so it runs uncached; give"
        " it its own output path, or order the two"
    ),
    (
        "core#build: its outputs cover 1 committed file(s) (dist/keep.d.ts); vx cleans outputs"
        " before a run, so they are taken back with ! and kept"
    ),
]


def _show(vx: Callable[..., VxResult], ws: Path, target: str) -> Any:
    return vx(["show", target, "--format", "json"], ws).assert_ok().json()["config"]


def _graph(vx: Callable[..., VxResult], ws: Path) -> dict[str, list[str]]:
    plan = vx(["run", "build", "--all", "--dry=json"], ws).assert_ok().json()
    return {t["id"]: sorted(t["deps"]) for t in plan["tasks"]}


def _keys(vx: Callable[..., VxResult], ws: Path) -> dict[str, str]:
    plan = vx(["run", "build", "--all", "--dry=json"], ws).assert_ok().json()
    return {t["id"]: t["hash"] for t in plan["tasks"]}


def test_live_turbo_tasks_warnings_and_safe_outputs(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    ws = workspace(TURBO_REPO)
    listing = vx(["show"], ws).assert_ok()
    assert listing.out == (
        "//    .              1 task (no vx config; from turbo.json)\n"
        "core  packages/core  3 tasks (no vx config; from turbo.json)\n"
        "ui    packages/ui    2 tasks (no vx config; from turbo.json)\n"
        "web   apps/web       4 tasks (no vx config; from turbo.json)\n"
    )
    assert listing.err == "".join(f"warning: {w}\n" for w in WARNINGS)
    header = vx(["show", "web"], ws).assert_ok().out.splitlines()[:2]
    assert header == [
        "web — apps/web",
        "no vx config: its tasks are read live from apps/web/turbo.json",
    ]
    web = _show(vx, ws, "web")["tasks"]
    assert web["build"]["dependsOn"] == ["^build"]
    assert web["build"]["cache"]["outputs"]["files"] == [".next/**", "!.next/cache/**"]
    assert web["build"]["cache"]["inputs"]["env"] == ["DEPLOY_ENV", "API_URL"]
    assert web["build"]["cache"]["inputs"]["workspaceFiles"] == [".env.defaults"]
    assert web["dev"]["exec"]["persistent"] is True
    assert web["dev"]["cache"] is None
    assert web["dev"]["exec"]["env"]["passThrough"] == ["DEPLOY_ENV"]
    assert web["export"]["cache"] is None  # overlaps build's .next/** with no edge between
    assert web["test"]["cache"]["inputs"]["files"] == ["**", "!README.md"]
    assert web["test"]["cache"]["inputs"]["workspaceFiles"] == [
        ".env.defaults",
        "tsconfig.base.json",
    ]
    ui = _show(vx, ws, "ui")["tasks"]
    assert ui["build"]["exec"] is None  # a no-op group standing for ^build
    assert ui["build"]["dependsOn"] == ["^build"]
    core = _show(vx, ws, "core")["tasks"]
    assert core["build"]["dependsOn"] == ["codegen"]  # core#build replaces build for core
    assert core["build"]["cache"]["outputs"]["files"] == ["dist/**", "!dist/keep.d.ts"]
    root = _show(vx, ws, "//")["tasks"]
    assert list(root) == ["lint"]
    assert _graph(vx, ws) == {
        "core#build": ["core#codegen"],
        "core#codegen": [],
        "ui#build": ["core#build"],
        "web#build": ["ui#build"],
    }


def _turbo_graph(ws: Path) -> dict[str, list[str]]:
    turbo = npm_tool("turbo", "2", "turbo")
    env = {**os.environ, "TURBO_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1"}
    proc = subprocess.run(
        [str(turbo), "run", "build", "--dry=json"],
        cwd=ws, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"turbo run build --dry=json failed here: {proc.stderr[-400:]}")
    plan = json.loads(proc.stdout)
    return {t["taskId"]: sorted(t["dependencies"]) for t in plan["tasks"]}


def test_turbo_allows_the_order_vx_runs_and_the_second_run_hits(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    ws = workspace(TURBO_REPO)
    turbo = _turbo_graph(ws)
    assert _graph(vx, ws) == turbo  # the same tasks, no-op ui#build included, the same edges
    first = vx(["run", "build", "--all"], ws).assert_ok()
    assert f"[vx] {WARNINGS[0]}\n" in first.err  # a run says what it does not honour too
    ran = (ws / "order.log").read_text().split()
    assert sorted(ran) == ["codegen", "core", "web"]
    position = {f"core#{'codegen' if n == 'codegen' else 'build'}" if n != "web" else "web#build": i
                for i, n in enumerate(ran)}  # fmt: skip

    def done_before(task: str) -> set[str]:
        below: set[str] = set()
        todo = list(turbo[task])
        while todo:
            dep = todo.pop()
            below.add(dep)
            todo.extend(turbo[dep])
        return below & set(position)

    for task, at in position.items():
        assert all(position[dep] < at for dep in done_before(task)), ran
    assert (ws / "packages/core/dist/keep.d.ts").read_text() == "export type Kept = 1;\n"
    assert (ws / "apps/web/.next/page.html").is_file()
    again = vx(["run", "build", "--all"], ws).assert_ok()
    assert "all cached" in again.out + again.err, again
    assert f"[vx] {WARNINGS[0]}\n" in again.err  # a warm replay says it too
    assert (ws / "order.log").read_text().split() == ran
    # turbo.json is among what a warm replay proves unchanged: an edit reaches the next run
    turbo_json = ws / "turbo.json"
    turbo_json.write_text(
        turbo_json.read_text().replace(
            '"codegen": {"outputs"', '"codegen": {"env": ["GEN_MODE"], "outputs"'
        )
    )
    edited = vx(["run", "build", "--all"], ws).assert_ok()
    assert "all cached" not in edited.out + edited.err, edited
    assert (ws / "order.log").read_text().split().count("codegen") == 2


def test_migrate_gives_the_tasks_the_live_reader_gave(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    live = workspace(TURBO_REPO, name="live")
    native = workspace(TURBO_REPO, name="native")
    dry = vx(["migrate", "--dry"], native).assert_ok()
    assert "--- apps/web/vx.config.json\n" in dry.out
    assert not (native / "apps/web/vx.config.json").exists()
    done = vx(["migrate"], native).assert_ok()
    assert done.out == (
        "wrote vx.config.json\n"
        "wrote packages/core/vx.config.json\n"
        "wrote packages/ui/vx.config.json\n"
        "wrote apps/web/vx.config.json\n"
        "wrote vx.workspace.json\n"
        "next: vx run build --all  (turbo.json is no longer read; delete it when you are ready)\n"
    )
    assert json.loads((native / "vx.workspace.json").read_text()) == {}
    shown = vx(["show"], native).assert_ok()
    assert "from turbo.json" not in shown.out
    assert shown.err == ""  # turbo.json is no longer read, so nothing of it is unhonoured
    for project in ("//", "core", "ui", "web"):
        assert _show(vx, native, project) == _show(vx, live, project), project
    assert _graph(vx, native) == _graph(vx, live)
    git(native, "add", "-A")
    git(native, "commit", "-qm", "migrate")
    assert _keys(vx, native) == _keys(vx, live)  # the configs vx migrate wrote move no key
    # One named store for both: their default stores differ whenever the two root commits
    # fell in different seconds, and this asks whether the keys match, not the stores.
    shared = {"VX_CACHE_DIR": str(live.parent / "shared-cache")}
    vx(["run", "build", "--all"], live, env=shared).assert_ok()
    assert (live / "order.log").read_text().split().count("core") == 1
    assert (live / "packages/core/gen/types.ts").is_file()
    for ws in (live, native):  # one store: the migrated repo's keys are the live one's entries
        hit = vx(["run", "build", "--all"], ws, env=shared).assert_ok()
        assert "all cached" in hit.out + hit.err
        assert (ws / "packages/core/gen/types.ts").is_file()


def test_turbo_scm_base_is_the_affected_base(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    ws = workspace(TURBO_REPO)
    first = git(ws, "rev-parse", "HEAD").strip()
    write_tree(ws, {"packages/ui/src/index.ts": "export {}\n"})
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "ui")
    shown = vx(["show", "--affected"], ws, env={"TURBO_SCM_BASE": first}).assert_ok()
    assert [line.split()[0] for line in shown.out.splitlines()] == ["ui", "web"]


def test_a_package_with_its_own_vx_config_keeps_it(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    files = {
        **TURBO_REPO,
        "packages/ui/vx.config.json": {"tasks": {"build": {"exec": "echo own", "dependsOn": []}}},
    }
    ws = workspace(files)
    ui = _show(vx, ws, "ui")["tasks"]
    assert list(ui) == ["build"]
    assert ui["build"]["exec"]["command"] == "echo own"
    assert "packages/ui" in vx(["show"], ws).assert_ok().out.splitlines()[2]
    assert "from turbo.json" not in vx(["show"], ws).assert_ok().out.splitlines()[2]


def test_tasks_from_turbo_without_turbo_json_is_refused(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    files = {k: v for k, v in TURBO_REPO.items() if k != "turbo.json"}
    ws = workspace(files)
    result = vx(["show"], ws).assert_code(1)
    assert result.err == (
        "turbo.json: is not at the workspace root, and tasksFrom (or vx migrate --from) names"
        " turbo — add it there, or drop tasksFrom\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["init", "--keep", "--native"], "vx init: pick one of --keep and --native"),
        (
            ["init", "--native", "--toml"],
            (
                "vx init: in a Turbo or Nx repo vx init writes JSON; --toml is for package.json"
                " scripts in a repo without turbo.json or nx.json — drop it"
            ),
        ),
    ],
)
def test_init_runner_flags_refused(
    workspace: Callable[..., Path], vx: Callable[..., VxResult], args: list[str], message: str
) -> None:
    ws = workspace(TURBO_REPO)
    assert vx(args, ws).assert_code(1).err == message + "\n"


def test_init_keep_and_native(workspace: Callable[..., Path], vx: Callable[..., VxResult]) -> None:
    files = {k: v for k, v in TURBO_REPO.items() if k != "vx.workspace.json"}
    ws = workspace(files)
    kept = vx(["init", "--keep"], ws).assert_ok()
    assert kept.out.splitlines()[0] == "wrote vx.workspace.json"
    assert json.loads((ws / "vx.workspace.json").read_text()) == {"tasksFrom": "turbo"}
    assert "from turbo.json" in vx(["show"], ws).assert_ok().out
    plan = vx(["init", "--dry", "--format", "json"], ws).assert_ok().json()
    jsonschema.validate(plan, json.loads((SCHEMAS / "init.json").read_text()))
    assert [f["path"] for f in plan["files"]][-1] == "vx.workspace.json"
    native = vx(["init"], ws).assert_ok()  # native is the default in a Turbo repo
    assert "wrote apps/web/vx.config.json" in native.out.splitlines()
    assert "note: 10 tasks from turbo.json in 4 vx.config.json files" in native.out
    assert json.loads((ws / "vx.workspace.json").read_text()) == {}
    again = vx(["init"], ws).assert_ok()
    assert "vx is already set up here" in again.out


def test_keep_and_native_are_for_runner_repos(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    ws = workspace({"package.json": {"name": "solo", "scripts": {"build": "echo b"}}})
    result = vx(["init", "--keep"], ws).assert_code(1)
    assert result.err == (
        "vx init: --keep is for a repo with turbo.json or nx.json at its root, and this one has"
        " neither — drop it to map package.json scripts\n"
    )
    assert shutil.which("git")  # the refusal came before anything was written
    assert not (ws / "vx.workspace.json").exists()
