"""The audit's judgement of a trace, and the config patches it makes (real workspaces on disk)."""

from __future__ import annotations

import json
import tomllib
from typing import TYPE_CHECKING

from vx.audit.check import TaskView, WorkspaceView, audit_task
from vx.audit.patch import plan_patches
from vx.events import AuditFinding, AuditReport
from vx.trace.parse import Trace
from vx.workspace.load import load_workspace

if TYPE_CHECKING:
    from pathlib import Path


def _ws(root: Path, config: str, name: str = "vx.config.json") -> Path:
    (root / "packages/app/src").mkdir(parents=True)
    (root / "package.json").write_text(
        json.dumps(
            {
                "name": "root",
                "workspaces": ["packages/*"],
                "devDependencies": {"typescript": "5.0.0"},
            }
        )
    )
    (root / "packages/app/package.json").write_text(json.dumps({"name": "app"}))
    (root / "packages/app" / name).write_text(config)
    return root


def _trace(root: Path, reads: tuple[str, ...] = (), writes: tuple[str, ...] = ()) -> Trace:
    return Trace(
        reads=frozenset(str(root / r) for r in reads),
        writes=frozenset(str(root / w) for w in writes),
        execs=frozenset(),
        renames=(),
        unlinks=frozenset(),
    )


def _audit(root: Path, trace: Trace) -> AuditReport:
    ws = load_workspace(root)
    [app] = [p for p in ws.projects if p.name == "app"]
    view = TaskView("app#build", app, app.tasks["build"], frozenset(), frozenset())
    return audit_task(trace, WorkspaceView(ws, frozenset), view)


def test_a_root_toolchain_read_names_the_root_dependency(tmp_path: Path) -> None:
    config = {"tasks": {"build": {"exec": "tsc", "cache": {"outputs": {"files": ["dist/**"]}}}}}
    root = _ws(tmp_path, json.dumps(config))
    tool = root / "node_modules/typescript/bin"
    tool.mkdir(parents=True)
    (tool / "tsc").write_text("")
    (root / "node_modules/.bin").mkdir()
    (root / "node_modules/.bin/tsc").symlink_to("../typescript/bin/tsc")
    report = _audit(root, _trace(root, reads=("node_modules/.bin/tsc",)))
    assert report.findings == (
        AuditFinding(
            "toolchain",
            "node_modules/.bin/tsc",
            None,
            "typescript",
            "runs node_modules/.bin/tsc from the root dependency typescript",
        ),
    )
    assert report.faults == ()


def test_default_inputs_cover_the_package_and_reading_back_a_write_is_no_finding(
    tmp_path: Path,
) -> None:
    config = {"tasks": {"build": {"exec": "x", "cache": {"outputs": {"files": ["dist/**"]}}}}}
    root = _ws(tmp_path, json.dumps(config))
    (root / "packages/app/dist").mkdir()
    (root / "packages/app/dist/a.js").write_text("")
    trace = _trace(
        root,
        reads=("packages/app/src/a.ts", "packages/app/dist/a.js"),
        writes=("packages/app/dist/a.js",),
    )
    assert _audit(root, trace).findings == ()


def test_a_toml_config_is_edited_in_place_and_a_py_one_is_not(tmp_path: Path) -> None:
    toml = (
        '# the app\n[tasks.build]\nexec = "x"\n\n[tasks.build.cache.inputs]\nfiles = ["src/**"]\n'
    )
    root = _ws(tmp_path / "t", toml, "vx.config.toml")
    (root / "packages/app/extra.txt").write_text("")
    report = _audit(root, _trace(root, reads=("packages/app/extra.txt",)))
    [patch] = plan_patches(load_workspace(root), {"app#build": report})
    assert patch.new is not None
    assert patch.new.startswith("# the app\n")
    doc = tomllib.loads(patch.new)
    assert doc["tasks"]["build"]["cache"]["inputs"]["files"] == ["src/**", "extra.txt"]
    assert patch.diff().startswith("--- a/packages/app/vx.config.toml\n")

    py = (
        "from vx import define_project\n\n"
        "define_project(tasks={'build': {'exec': 'x', 'cache': {'inputs': {'files': ['src/**']}}}})\n"
    )
    root = _ws(tmp_path / "p", py, "vx.config.py")
    (root / "packages/app/extra.txt").write_text("")
    report = _audit(root, _trace(root, reads=("packages/app/extra.txt",)))
    [patch] = plan_patches(load_workspace(root), {"app#build": report})
    assert patch.new is None
    assert patch.note == "a .py config is code: edit it by hand"
