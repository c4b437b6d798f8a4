"""`vx run --shard K/N` end to end: four clones of one workspace, each one shard, started
together against one real `turborepo-remote-cache`; then a clone at another commit under the
same run id, which is refused."""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import jsonschema
from tests.conftest import REPO, git, make_git_workspace, run_vx, write_tree
from tests.e2e.remoteservers import TEAM, TOKEN, turbo_server

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import VxResult

PACKAGES = 12
SCHEMA = json.loads((REPO / "schemas/shard-plan.json").read_text())


def files(log: Path) -> dict[str, Any]:
    """Twelve packages, each depending on up to two earlier ones; every build appends its
    package's name to `log`, outside the clones, so executions are counted across shards."""
    build = {
        "dependsOn": ["^build"],
        "exec": {"command": f"mkdir -p dist && cat src/* > dist/out.txt && basename $PWD >> {log}"},
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }
    tree: dict[str, Any] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
        "vx.workspace.json": {"plugins": ["vx.plugins.turbo:plugin"]},
    }
    for i in range(PACKAGES):
        deps = {f"p{j:02d}": "*" for j in (i - 1, i // 2 - 1) if 0 <= j < i}
        tree[f"packages/p{i:02d}/package.json"] = {"name": f"p{i:02d}", "dependencies": deps}
        tree[f"packages/p{i:02d}/vx.config.json"] = {"tasks": {"build": build}}
        tree[f"packages/p{i:02d}/src/main.txt"] = f"package {i}\n"
    return tree


def clone(origin: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(where)], check=True)
    return where


def outputs(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.glob("packages/*/dist/*"))}


def digest(result: VxResult) -> str:
    found = re.findall(r"plan digest ([0-9a-f]{16})", result.out + result.err)
    assert len(found) == 1, result.out + result.err
    return found[0]


def test_four_shards_execute_every_task_once_and_a_fifth_plan_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "executed.log"
    origin = make_git_workspace(tmp_path / "origin", files(log))
    alone = clone(origin, tmp_path / "alone")
    run_vx(["run", "build", "--all"], alone, home=tmp_path / "home-alone").assert_ok()
    reference = outputs(alone)
    assert len(reference) == PACKAGES
    log.write_text("")
    with turbo_server(tmp_path / "storage") as server:
        env = {"TURBO_API": server.url, "TURBO_TOKEN": TOKEN, "TURBO_TEAM": TEAM}
        clones = [clone(origin, tmp_path / f"shard{k}") for k in range(1, 5)]

        def shard(k: int) -> VxResult:
            args = ["run", "build", "--all", f"--shard={k}/4", "--shard-run=ci-42"]
            return run_vx(args, clones[k - 1], env=env, home=tmp_path / f"home{k}", timeout=600)

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(shard, range(1, 5)))
        for result in results:
            result.assert_ok()
        assert len({digest(r) for r in results}) == 1
        executed = log.read_text().split()
        assert sorted(executed) == [f"p{i:02d}" for i in range(PACKAGES)], "each task once"
        built: dict[str, bytes] = {}
        for ws in clones:
            for path, data in outputs(ws).items():
                assert data == reference[path], path
                built[path] = data
        assert built == reference

        changed = tmp_path / "origin"
        write_tree(changed, {"packages/p03/src/main.txt": "package 3, edited\n"})
        git(changed, "commit", "-qam", "edit p03")
        late = clone(changed, tmp_path / "late")
        refused = run_vx(
            ["run", "build", "--all", "--shard=2/4", "--shard-run=ci-42"],
            late,
            env=env,
            home=tmp_path / "home5",
        )
    assert refused.code == 1
    lines = [ln for ln in refused.err.splitlines() if "ci-42" in ln]
    assert len(lines) == 1, refused.err
    assert "recorded" in lines[0]
    assert log.read_text().split() == executed, "the refused shard ran nothing"
    assert outputs(late) == {}


def test_dry_shows_every_shard_part_the_same_way_on_every_shard(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "ws", files(tmp_path / "log"))
    docs = []
    for k in (1, 3):
        dry = run_vx(["run", "build", "--all", f"--shard={k}/3", "--dry=json"], origin,
                     home=tmp_path / "home").assert_ok()  # fmt: skip
        docs.append(json.loads(dry.out))
        jsonschema.validate(docs[-1], SCHEMA)
    assert [doc["shard"] for doc in docs] == [1, 3]
    assert {k: v for k, v in docs[0].items() if k != "shard"} == {
        k: v for k, v in docs[1].items() if k != "shard"
    }
    tasks = [t for part in docs[0]["parts"] for t in part["tasks"]]
    assert sorted(tasks) == [f"p{i:02d}#build" for i in range(PACKAGES)]
    text = run_vx(["run", "build", "--all", "--shard=2/3", "--dry"], origin,
                  home=tmp_path / "home").assert_ok()  # fmt: skip
    assert f"digest {docs[0]['digest']}" in text.out
    assert "▸ shard 2/3" in text.out


def test_a_dependency_its_shard_never_delivers_runs_here_after_the_wait(tmp_path: Path) -> None:
    """Shard 2 of 2 alone: what shard 1 owns never lands, so after the bounded wait shard 2
    runs it itself, saying which shard never delivered, and still ends green."""
    log = tmp_path / "executed.log"
    origin = make_git_workspace(tmp_path / "origin", files(log))
    with turbo_server(tmp_path / "storage") as server:
        env = {"TURBO_API": server.url, "TURBO_TOKEN": TOKEN, "TURBO_TEAM": TEAM}
        alone = run_vx(
            ["run", "build", "--all", "--shard=2/2", "--shard-run=ci-7", "--shard-wait=1"],
            origin,
            env=env,
            home=tmp_path / "home",
        ).assert_ok()
    late = re.findall(r"(\S+#build): shard 1/2 owns it but did not deliver it", alone.err)
    assert late, alone.err
    assert sorted(set(log.read_text().split())) == sorted(log.read_text().split())
    assert {t.split("#")[0] for t in late} <= set(log.read_text().split())
