"""Adoption that caches, over real package managers: `vx init --observe` on a workspace the
manager installed, then the second run is all hits and deleting the outputs restores the same
bytes, with no config edited by hand.

Each workspace's builds write `lib/`, `dist/` and a file beside them (`meta.json`), and one
reads a shared script outside its package (`tools/banner.js`). npm as installed; pnpm, Yarn 4
(Plug'n'Play: scripts run through `yarn run`) and Bun from the npm registry (pm_tools.py); uv
as on PATH. A manager that cannot be had skips, saying why. Needs the tracer (strace).
"""

from __future__ import annotations

import shutil
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import git, write_tree
from tests.e2e.cachews import statuses
from tests.e2e.pm_tools import Manager, get_manager, run_pm

from vx.trace.probe import tracing_available
from vx.workspace.config_load import parse_jsonc

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.conftest import VxResult

pytestmark = pytest.mark.skipif(
    not tracing_available().ok, reason=f"no tracer here: {tracing_available().reason}"
)

BUILD_JS = """\
const fs = require("fs");
const banner = require("../../tools/banner.js");
const src = fs.readFileSync("src/index.js", "utf8");
fs.mkdirSync("lib/nested", { recursive: true });
fs.mkdirSync("dist", { recursive: true });
fs.writeFileSync("lib/index.js", src);
fs.writeFileSync("lib/nested/copy.js", banner + src);
fs.writeFileSync("dist/bundle.js", banner + src.toUpperCase());
fs.writeFileSync("meta.json", JSON.stringify({ bytes: src.length }) + "\\n");
"""
OUTPUTS = ("lib", "dist", "meta.json")
JS_MANAGERS = ("npm", "pnpm9", "yarn4", "bun")


def js_workspace(manager: str) -> dict[str, Any]:
    link = "*" if manager == "npm" else "workspace:*"
    files: dict[str, Any] = {
        "package.json": {"name": "shop", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "node_modules/\n.yarn/\nlib/\ndist/\n",
        "tools/banner.js": 'module.exports = "/* shop */\\n";\n',
    }
    if manager == "pnpm9":
        files["pnpm-workspace.yaml"] = "packages:\n  - packages/*\n"
    if manager == "yarn4":
        files["package.json"]["packageManager"] = "yarn@4.5.0"
    for name, deps in (("ui", {}), ("web", {"ui": link})):
        files[f"packages/{name}/package.json"] = {
            "name": name,
            "version": "1.0.0",
            "scripts": {"build": "node build.js"},
            "dependencies": deps,
        }
        files[f"packages/{name}/build.js"] = BUILD_JS
        files[f"packages/{name}/src/index.js"] = f"export const name = {name!r};\n"
    return files


def tree(root: Path) -> dict[str, bytes]:
    """Every output file under the packages, by path, with its bytes."""
    found: dict[str, bytes] = {}
    for package in sorted((root / "packages").iterdir()):
        for name in OUTPUTS:
            top = package / name
            paths = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
            found.update({str(p.relative_to(root)): p.read_bytes() for p in paths})
    return found


def remove_outputs(root: Path) -> None:
    for package in (root / "packages").iterdir():
        for name in OUTPUTS:
            path = package / name
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)


def adopted_runs(vx: Callable[..., VxResult], root: Path, env: dict[str, str]) -> None:
    """Run 1 builds, run 2 is all hits, and a run after `rm -rf` of the outputs restores them."""
    builds = {"ui#build", "web#build"}
    args = ["run", "build", "--all", "--format", "json"]
    first = statuses(vx(args, root, env=env).assert_ok())
    assert first == dict.fromkeys(builds, "success")
    built = tree(root)
    assert built, "the builds wrote nothing"
    second = statuses(vx(args, root, env=env).assert_ok())
    assert second == dict.fromkeys(builds, "cache-hit")
    remove_outputs(root)
    third = statuses(vx(args, root, env=env).assert_ok())
    assert third == dict.fromkeys(builds, "cache-hit")
    assert tree(root) == built


def shim_path(tmp_path: Path, manager: Manager) -> dict[str, str]:
    """PATH with the manager's own command on it, as a user's shell has it (Yarn's `yarn run`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    command = "yarn" if manager.name.startswith("yarn") else manager.name.rstrip("0123456789")
    shim = bin_dir / command
    shim.write_text("#!/bin/sh\nexec " + " ".join(manager.argv) + ' "$@"\n')
    shim.chmod(0o755)
    return {"PATH": f"{bin_dir}:{manager.env['PATH']}"}


def installed(
    name: str, tmp_path: Path, factory: pytest.TempPathFactory, workspace: Callable[..., Path]
) -> tuple[Path, dict[str, str]]:
    """The workspace, installed by the real manager and committed, and the env to run vx in."""
    manager = get_manager(factory, name)
    if name == "yarn4":  # Plug'n'Play, Yarn 4's default
        manager = manager._replace(env={**manager.env, "YARN_NODE_LINKER": "pnp"})
    root = workspace(js_workspace(name), commit=False)
    run_pm(manager, ["install"], root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "installed")
    return root, shim_path(tmp_path, manager)


@pytest.mark.parametrize("name", JS_MANAGERS)
def test_observe_adopts_a_js_workspace_with_caching(
    name: str,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    workspace: Callable[..., Path],
    vx: Callable[..., VxResult],
) -> None:
    root, env = installed(name, tmp_path, tmp_path_factory, workspace)
    out = vx(["init", "--observe"], root, env=env).assert_ok().out
    assert "observing ui#build\nobserving web#build\n" in out
    assert "observed 2 tasks: 2 cached\n" in out
    shown = "packages/ui/vx.config.json"
    config: Any = parse_jsonc((root / shown).read_text(), shown)  # Yarn's carries comments
    cache = config["tasks"]["build"]["cache"]
    assert cache["outputs"] == {"files": ["dist/**", "lib/**", "meta.json"]}
    assert "src/**" in cache["inputs"]["files"]
    assert "tools/banner.js" in cache["inputs"]["workspaceFiles"]
    if name == "yarn4":
        assert config["tasks"]["build"]["exec"] == "yarn run build"

    remove_outputs(root)  # what observing built: run 1 builds it again, under vx
    adopted_runs(vx, root, env)
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""


@pytest.mark.parametrize("name", JS_MANAGERS)
def test_init_then_one_audited_run_and_audit_apply_adopts_with_caching(
    name: str,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    workspace: Callable[..., Path],
    vx: Callable[..., VxResult],
) -> None:
    root, env = installed(name, tmp_path, tmp_path_factory, workspace)
    vx(["init"], root, env=env).assert_ok()
    vx(["run", "build", "--all", "--audit"], root, env=env).assert_ok()
    applied = vx(["audit", "--apply"], root, env=env).assert_ok().out
    assert "wrote packages/ui/vx.config.json" in applied
    text = (root / "packages/ui/vx.config.json").read_text()
    config: Any = parse_jsonc(text, "packages/ui/vx.config.json")
    assert config["tasks"]["build"]["cache"]["outputs"]["files"] == [
        "dist/**",
        "lib/**",
        "meta.json",
    ]
    assert "no cache block" not in text  # the TODO the block answers is gone, the rest kept
    remove_outputs(root)
    adopted_runs(vx, root, env)


UV_PACKAGE = """\
[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.9"
dependencies = [{deps}]

[build-system]
requires = ["uv_build>=0.8,<0.20"]
build-backend = "uv_build"
"""


def test_observe_adopts_a_uv_workspace_with_one_file(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH (.ci/run installs it from PyPI)")
    files: dict[str, Any] = {
        "pyproject.toml": '[tool.uv.workspace]\nmembers = ["packages/*"]\n',
        ".gitignore": "dist/\n.venv/\n",
    }
    for name, deps in (("ui", ""), ("web", '"ui"')):
        text = UV_PACKAGE.format(name=name, deps=deps)
        if deps:
            text += "\n[tool.uv.sources]\nui = { workspace = true }\n"
        files[f"packages/{name}/pyproject.toml"] = text
        files[f"packages/{name}/src/{name}/__init__.py"] = f"NAME = {name!r}\n"
    root = workspace(files)

    out = vx(["init", "--observe"], root).assert_ok().out
    assert out.startswith("wrote vx.workspace.json\n")
    assert not list(root.rglob("vx.config.*"))
    args = ["run", "build", "--all", "--format", "json"]
    first = vx(args, root)
    if first.code != 0 and "uv_build" in first.out + first.err:
        pytest.skip(f"uv could not get its build backend from PyPI: {first.err[-300:]}")
    assert statuses(first.assert_ok()) == {"ui#build": "success", "web#build": "success"}
    wheels = {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob("packages/*/dist/*"))
    }
    assert len(wheels) == 6  # a wheel, an sdist and the .gitignore uv writes, each
    assert set(statuses(vx(args, root).assert_ok()).values()) == {"cache-hit"}
    for dist in root.glob("packages/*/dist"):
        shutil.rmtree(dist)
    assert set(statuses(vx(args, root).assert_ok()).values()) == {"cache-hit"}
    restored = {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.glob("packages/*/dist/*"))
    }
    assert restored == wheels


def test_observe_without_git_writes_nothing(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    root = tmp_path / "plain"
    write_tree(root, {"package.json": {"name": "p", "scripts": {"build": "node -e 0"}}})
    result = vx(["init", "--observe"], root).assert_code(1)
    assert "git init && git add -A" in result.err
    assert sorted(p.name for p in root.iterdir()) == ["package.json"]


def test_observe_leaves_what_cannot_be_cached_uncached_and_says_why(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    """In TOML this time: a stamp, a formatter of a tracked file, a failure; deploy never runs."""
    scripts = {
        "build": "mkdir -p out && cp src/a.txt out/a.txt",
        "stamp": "mkdir -p out && date +%s%N > out/stamp.txt",
        "fmt": "echo tidy >> src/a.txt",
        "broken": "echo 'cannot find tool' >&2; exit 3",
        "deploy": "touch deployed",
    }
    root = workspace(
        {
            "package.json": {"name": "solo", "scripts": scripts},
            "src/a.txt": "a\n",
            ".gitignore": "out/\n",
        }
    )
    out = vx(["init", "--observe", "--toml"], root).assert_ok().out
    assert "observed 4 tasks: 1 cached\n" in out
    assert "not cached: solo#fmt: it changes src/a.txt, which git tracks\n" in out
    assert "not cached: solo#broken: it failed when observed (exit 3: cannot find tool)\n" in out
    assert "not cached: solo#stamp: its outputs differ between two runs" in out
    assert (root / "src/a.txt").read_text() == "a\n"  # put back as it was
    assert not (root / "deployed").exists()
    text = (root / "vx.config.toml").read_text()
    assert "# not cached: it changes src/a.txt, which git tracks\n" in text
    config = tomllib.loads(text)
    assert config["tasks"]["build"]["cache"] == {
        "inputs": {"files": ["src/**"]},
        "outputs": {"files": ["out/**"]},
    }
    assert "cache" not in config["tasks"]["stamp"]
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
