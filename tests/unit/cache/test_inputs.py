"""A task's key components from a real git workspace: what moves the key, and what must not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pytest

from conftest import REPO, git, make_git_workspace
from vx.cache.fileids import FileTable
from vx.cache.inputs import task_components, workspace_fingerprint
from vx.cache.key import Kind, derive_key
from vx.errors import UserError
from vx.git import snapshot
from vx.run.runtime import RuntimeProbe
from vx.workspace.model import (
    CacheInputs,
    CacheOutputs,
    CacheSpec,
    ExecSpec,
    Manager,
    Project,
    ProjectConfig,
    TaskDef,
    Workspace,
)

if TYPE_CHECKING:
    from collections.abc import Callable

TREE: dict[str, Any] = {
    "package.json": {"name": "root", "workspaces": ["packages/*"]},
    "package-lock.json": "{}\n",
    ".gitignore": "*.log\n",
    "tsconfig.base.json": "{}\n",
    "probe.txt": "v1\n",
    "README.md": "readme\n",
    "packages/app/package.json": {"name": "app"},
    "packages/app/src/index.ts": "export {}\n",
    "packages/app/src/util.ts": "u\n",
    "packages/app/src/gen/types.ts": "t\n",
    "packages/app/dist/out.js": "built\n",
    "packages/app/tool.sh": "#!/bin/sh\n",
    "packages/app/nested/package.json": {"name": "nested"},
    "packages/app/nested/x.ts": "x\n",
    "packages/lib/package.json": {"name": "lib"},
    "packages/lib/src/a.ts": "a\n",
}

APP_FILES = {
    "packages/app/package.json",
    "packages/app/src/index.ts",
    "packages/app/src/util.ts",
    "packages/app/src/gen/types.ts",
    "packages/app/src/link",
    "packages/app/tool.sh",
}


def make_tree(root: Path) -> Path:
    make_git_workspace(root, TREE, commit=False)
    (root / "packages/app/tool.sh").chmod(0o755)
    (root / "packages/app/src/link").symlink_to("index.ts")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def make_task(
    *,
    files: tuple[str, ...] | None = None,
    tasks: tuple[str, ...] | None = None,
    description: str = "compile",
    command: str = "tsc -b",
    cached: bool = True,
) -> TaskDef:
    inputs = CacheInputs(
        files=files,
        workspace_files=("tsconfig.base.json",),
        env=("API_URL",),
        tasks=tasks,
        runtime=("cat ../../probe.txt",),
    )
    outputs = CacheOutputs(files=("dist/**",))
    resolved: dict[str, Any] = {"description": description, "exec": {"command": command}}
    if cached:
        resolved["cache"] = {
            "inputs": {"files": files, "workspaceFiles": list(inputs.workspace_files)},
            "outputs": {"files": list(outputs.files)},
        }
    return TaskDef(
        name="build",
        description=description,
        exec_spec=ExecSpec(command=command),
        cache_spec=CacheSpec(inputs, outputs) if cached else None,
        resolved=MappingProxyType(resolved),
    )


def make_workspace(root: Path, task: TaskDef, *, app_dir: str = "packages/app") -> Workspace:
    def project(name: str, rel: str, *, tasks: dict[str, TaskDef] | None = None) -> Project:
        config = ProjectConfig(path=f"{rel}/vx.config.json", tasks=MappingProxyType(tasks or {}))
        return Project(name, root / rel, rel, manifest=f"{rel}/package.json", config=config)

    projects = (
        Project("//", root, ".", manifest="package.json", is_root=True),
        project("app", app_dir, tasks={"build": task}),
        project("lib", "packages/lib"),
        project("nested", f"{app_dir}/nested"),
    )
    return Workspace(root, Manager.NPM, tuple(sorted(projects, key=lambda p: p.name)))


@dataclass(frozen=True)
class Knobs:
    task: TaskDef = field(default_factory=make_task)
    env: dict[str, str] = field(default_factory=dict)
    forward: tuple[str, ...] = ()
    upstream: tuple[tuple[str, str], ...] = (("lib#build", "1111111111111111"),)


def components(root: Path, knobs: Knobs | None = None, *, probe: RuntimeProbe | None = None):
    knobs = knobs or Knobs()
    ws = make_workspace(root, knobs.task)
    app = ws.project("app")
    assert app is not None
    return task_components(
        ws,
        app,
        knobs.task,
        files=FileTable(snapshot(root)),
        env=knobs.env,
        forward=knobs.forward,
        upstream=knobs.upstream,
        runtime=probe or RuntimeProbe(env={"PATH": os.environ["PATH"]}),
    )


def compute(root: Path, knobs: Knobs | None = None) -> str:
    return derive_key(components(root, knobs))


def file_names(comps) -> set[str]:
    return {c.name for c in comps if c.kind is Kind.FILE}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "ws")


def _edit(rel: str, text: str = "edited\n") -> Callable[[Path], None]:
    return lambda root: (root / rel).write_text(text)


def _relink(root: Path) -> None:
    (root / "packages/app/src/link").unlink()
    (root / "packages/app/src/link").symlink_to("util.ts")


def _to_symlink(root: Path) -> None:
    (root / "packages/app/src/util.ts").unlink()
    (root / "packages/app/src/util.ts").symlink_to("index.ts")


def _revert(root: Path) -> None:
    path = root / "packages/app/src/index.ts"
    original = path.read_bytes()
    path.write_text("edited\n")
    path.write_bytes(original)


@dataclass(frozen=True)
class Case:
    mutate: Callable[[Path], None] | None = None
    before: Knobs = field(default_factory=Knobs)
    after: Knobs = field(default_factory=Knobs)


CHANGES = {
    "edit a file": Case(_edit("packages/app/src/index.ts")),
    "chmod +x": Case(lambda r: (r / "packages/app/src/util.ts").chmod(0o755)),
    "file to symlink": Case(_to_symlink),
    "symlink target": Case(_relink),
    "untracked file": Case(_edit("packages/app/src/new.ts")),
    "delete a file": Case(lambda r: (r / "packages/app/src/util.ts").unlink()),
    "staged rename": Case(lambda r: git(r, "mv", "packages/app/src/util.ts", "packages/app/u.ts")),
    "edit lockfile": Case(_edit("package-lock.json")),
    "add lockfile": Case(_edit("yarn.lock")),
    "manifest": Case(_edit("packages/app/package.json", '{"name": "app", "version": "2"}\n')),
    "workspace file": Case(_edit("tsconfig.base.json", '{"strict": true}\n')),
    "runtime output": Case(_edit("probe.txt", "v2\n")),
    "env value": Case(before=Knobs(env={"API_URL": "a"}), after=Knobs(env={"API_URL": "b"})),
    "unset vs empty": Case(after=Knobs(env={"API_URL": ""})),
    "forward args": Case(after=Knobs(forward=("--watch",))),
    "forward order": Case(before=Knobs(forward=("a", "b")), after=Knobs(forward=("b", "a"))),
    "upstream key": Case(after=Knobs(upstream=(("lib#build", "2222222222222222"),))),
    "config": Case(after=Knobs(task=make_task(command="tsc -b --force"))),
}

SAME = {
    "description only": Case(after=Knobs(task=make_task(description="build it"))),
    "nested project file": Case(_edit("packages/app/nested/x.ts")),
    "declared output": Case(_edit("packages/app/dist/out.js")),
    "new output file": Case(_edit("packages/app/dist/new.js")),
    "other project": Case(_edit("packages/lib/src/a.ts")),
    "unrelated root file": Case(_edit("README.md")),
    "ignored file": Case(_edit("packages/app/src/debug.log")),
    "reverted edit": Case(_revert),
    "undeclared env": Case(after=Knobs(env={"OTHER": "x"})),
}


@pytest.mark.parametrize("case", CHANGES.values(), ids=CHANGES.keys())
def test_each_input_moves_the_key(tree: Path, case: Case) -> None:
    before = compute(tree, case.before)
    if case.mutate:
        case.mutate(tree)
    assert compute(tree, case.after) != before


@pytest.mark.parametrize("case", SAME.values(), ids=SAME.keys())
def test_what_is_not_an_input_leaves_the_key(tree: Path, case: Case) -> None:
    before = compute(tree, case.before)
    if case.mutate:
        case.mutate(tree)
    assert compute(tree, case.after) == before


def test_default_inputs_are_the_project_less_outputs_and_nested(tree: Path) -> None:
    comps = components(tree)
    assert file_names(comps) == APP_FILES | {"tsconfig.base.json"}
    assert {c.kind for c in comps} == {
        Kind.FORMAT,
        Kind.WORKSPACE,
        Kind.PACKAGE,
        Kind.CONFIG,
        Kind.FILE,
        Kind.ENV,
        Kind.RUNTIME,
        Kind.UPSTREAM,
    }
    assert comps[0].kind is Kind.FORMAT
    assert [c.name for c in comps if c.kind is Kind.WORKSPACE] == ["package-lock.json"]
    assert [c.name for c in comps if c.kind is Kind.PACKAGE] == ["packages/app/package.json"]
    assert "absent" not in {c.digest for c in comps}
    assert [c.digest for c in comps if c.kind is Kind.ENV] == ["unset"]


def test_declared_globs_and_negations(tree: Path) -> None:
    knobs = Knobs(task=make_task(files=("src/**", "!src/gen/**", "tool.sh")))
    before = components(tree, knobs)
    assert file_names(before) == {
        "packages/app/src/index.ts",
        "packages/app/src/util.ts",
        "packages/app/src/link",
        "packages/app/tool.sh",
        "tsconfig.base.json",
    }
    (tree / "packages/app/src/gen/types.ts").write_text("edited\n")
    (tree / "packages/app/package.json").write_text('{"name": "app"}\n')
    assert derive_key(components(tree, knobs)) != derive_key(before)  # the manifest still counts
    git(tree, "checkout", "--", "packages/app/package.json")
    assert derive_key(components(tree, knobs)) == derive_key(before)


def test_uncached_task_keys_on_config_and_upstream_only(tree: Path) -> None:
    knobs = Knobs(task=make_task(cached=False), forward=("--x",))
    comps = components(tree, knobs)
    assert {c.kind for c in comps} == {
        Kind.FORMAT,
        Kind.WORKSPACE,
        Kind.PACKAGE,
        Kind.CONFIG,
        Kind.FORWARD,
        Kind.UPSTREAM,
    }
    (tree / "packages/app/src/index.ts").write_text("edited\n")
    assert derive_key(components(tree, knobs)) == derive_key(comps)


@pytest.mark.parametrize(
    ("entries", "kept"),
    [
        (None, ["//#lint", "app#codegen", "lib#build", "lib#lint"]),
        ((), []),
        (("^build",), ["lib#build"]),
        (("codegen",), ["app#codegen"]),
        (("lib#lint", "codegen"), ["app#codegen", "lib#lint"]),
        (("^nothing",), []),
        (("//#lint",), ["//#lint"]),
        (("^lint",), ["//#lint", "lib#lint"]),
    ],
)
def test_inputs_tasks_filters_upstream(tree: Path, entries, kept) -> None:
    upstream = (
        ("lib#build", "1" * 16),
        ("lib#lint", "2" * 16),
        ("app#codegen", "3" * 16),
        ("//#lint", "4" * 16),
    )
    knobs = Knobs(task=make_task(tasks=entries), upstream=upstream)
    assert [c.name for c in components(tree, knobs) if c.kind is Kind.UPSTREAM] == kept


@pytest.mark.parametrize("entry", ["", "^", "lib#", "#build", "^lib#build", "a b", "^^build"])
def test_malformed_inputs_tasks_entry_is_refused(tree: Path, entry: str) -> None:
    with pytest.raises(UserError) as caught:
        components(tree, Knobs(task=make_task(tasks=(entry,))))
    assert caught.value.message == (
        f"app#build: cache.inputs.tasks: '{entry}' names no task"
        " — write 'build', '^build', 'pkg#build' or '//#build'"
    )


def test_filter_reaching_a_member_only_through_a_group_is_refused(tree: Path) -> None:
    ws = make_workspace(tree, make_task(tasks=("lint",)))
    app = ws.project("app")
    assert app is not None
    with pytest.raises(UserError) as caught:
        task_components(
            ws,
            app,
            make_task(tasks=("lint",)),
            files=FileTable(snapshot(tree)),
            env={},
            forward=(),
            upstream=(("app#ci", "1" * 16),),
            runtime=RuntimeProbe(),
            group_members={"app#ci": ("app#build-all", "app#lint")},
        )
    assert caught.value.message == (
        "app#build: cache.inputs.tasks: 'lint' reaches app#lint only through the group app#ci"
        " and selects nothing — name 'ci' or depend on app#lint directly"
    )


def test_runtime_probe_runs_once_per_command_and_dir(tree: Path) -> None:
    probe = RuntimeProbe(env={"PATH": os.environ["PATH"]})
    table = FileTable(snapshot(tree))
    first = components(tree, probe=probe)
    components(tree, probe=probe)
    assert probe.runs == 1
    (tree / "probe.txt").write_text("v2\n")
    assert components(tree, probe=probe) == first  # remembered for the run, not re-read
    assert workspace_fingerprint(table) == tuple(c for c in first if c.kind is Kind.WORKSPACE)


def test_runtime_probe_failure_is_folded_and_a_hang_refused(tree: Path) -> None:
    probe = RuntimeProbe(env={"PATH": os.environ["PATH"]}, timeout=0.5)
    assert probe.digest("exit 3", tree) != probe.digest("exit 4", tree)
    with pytest.raises(UserError) as caught:
        probe.digest("sleep 30", tree)
    assert caught.value.message == (
        f"`sleep 30` did not finish within 0.5s in {tree}"
        " — make it quicker or drop it from the task's inputs"
    )


KEY_SCRIPT = """
import sys
from pathlib import Path
sys.path[:0] = [{src!r}, {tests!r}, {here!r}]
import test_inputs
print(test_inputs.compute(Path(sys.argv[1])))
"""


def _key_in_subprocess(root: Path, script: Path) -> str:
    out = subprocess.run(
        [sys.executable, str(script), str(root)], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_key_is_stable_across_processes_and_checkouts(tree: Path, tmp_path: Path) -> None:
    script = tmp_path / "key.py"
    here = Path(__file__).resolve().parent
    script.write_text(
        KEY_SCRIPT.format(src=str(REPO / "src"), tests=str(REPO / "tests"), here=str(here))
    )
    key = compute(tree)
    assert _key_in_subprocess(tree, script) == key
    assert _key_in_subprocess(tree, script) == key
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tree), str(clone)], check=True)
    assert _key_in_subprocess(clone, script) == key
    outer = make_git_workspace(tmp_path / "outer", {"other.txt": "o\n"})
    nested = outer / "deep/ws"
    shutil.copytree(tree, nested, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    git(outer, "add", "-A")
    git(outer, "commit", "-q", "-m", "nested")
    assert compute(nested) == key


def test_member_linked_from_elsewhere_reads_its_real_files(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "ws")
    git(root, "mv", "packages/app", "real-app")
    (root / "packages/app").symlink_to("../real-app")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "link")
    comps = components(root)
    assert [c.name for c in comps if c.kind is Kind.PACKAGE] == ["real-app/package.json"]
    assert "absent" not in {c.digest for c in comps}
    names = file_names(comps)
    assert names == {p.replace("packages/app/", "real-app/") for p in APP_FILES} | {
        "tsconfig.base.json"
    }
