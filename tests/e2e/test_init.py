"""`vx init` over repos shaped like real ones (npm, pnpm, Yarn Berry): the files, the report, and
that the run it points at then works, with a second run all hits once a cache block is added."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from tests.conftest import git

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.conftest import VxResult

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
INIT_SCHEMA = json.loads((SCHEMAS / "init.json").read_text())
CACHE_TODO = (
    "no cache block, so this task always runs; add one naming its real inputs and outputs"
    " to cache it"
)
CACHING = (
    "cache: tasks without a cache block always run; vx init --observe traces each once and"
    " writes the block it saw (or: vx run --audit, then vx audit --apply)"
)

NPM_REPO: dict[str, Any] = {
    "package.json": {
        "name": "shop",
        "private": True,
        "workspaces": ["packages/*", "apps/*"],
        "scripts": {
            "build": "npm run build --workspaces",
            "test": "npm test --workspaces --if-present",
            "format": "node -e 0",
        },
    },
    "package-lock.json": {"name": "shop", "lockfileVersion": 3, "packages": {}},
    "packages/ui/package.json": {
        "name": "@shop/ui",
        "version": "1.2.0",
        "scripts": {
            "prebuild": "mkdir -p dist && echo pre > dist/order.txt",
            "build": "echo main $npm_package_name@$npm_package_version >> dist/order.txt",
            "postbuild": "echo post >> dist/order.txt",
            "test": "node -e 0",
            "prepack": "npm run build",
        },
    },
    "apps/web/package.json": {
        "name": "web",
        "dependencies": {"@shop/ui": "*"},
        "scripts": {
            "dev": "vite",
            "start": "node server.js",
            "build": "npm run compile",
            "compile": "mkdir -p dist && cp ../../packages/ui/dist/order.txt dist/ui.txt",
            "typecheck": "node -e 0",
        },
    },
}

UI_CONFIG = """\
{
  "tasks": {
    "build": {
      // TODO(vx init): @CACHE_TODO@
      // TODO(vx init): its pre/post scripts are folded in as npm ran them (a vx_script function: each part in a subshell, forwarded args to the script alone)
      // TODO(vx init): exec.env.define copies package.json's name/version: update it when they change
      // "cache": {"outputs": {"files": ["dist/**"]}},
      "dependsOn": ["^build"],
      "exec": {"command": "vx_script() { (set --; mkdir -p dist && echo pre > dist/order.txt) && (echo main $npm_package_name@$npm_package_version >> dist/order.txt \\"$@\\") && (set --; echo post >> dist/order.txt); }; vx_script", "env": {"define": {"npm_package_name": "@shop/ui", "npm_package_version": "1.2.0"}}}
    },
    "test": {
      "dependsOn": ["build"],
      "exec": "node -e 0"
    }
  }
}
""".replace("@CACHE_TODO@", CACHE_TODO)

WEB_CONFIG = """\
{
  "tasks": {
    "dev": {
      "exec": {"command": "vite", "persistent": true}
    },
    "start": {
      "exec": {"command": "node server.js", "persistent": true}
    },
    "build": {
      "dependsOn": ["compile"]
    },
    "compile": {
      // TODO(vx init): @CACHE_TODO@
      // "cache": {"outputs": {"files": ["dist/**"]}},
      "dependsOn": ["^build"],
      "exec": "mkdir -p dist && cp ../../packages/ui/dist/order.txt dist/ui.txt"
    },
    "typecheck": {
      "dependsOn": ["build"],
      "exec": "node -e 0"
    }
  }
}
""".replace("@CACHE_TODO@", CACHE_TODO)

NPM_REPORT = f"""\
wrote apps/web/vx.config.json
wrote packages/ui/vx.config.json
wrote vx.config.json
wrote vx.workspace.json
8 tasks from package.json scripts in 3 configs
TODO: {CACHE_TODO}: web#compile, @shop/ui#build
TODO: its pre/post scripts are folded in as npm ran them (a vx_script function: each part in a subshell, forwarded args to the script alone): @shop/ui#build
TODO: exec.env.define copies package.json's name/version: update it when they change: @shop/ui#build
note: root scripts left out (runs the workspace's members): build, test
note: vx run build --all replaces what the root ran as npm run build --workspaces
next: vx run build --all
{CACHING}
"""


def _cache_on(root: Path) -> None:
    """Do what the cache TODO says: uncomment the block it shows."""
    for config in root.glob("**/vx.config.json"):
        config.write_text(config.read_text().replace('// "cache"', '"cache"'))


def _runs_then_hits(
    vx: Callable[..., VxResult], root: Path, task: str = "build", **kw: Any
) -> None:
    first = vx(["run", task, "--all"], root, **kw).assert_ok()
    assert "all cached" not in first.out + first.err
    _cache_on(root)
    # As a real repository does: an output git tracks is refused (the clean would delete it).
    with (root / ".gitignore").open("a") as ignore:
        ignore.write("dist/\nlib/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "cache the builds")
    vx(["run", task, "--all"], root, **kw).assert_ok()
    again = vx(["run", task, "--all"], root, **kw).assert_ok()
    assert "all cached" in again.out + again.err, again


def test_npm_repo_hooks_servers_groups_and_the_run(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(NPM_REPO)
    result = vx(["init"], root).assert_ok()
    assert result.out == NPM_REPORT
    assert (root / "packages/ui/vx.config.json").read_text() == UI_CONFIG
    assert (root / "apps/web/vx.config.json").read_text() == WEB_CONFIG
    assert json.loads((root / "vx.config.json").read_text()) == {
        "tasks": {"format": {"exec": "node -e 0"}}
    }
    assert (root / "vx.workspace.json").read_text() == '{ "plugins": [] }\n'
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vx init")
    vx(["run", "build", "--all"], root).assert_ok()
    # the hooks ran around the script, in order, with the npm variables defined
    assert (root / "packages/ui/dist/order.txt").read_text() == "pre\nmain @shop/ui@1.2.0\npost\n"
    assert (root / "apps/web/dist/ui.txt").read_text().startswith("pre\n")
    _runs_then_hits(vx, root)


def test_forwarded_args_reach_the_script_and_not_its_hooks(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {
                "name": "one",
                "scripts": {
                    "pretest": "echo pre:$1: > log.txt",
                    "test": "echo main >> log.txt; echo",
                    "posttest": "echo post:$1: >> log.txt",
                },
            }
        }
    )
    vx(["init"], root).assert_ok()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vx init")
    ran = vx(["run", "test", "--", "--flag"], root).assert_ok()
    assert "--flag" in ran.out + ran.err
    assert (root / "log.txt").read_text() == "pre::\nmain\npost::\n"


PNPM_REPO: dict[str, Any] = {
    "package.json": {
        "name": "mono",
        "private": True,
        "packageManager": "pnpm@9.12.0",
        "scripts": {"build": "pnpm -r build", "lint": "node -e 0", "ci": "pnpm build && pnpm lint"},
    },
    "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
    "packages/core/package.json": {
        "name": "@m/core",
        "scripts": {
            "build": "pnpm run bundle",
            "bundle": "node -e \"require('fs').mkdirSync('lib',{recursive:true});"
            "require('fs').writeFileSync('lib/core.js','1')\" -- --outDir lib",
            "build:watch": "tsc -w",
            "check": "pnpm run bundle && pnpm test",
            "test": "node -e 0",
        },
    },
    "packages/app/package.json": {
        "name": "@m/app",
        "dependencies": {"@m/core": "workspace:*"},
        "scripts": {
            "build": "node -e \"require('fs').accessSync('../core/lib/core.js')\"",
            "dev": "next dev",
            "deploy": "node -e 0",
            "sync": "pnpm --filter @m/core build",
        },
    },
}


def test_pnpm_repo_groups_the_delegating_build_and_runs(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(PNPM_REPO)
    result = vx(["init"], root).assert_ok()
    core = json.loads(_strip_comments((root / "packages/core/vx.config.json").read_text()))
    assert core["tasks"]["build"] == {"dependsOn": ["bundle"]}
    assert core["tasks"]["bundle"]["dependsOn"] == ["^build"]
    assert core["tasks"]["build:watch"]["exec"] == {"command": "tsc -w", "persistent": True}
    assert core["tasks"]["test"]["dependsOn"] == ["build"]
    assert (
        '// "cache": {"outputs": {"files": ["lib/**"]}},'
        in (root / "packages/core/vx.config.json").read_text()
    )
    app_text = (root / "packages/app/vx.config.json").read_text()
    assert "another member's work" in app_text
    assert "(pnpm --filter @m/core build)" in app_text
    assert "@m/core#check" in result.out  # its own scripts inside its command
    assert "note: root scripts left out (runs the workspace's members): build, ci\n" in result.out
    assert "pnpm -r build" in result.out
    assert result.out.endswith(f"next: vx run build --all\n{CACHING}\n")
    assert json.loads((root / "vx.config.json").read_text()) == {
        "tasks": {"lint": {"exec": "node -e 0"}}
    }
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vx init")
    _runs_then_hits(vx, root)


YARN_BERRY: dict[str, Any] = {
    "package.json": {
        "name": "berry",
        "private": True,
        "packageManager": "yarn@4.5.0",
        "workspaces": ["packages/*"],
        "scripts": {"build": "yarn workspaces foreach -A run build"},
    },
    ".yarnrc.yml": "enableTelemetry: false\n",
    "yarn.lock": "__metadata:\n  version: 8\n  cacheKey: 10c0\n",
    "packages/lib/package.json": {
        "name": "lib",
        "scripts": {
            "prebuild": "node -e 0",
            "build": "tsc -b && run lint",
            "lint": "eslint .",
            "start": "vite",
        },
    },
}


def test_yarn_berry_pnp_runs_scripts_through_yarn_and_folds_no_hooks(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(YARN_BERRY)
    result = vx(["init"], root).assert_ok()
    text = (root / "packages/lib/vx.config.json").read_text()
    lib = json.loads(_strip_comments(text))
    assert list(lib["tasks"]) == ["prebuild", "build", "lint", "start"]
    assert lib["tasks"]["prebuild"] == {"exec": "yarn run prebuild"}
    assert lib["tasks"]["build"] == {"dependsOn": ["^build"], "exec": "yarn run build"}
    assert lib["tasks"]["start"]["exec"] == {"command": "yarn run start", "persistent": True}
    assert "(the script runs: tsc -b && run lint)" in text
    assert "Yarn Plug'n'Play" in result.out
    assert "nodeLinker: node-modules" in result.out
    assert "yarn workspaces foreach -A run build" in result.out


def test_yarn_berry_on_node_modules_writes_run_as_yarn_run(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace({**YARN_BERRY, ".yarnrc.yml": "nodeLinker: node-modules\n"})
    result = vx(["init"], root).assert_ok()
    lib = json.loads(_strip_comments((root / "packages/lib/vx.config.json").read_text()))
    assert lib["tasks"]["build"]["exec"] == "tsc -b && yarn run lint"
    assert "Plug'n'Play" not in result.out


YARN_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vx-tests" / "yarn4"


@pytest.fixture(scope="session")
def yarn_path() -> str:
    """A PATH whose `yarn` is Yarn 4, installed once from the npm registry into a cache dir."""
    shim = YARN_DIR / "bin" / "yarn"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are not on PATH: Yarn 4 cannot be installed for this run")
    YARN_DIR.mkdir(parents=True, exist_ok=True)
    with (YARN_DIR / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # two test workers install it once
        if not shim.exists():
            proc = subprocess.run(
                [npm, "install", "--prefix", str(YARN_DIR), "--no-audit", "--no-fund",
                 "@yarnpkg/cli-dist@4"],
                capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
            if proc.returncode != 0:
                pytest.skip(f"Yarn 4 could not be installed from npm: {proc.stderr[-400:]}")
            script = YARN_DIR / "node_modules/@yarnpkg/cli-dist/bin/yarn.js"
            shim.parent.mkdir(exist_ok=True)
            shim.write_text(f'#!/bin/sh\nexec "{node}" "{script}" "$@"\n')
            shim.chmod(0o755)
    return f"{shim.parent}{os.pathsep}{os.environ.get('PATH', '')}"


RUNNABLE_BERRY: dict[str, Any] = {
    "package.json": YARN_BERRY["package.json"],
    ".yarnrc.yml": "enableTelemetry: false\nenableGlobalCache: false\n",
    ".gitignore": ".yarn/\n.pnp.*\n",
    "packages/lib/package.json": {
        "name": "lib",
        "scripts": {
            "prebuild": "mkdir -p dist && echo pre > dist/pre.txt",
            "build": "mkdir -p dist && echo lib > dist/lib.txt && run note",
            "note": "echo noted",
        },
    },
    "packages/app/package.json": {
        "name": "app",
        "dependencies": {"lib": "workspace:*"},
        "scripts": {
            "build": "test -f ../lib/dist/lib.txt && mkdir -p dist && echo app > dist/app.txt"
        },
    },
}


def test_yarn_berry_pnp_repo_runs_through_yarn_then_hits(
    workspace: Callable[..., Path], vx: Callable[..., VxResult], yarn_path: str
) -> None:
    root = workspace(RUNNABLE_BERRY, commit=False)
    env = {"PATH": yarn_path, "COREPACK_ENABLE_STRICT": "0", "YARN_ENABLE_TELEMETRY": "0"}
    installed = subprocess.run(
        ["yarn", "install"], cwd=root, env={**os.environ, **env}, capture_output=True,
        text=True, timeout=600, check=False,
    )  # fmt: skip
    if installed.returncode != 0:
        pytest.skip(f"yarn install failed here: {installed.stdout[-400:]}")
    assert (root / ".pnp.cjs").is_file()
    vx(["init"], root, env=env).assert_ok()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vx init")
    vx(["run", "build", "--all"], root, env=env).assert_ok()
    # Berry runs no hooks: the build did not run prebuild
    assert (root / "packages/lib/dist/lib.txt").read_text() == "lib\n"
    assert not (root / "packages/lib/dist/pre.txt").exists()
    assert (root / "packages/app/dist/app.txt").read_text() == "app\n"
    _runs_then_hits(vx, root, env=env)


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))


def test_dry_json_is_the_plan_and_writes_nothing(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(NPM_REPO)
    doc = vx(["init", "--dry", "--format", "json"], root).assert_ok().json()
    jsonschema.validate(doc, INIT_SCHEMA)
    assert [f["path"] for f in doc["files"]] == [
        "apps/web/vx.config.json",
        "packages/ui/vx.config.json",
        "vx.config.json",
        "vx.workspace.json",
    ]
    assert doc["files"][1]["text"] == UI_CONFIG
    assert doc["todos"][0] == {"reason": CACHE_TODO, "tasks": ["web#compile", "@shop/ui#build"]}
    assert doc["next"] == "vx run build --all"
    assert not list(root.glob("**/vx.*"))
    text = vx(["init", "--dry"], root).assert_ok().out
    assert text.startswith("--- apps/web/vx.config.json\n")
    assert "would write vx.workspace.json\n" in text
    assert not list(root.glob("**/vx.*"))


def test_format_json_without_dry_is_refused(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(NPM_REPO)
    result = vx(["init", "--format", "json"], root).assert_code(1)
    assert json.loads(result.out)["error"]["code"] == "VX_E_USAGE"
    assert "goes with --dry" in result.err


def test_existing_configs_are_kept_and_force_replaces_another_extension(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            **NPM_REPO,
            "packages/ui/vx.config.toml": '[tasks.build]\nexec = "echo mine"\n',
            "vx.workspace.toml": "",
        }
    )
    kept = vx(["init"], root).assert_ok()
    assert "kept packages/ui/vx.config.toml (as it is)\n" in kept.out
    assert "kept vx.workspace.toml (as it is)\n" in kept.out
    assert not (root / "packages/ui/vx.config.json").exists()
    assert (root / "apps/web/vx.config.json").is_file()
    forced = vx(["init", "--force"], root).assert_ok()
    assert "replaced packages/ui/vx.config.toml\n" in forced.out
    assert "replaced apps/web/vx.config.json\n" in forced.out
    assert "kept vx.config.json (as it is)\n" in forced.out  # the root's own stays
    assert not (root / "packages/ui/vx.config.toml").exists()
    assert (root / "packages/ui/vx.config.json").read_text() == UI_CONFIG
    vx(["show"], root).assert_ok()


def test_force_writes_every_new_config_before_removing_an_old_one(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    old = '[tasks.build]\nexec = "echo mine"\n'
    root = workspace({**NPM_REPO, "packages/ui/vx.config.toml": old})
    # Something in the way of ui's new config: it cannot be written.
    (root / "packages/ui/vx.config.json").mkdir()
    (root / "packages/ui/vx.config.json/keep.txt").write_text("not a config\n")
    result = vx(["init", "--force"], root).assert_code(1)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result
    assert "packages/ui/vx.config.json: cannot be written (" in lines[0]
    assert "the configs it replaces are kept" in lines[0]
    assert (root / "packages/ui/vx.config.toml").read_text() == old
    # What this run had already put in place is taken back, and no temp is left.
    assert not (root / "apps/web/vx.config.json").exists()
    assert not (root / "vx.workspace.json").exists()
    assert not list(root.rglob("*.tmp-*"))


def test_toml_and_py_configs_load_and_run(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    for flag, suffix in (("--toml", "toml"), ("--py", "py")):
        root = workspace(NPM_REPO, name=f"ws-{suffix}")
        vx(["init", flag], root).assert_ok()
        assert (root / f"packages/ui/vx.config.{suffix}").is_file()
        assert (root / f"vx.workspace.{suffix}").is_file()
        git(root, "add", "-A")
        git(root, "commit", "-qm", "vx init")
        shown = vx(["show", "@shop/ui#build", "--format", "json"], root).assert_ok().json()
        assert "npm_package_version" in json.dumps(shown)
        vx(["run", "build", "--all"], root).assert_ok()
        assert "main @shop/ui@1.2.0" in (root / "packages/ui/dist/order.txt").read_text()


def test_py_config_reads_the_version_from_package_json(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(NPM_REPO)
    vx(["init", "--py"], root).assert_ok()
    text = (root / "packages/ui/vx.config.py").read_text()
    assert '"npm_package_version": _package["version"]' in text
    assert "copies package.json" not in text


def test_nameless_and_duplicate_members_are_reported(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {"name": "r", "workspaces": ["packages/*"]},
            "packages/a/package.json": {"name": "same", "scripts": {"build": "node -e 0"}},
            "packages/b/package.json": {"name": "same", "scripts": {"build": "node -e 0"}},
            "packages/bench/package.json": {"scripts": {"bench": "node -e 0"}},
            "packages/types/package.json": {"name": "types"},
        }
    )
    out = vx(["init", "--dry"], root).assert_ok().out
    assert (
        'note: packages/bench/package.json has no "name", so it is no project and its scripts'
        " were not mapped: give it a name and re-run vx init\n"
    ) in out
    assert (
        'note: packages/a and packages/b share the name "same": a run refuses the workspace'
        " until each package has its own name\n"
    ) in out
    assert "note: no script to run, so no config: types" in out


def test_no_scripts_still_writes_the_workspace_file_and_an_example(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {"name": "r", "workspaces": ["packages/*"]},
            "packages/a/package.json": {"name": "a"},
        }
    )
    out = vx(["init"], root).assert_ok().out
    assert out.startswith("wrote vx.workspace.json\n")
    assert "no package.json scripts became tasks" in out
    assert out.endswith("next: declare a task in a vx.config.json && vx run <task> --all\n")


def test_outside_git_the_next_line_starts_with_git_init(
    tmp_path: Path, vx: Callable[..., VxResult]
) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "package.json").write_text('{"name": "plain", "scripts": {"build": "node -e 0"}}')
    out = vx(["init"], root, env={"npm_config_user_agent": "pnpm/9.0.0 npm/? node/v20"}).out
    assert out.endswith(f"next: git init && vx run build\n{CACHING}\n")


def test_no_package_json_says_to_create_one(tmp_path: Path, vx: Callable[..., VxResult]) -> None:
    result = vx(["init"], tmp_path).assert_code(1)
    assert "no package.json" in result.err
    assert "npm init -y" in result.err


def test_a_run_with_no_config_names_vx_init(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(NPM_REPO)
    result = vx(["run", "build", "--all"], root).assert_code(1)
    assert result.err == (
        "vx run: no projects declare task(s): build. No package declares a vx.config"
        " — run `vx init` to write a vx.config per package from its package.json scripts.\n"
    )


def test_a_second_init_says_vx_is_set_up(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(NPM_REPO)
    vx(["init"], root).assert_ok()
    again = vx(["init"], root).assert_ok().out
    assert again.startswith("kept apps/web/vx.config.json (as it is)\n")
    assert "note: vx is already set up here: every package with scripts has a config\n" in again
    assert again.endswith("next: vx run build --all\n")


def test_a_lerna_root_without_workspaces_is_told_to_list_them(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {"name": "r", "scripts": {"test": "node -e 0"}},
            "lerna.json": {"packages": ["modules/*"]},
            "modules/a/package.json": {"name": "a", "scripts": {"build": "node -e 0"}},
        }
    )
    out = vx(["init", "--dry"], root).assert_ok().out
    assert (
        "note: lerna.json lists the packages, but package.json declares no workspaces, so vx"
        " reads the root as one package (modules/a has its own package.json): add"
        ' "workspaces": ["modules/*"] to package.json and re-run vx init\n'
    ) in out


def _build_deps(root: Path, name: str) -> list[str]:
    config = json.loads(_strip_comments((root / f"packages/{name}/vx.config.json").read_text()))
    return config["tasks"]["build"]["dependsOn"]


def test_a_cycle_a_dev_entry_closes_keeps_up_build_and_the_runtime_order(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {"name": "r", "workspaces": ["packages/*"]},
            "packages/a/package.json": {
                "name": "a",
                "dependencies": {"c": "workspace:*"},
                "devDependencies": {"b": "workspace:*"},
                "scripts": {"build": "node -e 0"},
            },
            "packages/b/package.json": {
                "name": "b",
                "dependencies": {"a": "workspace:*"},
                "scripts": {"build": "node -e 0"},
            },
            "packages/c/package.json": {"name": "c", "scripts": {"build": "node -e 0"}},
        }
    )
    out = vx(["init"], root).assert_ok().out
    assert {name: _build_deps(root, name) for name in "abc"} == {
        "a": ["^build"],
        "b": ["^build"],
        "c": ["^build"],
    }
    assert "cycle" not in out
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vx init")
    plan = vx(["run", "build", "--all", "--dry=json"], root).assert_ok().json()
    assert {t["id"]: t["deps"] for t in plan["tasks"]} == {
        "a#build": ["c#build"],
        "b#build": ["a#build"],
        "c#build": [],
    }


def test_a_runtime_cycle_gets_explicit_edges_keeping_those_that_close_no_loop(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {"name": "r", "workspaces": ["packages/*"]},
            "packages/nuxt/package.json": {
                "name": "nuxt",
                "dependencies": {"nitro": "workspace:*", "kit": "workspace:*"},
                "scripts": {"build": "node -e 0"},
            },
            "packages/nitro/package.json": {
                "name": "nitro",
                "dependencies": {"nuxt": "workspace:*"},
                "scripts": {"build": "node -e 0"},
            },
            "packages/kit/package.json": {"name": "kit", "scripts": {"build": "node -e 0"}},
        }
    )
    out = vx(["init"], root).assert_ok().out
    # nitro → nuxt is taken first and kept; nuxt → nitro would close the loop.
    assert _build_deps(root, "nitro") == ["kit#build", "nuxt#build"]
    assert _build_deps(root, "nuxt") == ["kit#build"]
    assert _build_deps(root, "kit") == ["^build"]
    assert "cycle of runtime workspace dependencies" in out
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vx init")
    plan = vx(["run", "build", "--all", "--dry=json"], root).assert_ok().json()
    assert {t["id"]: t["deps"] for t in plan["tasks"]} == {
        "kit#build": [],
        "nitro#build": ["kit#build", "nuxt#build"],
        "nuxt#build": ["kit#build"],
    }
    vx(["run", "build", "--all"], root).assert_ok()


@pytest.mark.parametrize(
    ("agent", "installed", "spelled"),
    [
        ("pnpm/9.12.0 npm/? node/v20.0.0 linux x64", True, "pnpm vx"),
        ("npm/10.8.0 node/v20.0.0 linux x64 workspaces/false", True, "npx vx"),
        ("bun/1.1.0 npm/? node/v22.0.0 linux x64", True, "bunx vx"),
        ("pnpm/9.12.0 npm/? node/v20.0.0 linux x64", False, "vx"),
        ("", True, "vx"),
    ],
)
def test_the_next_line_uses_the_runner_that_started_vx(
    workspace: Callable[..., Path],
    vx: Callable[..., VxResult],
    agent: str,
    *,
    installed: bool,
    spelled: str,
) -> None:
    files = dict(PNPM_REPO)
    if installed:
        files["node_modules/.bin/vx"] = "#!/bin/sh\n"
    root = workspace(files)
    out = vx(["init", "--dry"], root, env={"npm_config_user_agent": agent}).assert_ok().out
    assert out.endswith(f"next: {spelled} run build --all\n{CACHING}\n")


def test_a_run_in_a_root_that_lists_no_members_says_to_list_them(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "package.json": {"name": "r", "scripts": {"build": "node -e 0"}},
            "packages/a/package.json": {"name": "a", "scripts": {"build": "node -e 0"}},
        }
    )
    result = vx(["run", "build"], root).assert_code(1)
    assert result.err == (
        "vx run: no projects declare task(s): build. package.json declares no workspaces, so vx"
        " reads the root as one package (packages/a has its own package.json): add"
        ' "workspaces": ["packages/*"] to package.json and re-run vx init.\n'
    )


UV_ROOT = (
    '[project]\nname = "root"\nversion = "0.1.0"\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
)
UV_MEMBER = '[project]\nname = "{name}"\nversion = "0.1.0"\n'
UV_BUILD_SYSTEM = '[build-system]\nrequires = ["uv_build"]\nbuild-backend = "uv_build"\n'


def test_a_uv_workspace_is_adopted_with_one_workspace_file(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(
        {
            "pyproject.toml": UV_ROOT + UV_BUILD_SYSTEM,
            "packages/a/pyproject.toml": UV_MEMBER.format(name="a") + UV_BUILD_SYSTEM,
            "packages/b/pyproject.toml": UV_MEMBER.format(name="b"),
        }
    )
    out = vx(["init"], root).assert_ok().out
    assert out == (
        "wrote vx.workspace.json\n"
        "note: packages/b/pyproject.toml: no [build-system], so uv build falls back to"
        " setuptools, which also leaves build/ and *.egg-info beside dist/: give it one, or a"
        " build task of its own in a vx.config.json there\n"
        "note: build: declared once in vx.workspace.json, for every package\n"
        "next: vx run build --all\n"
    )
    assert json.loads((root / "vx.workspace.json").read_text()) == {
        "tasks": {
            "build": {
                "dependsOn": ["^build"],
                "exec": "uv build --out-dir dist",
                "cache": {
                    "inputs": {"workspaceFiles": ["pyproject.toml"]},
                    "outputs": {"files": ["dist/**"]},
                },
            }
        }
    }
    assert sorted(p.name for p in root.rglob("vx.config.*")) == []
    shown = vx(["show", "b", "--format", "json"], root).assert_ok().json()
    assert "build" in json.dumps(shown)


def test_the_root_note_quotes_a_script_the_root_has(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    """The root fans out lint only: the note names that script, not a build it never had."""
    root = workspace(
        {
            "package.json": {
                "name": "root",
                "private": True,
                "workspaces": ["packages/*"],
                "scripts": {"lint": "npm run lint --workspaces --if-present"},
            },
            "packages/a/package.json": {"name": "a", "scripts": {"lint": "node -e 0"}},
        }
    )
    result = vx(["init"], root).assert_ok()
    assert (
        "note: vx run lint --all replaces what the root ran as"
        " npm run lint --workspaces --if-present\n"
    ) in result.out, result.out
    assert "npm run build" not in result.out
