#!/usr/bin/env python3
"""Make a synthetic npm-workspaces monorepo for vx's benchmarks (stdlib only).

    python3 bench/mkrepo.py OUTDIR --packages N [--deps K] [--files F] [--seed S]
                            [--tool turbo,vx] [--force] [--no-git]

This is the fallback generator `bench/compare.py` uses when the shared one
(`shared/bench/genrepo.py`, used for the peer figures) is not beside the checkout.
It takes the same command line and writes the same layout, so either can feed
the harness:

  OUTDIR/package.json           "workspaces": ["packages/*"], "packageManager": "npm@…"
  OUTDIR/package-lock.json      lockfile v3 listing the workspace links
  OUTDIR/.gitignore             node_modules, dist and tool caches
  OUTDIR/packages/pkg-XXXX/     package.json (build/test scripts, deps), src/mod0..F-1.js
  OUTDIR/packages/pkg-XXXX/vx.config.json     with --tool vx
  OUTDIR/turbo.json                           with --tool turbo
  OUTDIR/bench-meta.json        graph facts the harness reads (git-ignored)

Graph model (the one the peer figures were measured on): package 0 has no
dependencies; package i >= 1 depends on r distinct earlier packages, r drawn
uniformly from 0..min(K, i), the packages drawn uniformly without replacement.
With the same seed the graph is the same as the shared generator's; file
contents differ, which no scenario depends on (each file is ~300 bytes).

build = `mkdir -p dist && cat src/*.js > dist/bundle.js`, cached on src/** with
outputs dist/**; test = `test -s dist/bundle.js`.  The "hot leaf" is the
dependency-free package with the most transitive dependents: an edit there is
the `edit` scenario, and bench-meta.json says how many tasks it must re-run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

BUILD = "mkdir -p dist && cat src/*.js > dist/bundle.js"
TEST = "test -s dist/bundle.js"
TOOLS = ("turbo", "vx")
GITIGNORE = [
    "node_modules/",
    "dist/",
    ".turbo/",
    ".nx/",
    ".moon/cache/",
    ".moon/docker/",
    ".vx/",
    "bench-meta.json",
]


def name_of(i: int) -> str:
    return f"pkg-{i:04d}"


def random_dag(n: int, max_deps: int, rng: random.Random) -> list[list[int]]:
    """deps[i]: the earlier packages package i depends on, sorted."""
    out: list[list[int]] = []
    for i in range(n):
        if i == 0:
            out.append([])
            continue
        count = rng.randint(0, min(max_deps, i))
        out.append(sorted(rng.sample(range(i), count)))
    return out


def facts_of(deps: list[list[int]]) -> dict[str, object]:
    n = len(deps)
    dependents: list[set[int]] = [set() for _ in range(n)]
    for i, ds in enumerate(deps):
        for d in ds:
            dependents[d].add(i)
    # every edge points at a lower index, so one pass from the top closes each set
    closure: list[set[int]] = [set() for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for j in dependents[i]:
            closure[i].add(j)
            closure[i] |= closure[j]
    level = [0] * n
    for i in range(n):
        level[i] = 1 + max((level[d] for d in deps[i]), default=0)
    leaves = [i for i in range(n) if not deps[i]]
    hot = sorted(leaves, key=lambda i: (-len(closure[i]), i))[0]
    return {
        "packages": n,
        "edges": sum(map(len, deps)),
        "leaves": len(leaves),
        "critical_path_len": max(level),
        "hot_leaf": name_of(hot),
        "hot_leaf_direct_dependents": len(dependents[hot]),
        "hot_leaf_transitive_dependents": len(closure[hot]),
        "hot_leaf_expected_rebuilds": len(closure[hot]) + 1,
        "hot_leaf_file": f"packages/{name_of(hot)}/src/mod0.js",
    }


def module_text(pkg: str, j: int, rng: random.Random) -> str:
    consts = [f"export const c{j}{k} = {rng.randrange(10**9)};" for k in range(6)]
    body = f"export function fn{j}(x) {{ return x * {rng.randrange(1, 100)} + c{j}0; }}"
    return "\n".join([f"// {pkg} module {j} (synthetic)", *consts, body]) + "\n"


def dump(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data, indent=2) + "\n"
    path.write_text(text, encoding="utf-8", newline="\n")


def npm_version() -> str:
    try:
        got = subprocess.run(["npm", "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "10.0.0"
    v = got.stdout.strip()
    return v if got.returncode == 0 and v[:1].isdigit() else "10.0.0"


def vx_config() -> dict[str, object]:
    return {
        "tasks": {
            "build": {
                "dependsOn": ["^build"],
                "exec": {"command": BUILD},
                "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
            },
            "test": {
                "dependsOn": ["build"],
                "exec": {"command": TEST},
                "cache": {"inputs": {"files": ["src/**", "dist/**"]}, "outputs": {"files": []}},
            },
        }
    }


def turbo_config() -> dict[str, object]:
    return {
        "ui": "stream",
        "tasks": {
            "build": {"dependsOn": ["^build"], "inputs": ["src/**"], "outputs": ["dist/**"]},
            "test": {"dependsOn": ["build"], "inputs": ["src/**", "dist/**"], "outputs": []},
        },
    }


def commit(root: Path, n: int) -> None:
    ident = {
        "GIT_AUTHOR_NAME": "vx-bench",
        "GIT_AUTHOR_EMAIL": "bench@vx.invalid",
        "GIT_COMMITTER_NAME": "vx-bench",
        "GIT_COMMITTER_EMAIL": "bench@vx.invalid",
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    env = {**os.environ, **ident}
    base = [
        "git",
        "-c",
        "init.defaultBranch=main",
        "-c",
        "commit.gpgsign=false",
        "-c",
        "core.hooksPath=/dev/null",
    ]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", f"synthetic: {n} packages"]):
        subprocess.run(base + args, cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("outdir")
    ap.add_argument("--packages", "-n", type=int, required=True)
    ap.add_argument("--deps", "-k", type=int, default=3)
    ap.add_argument("--files", "-f", type=int, default=5)
    ap.add_argument("--seed", type=int, default=20240101)
    ap.add_argument("--tool", default="turbo,vx", help="comma list of: turbo,vx")
    ap.add_argument("--npm-version", default=None)
    ap.add_argument("--force", action="store_true", help="replace OUTDIR if it exists")
    ap.add_argument("--no-git", action="store_true")
    a = ap.parse_args(argv)
    tools = [t for t in a.tool.split(",") if t]
    if unknown := sorted(set(tools) - set(TOOLS)):
        ap.error(f"this generator writes configs for turbo and vx only, not: {','.join(unknown)}")
    if a.packages < 1 or a.files < 1 or a.deps < 0:
        ap.error("need --packages >= 1, --files >= 1, --deps >= 0")

    root = Path(a.outdir).resolve()
    if root.exists():
        if any(root.iterdir()) and not a.force:
            sys.exit(f"mkrepo: {root} is not empty (use --force)")
        shutil.rmtree(root)
    root.mkdir(parents=True)

    rng = random.Random(a.seed)
    deps = random_dag(a.packages, a.deps, rng)
    facts = facts_of(deps)

    dump(
        root / "package.json",
        {
            "name": "bench-root",
            "version": "0.0.0",
            "private": True,
            "workspaces": ["packages/*"],
            "packageManager": "npm@" + (a.npm_version or npm_version()),
        },
    )
    dump(root / ".gitignore", "\n".join(GITIGNORE) + "\n")
    lock: dict[str, dict[str, object]] = {
        "": {"name": "bench-root", "version": "0.0.0", "workspaces": ["packages/*"]},
    }
    for i, ds in enumerate(deps):
        pkg = name_of(i)
        pdir = root / "packages" / pkg
        manifest: dict[str, object] = {
            "name": pkg,
            "version": "0.0.0",
            "private": True,
            "scripts": {"build": BUILD, "test": TEST},
        }
        locked: dict[str, object] = {"version": "0.0.0"}
        if ds:
            manifest["dependencies"] = locked["dependencies"] = {name_of(d): "*" for d in ds}
        dump(pdir / "package.json", manifest)
        for j in range(a.files):
            dump(pdir / "src" / f"mod{j}.js", module_text(pkg, j, rng))
        if "vx" in tools:
            dump(pdir / "vx.config.json", vx_config())
        lock["node_modules/" + pkg] = {"resolved": "packages/" + pkg, "link": True}
        lock["packages/" + pkg] = locked
    dump(
        root / "package-lock.json",
        {
            "name": "bench-root",
            "version": "0.0.0",
            "lockfileVersion": 3,
            "requires": True,
            "packages": dict(sorted(lock.items())),
        },
    )
    if "turbo" in tools:
        dump(root / "turbo.json", turbo_config())
    facts.update(
        {
            "deps_k": a.deps,
            "files_per_package": a.files,
            "seed": a.seed,
            "tools": tools,
            "source_files": a.packages * a.files,
            "generator": "vx bench/mkrepo.py",
        }
    )
    dump(root / "bench-meta.json", facts)
    if not a.no_git:
        commit(root, a.packages)
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
