"""`vx run` and the cache end to end: hits, exact invalidation, and what each cache flag does."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import jsonschema
import pytest
from tests.conftest import REPO, VX, base_env, git, write_tree
from tests.e2e.cachews import (
    artifact_members,
    default_store,
    dependants,
    entry_keys,
    generated,
    hashes,
    name,
    query,
    statuses,
    tasks,
)
from tests.e2e.runws import tree

from vx.cache.logblob import unpack

if TYPE_CHECKING:
    from pathlib import Path

OUTS = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}
STAMP = "mkdir -p dist && cat src/index.txt > dist/out.txt && date +%s%N >> dist/out.txt"
"""A build whose output differs every time it runs: a restore shows which run it kept."""

JSON = ["--format", "json"]
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 1, 2, 3


def cached(command: str = STAMP, **extra):
    return {"exec": command, "cache": OUTS, **extra}


def one(command: str = STAMP, **extra):
    """A workspace of one package `a` with one cached build."""
    return tree({"a": ((), {"build": cached(command, **extra)})})


def run_json(vx, root: Path, *args: str, code: int = 0, **kw):
    result = vx(["run", *args, *JSON], root, **kw)
    result.assert_code(code)
    return result


def test_a_200_package_workspace_hits_and_invalidates_exactly(workspace, vx, tmp_path):
    files, deps = generated(200)
    root = workspace(files)
    everything = {f"{p}#build" for p in deps}

    first = run_json(vx, root, "build", "--all")
    assert statuses(first) == dict.fromkeys(everything, "success")
    keys = hashes_of(first)
    assert entry_keys(default_store(tmp_path / "home")) == set(keys.values())
    bundle = (root / "packages/pkg-000/dist/bundle.js").read_bytes()
    assert bundle == b"export const id = 0;\nexport const deps = [];\n"

    second = run_json(vx, root, "build", "--all")
    assert statuses(second) == dict.fromkeys(everything, "cache-hit")
    assert hashes_of(second) == keys

    leaf = next(p for p in deps if not deps[p] and 5 <= len(dependants(deps, p)) <= 50)
    with (root / "packages" / leaf / "src/index.js").open("a") as fh:
        fh.write("export const edited = true;\n")
    third = run_json(vx, root, "build", "--all")
    ran = {tid for tid, word in statuses(third).items() if word == "success"}
    assert ran == {f"{p}#build" for p in dependants(deps, leaf)}
    assert {tid for tid, word in statuses(third).items() if word == "cache-hit"} == everything - ran
    rekeyed = {tid for tid, key in hashes_of(third).items() if key != keys[tid]}
    assert rekeyed == ran
    assert b"edited" in (root / "packages" / leaf / "dist/bundle.js").read_bytes()

    shutil.rmtree(root / "packages/pkg-000/dist")
    fourth = run_json(vx, root, "build", "--all")
    rows = tasks(fourth)
    assert {t for t, r in rows.items() if r["status"] == "cache-hit"} == everything
    assert {t for t, r in rows.items() if r["restored"]} == {"pkg-000#build"}
    assert (root / "packages/pkg-000/dist/bundle.js").read_bytes() == bundle

    other = next(
        p for p in deps if not deps[p] and p != leaf and 5 <= len(dependants(deps, p)) <= 50
    )
    (root / "packages" / other / "src/util.js").chmod(0o755)
    fifth = run_json(vx, root, "build", "--all")
    ran = {tid for tid, word in statuses(fifth).items() if word == "success"}
    assert ran == {f"{p}#build" for p in dependants(deps, other)}
    before = hashes_of(fourth)
    assert {tid for tid, key in hashes_of(fifth).items() if key != before[tid]} == ran


def hashes_of(result) -> dict[str, str]:
    return {tid: row["hash"] for tid, row in tasks(result).items()}


def test_hash_only_prints_each_key(workspace, vx, tmp_path):
    files, _ = generated(3)
    root = workspace(files)
    printed = vx(["run", "build", "--all", "--output-logs=hash-only"], root).assert_ok()
    keys = hashes(printed.out)
    assert set(keys) == {f"{name(i)}#build" for i in range(3)}
    assert keys == hashes_of(run_json(vx, root, "build", "--all"))
    assert set(keys.values()) == entry_keys(default_store(tmp_path / "home"))


def test_force_reexecutes_and_refreshes_the_entry(workspace, vx):
    root = workspace(one())
    out = root / "packages/a/dist/out.txt"
    run_json(vx, root, "build", "--all")
    first = out.read_bytes()

    forced = run_json(vx, root, "build", "--all", "--force")
    assert statuses(forced) == {"a#build": "success"}
    refreshed = out.read_bytes()
    assert refreshed != first

    shutil.rmtree(root / "packages/a/dist")
    again = run_json(vx, root, "build", "--all")
    assert statuses(again) == {"a#build": "cache-hit"}
    assert out.read_bytes() == refreshed


def test_no_cache_neither_reads_nor_writes_and_leaves_outputs(workspace, vx, tmp_path):
    root = workspace(one())
    pkg = root / "packages/a"
    run_json(vx, root, "build", "--all")
    store = default_store(tmp_path / "home")
    kept = entry_keys(store)
    artifacts = {p.name: p.stat().st_mtime_ns for p in store.glob("*.tar.zst")}
    (pkg / "dist/stale.txt").write_text("left by hand\n")

    unread = run_json(vx, root, "build", "--all", "--no-cache")
    assert tasks(unread)["a#build"]["status"] == "success"
    assert tasks(unread)["a#build"]["noCache"] is True
    assert (pkg / "dist/stale.txt").read_text() == "left by hand\n"

    (pkg / "src/index.txt").write_text("changed\n")
    unwritten = run_json(vx, root, "build", "--all", "--no-cache")
    assert statuses(unwritten) == {"a#build": "success"}
    assert (pkg / "dist/out.txt").read_text().startswith("changed\n")
    assert (pkg / "dist/stale.txt").exists()
    assert entry_keys(store) == kept
    assert {p.name: p.stat().st_mtime_ns for p in store.glob("*.tar.zst")} == artifacts


def test_local_read_only_reads_but_never_writes(workspace, vx, tmp_path):
    root = workspace(one())
    cache = tmp_path / "c"
    flags = ("--cache-dir", str(cache), "--cache=local:r")
    ran = run_json(vx, root, "build", "--all", *flags)
    assert statuses(ran) == {"a#build": "success"}
    assert entry_keys(cache) == set()
    assert not list(cache.glob("*.tar.zst"))

    run_json(vx, root, "build", "--all", "--cache-dir", str(cache))
    saved = entry_keys(cache)
    assert len(saved) == 1
    shutil.rmtree(root / "packages/a/dist")
    read = run_json(vx, root, "build", "--all", *flags)
    assert tasks(read)["a#build"]["status"] == "cache-hit"
    assert tasks(read)["a#build"]["restored"] is True

    (root / "packages/a/src/index.txt").write_text("changed\n")
    missed = run_json(vx, root, "build", "--all", *flags)
    assert statuses(missed) == {"a#build": "success"}
    assert entry_keys(cache) == saved
    assert len(list(cache.glob("*.tar.zst"))) == 1


def test_a_remote_layer_is_named_inert(workspace, vx):
    root = workspace(one())
    result = vx(["run", "build", "--all", "--cache=remote:rw"], root).assert_ok()
    line = "[vx] --cache names a remote layer, but no plugin supplies one: it is inert"
    assert result.err.splitlines().count(line) == 1
    assert line not in result.out


@pytest.mark.parametrize("glob", ["**", "package.json", "*.json"])
def test_an_output_glob_covering_package_json_is_refused(workspace, vx, glob):
    command = "touch ran; mkdir -p dist"
    files = tree({"a": ((), {"build": {"exec": command, "cache": {"outputs": {"files": [glob]}}}})})
    root = workspace(files)
    result = vx(["run", "build", "--all"], root).assert_code(1)
    assert result.err == (
        "packages/a/vx.config.json: tasks.build.cache.outputs.files: covers package.json,"
        " which vx would delete when it cleans the outputs — narrow the glob\n"
    )
    assert not (root / "packages/a/ran").exists()
    assert (root / "packages/a/package.json").exists()


def test_overlapping_outputs_without_an_edge_are_refused_naming_both(workspace, vx):
    gen = {"exec": "touch ran", "cache": {"outputs": {"files": ["dist/gen/**"]}}}
    build = {"exec": "touch ran", "cache": {"outputs": {"files": ["dist/**"]}}}
    root = workspace(tree({"a": ((), {"build": build, "gen": gen})}))
    result = vx(["run", "build", "gen"], root / "packages/a").assert_code(1)
    assert result.err == (
        "a#build and a#gen declare overlapping outputs ('dist/**' and 'dist/gen/**') with no"
        " dependsOn edge between them — give each its own output dir, or order them\n"
    )
    assert not (root / "packages/a/ran").exists()

    ordered = {**build, "dependsOn": ["gen"]}
    (root / "packages/a/vx.config.json").write_text(
        json.dumps({"tasks": {"build": ordered, "gen": gen}})
    )
    vx(["run", "build", "gen"], root / "packages/a").assert_ok()


def test_negated_outputs_are_not_cleaned_saved_or_restored(workspace, vx, tmp_path):
    command = "mkdir -p dist && cp src/index.txt dist/out.txt && echo run >> dist/keep.txt"
    outs = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**", "!dist/keep.txt"]}}
    root = workspace(tree({"a": ((), {"build": {"exec": command, "cache": outs}})}))
    dist = root / "packages/a/dist"
    cache = tmp_path / "c"
    flags = ("--all", "--cache-dir", str(cache))

    run_json(vx, root, "build", *flags)
    (key,) = entry_keys(cache)
    assert set(artifact_members(cache / f"{key}.tar.zst")) == {"dist/out.txt"}

    (dist / "out.txt").unlink()
    hit = run_json(vx, root, "build", *flags)
    assert tasks(hit)["a#build"]["restored"] is True
    assert (dist / "out.txt").read_text() == "a\n"
    assert (dist / "keep.txt").read_text() == "run\n"

    (root / "packages/a/src/index.txt").write_text("b\n")
    rerun = run_json(vx, root, "build", *flags)
    assert statuses(rerun) == {"a#build": "success"}
    assert (dist / "keep.txt").read_text() == "run\nrun\n"  # not cleaned before the run

    git(root, "checkout", "--", "packages/a/src/index.txt")
    shutil.rmtree(dist)
    restored = run_json(vx, root, "build", *flags)
    assert tasks(restored)["a#build"]["restored"] is True
    assert sorted(p.name for p in dist.iterdir()) == ["out.txt"]


def test_a_failed_task_is_not_saved(workspace, vx, tmp_path):
    root = workspace(one("mkdir -p dist && echo half > dist/out.txt && exit 3"))
    cache = tmp_path / "c"
    for _ in range(2):
        failed = run_json(vx, root, "build", "--all", "--cache-dir", str(cache), code=1)
        assert statuses(failed) == {"a#build": "failed"}
    assert entry_keys(cache) == set()
    assert not list(cache.glob("*.tar.zst"))


def chain(lib_command: str) -> dict:
    return tree(
        {
            "lib": ((), {"build": cached(lib_command)}),
            "app": (("lib",), {"build": cached(dependsOn=["^build"])}),
        }
    )


def test_continue_always_runs_a_task_behind_a_failure_but_does_not_save_it(workspace, vx, tmp_path):
    root = workspace(chain("exit 1"))
    cache = tmp_path / "c"
    flags = ("build", "--all", "--continue=always", "--cache-dir", str(cache))
    for _ in range(2):
        result = run_json(vx, root, *flags, code=1)
        assert statuses(result) == {"lib#build": "failed", "app#build": "success"}
        assert (root / "packages/app/dist/out.txt").exists()
    assert entry_keys(cache) == set()


def test_a_task_behind_an_excluded_dependency_is_not_saved(workspace, vx, tmp_path):
    root = workspace(chain(STAMP))
    cache = tmp_path / "c"
    app = root / "packages/app"
    for _ in range(2):
        result = run_json(vx, app, "build", "--exclude-dependencies", "--cache-dir", str(cache))
        assert statuses(result) == {"app#build": "success"}
        assert entry_keys(cache) == set()
    whole = run_json(vx, app, "build", "--cache-dir", str(cache))
    assert statuses(whole) == {"lib#build": "success", "app#build": "success"}
    assert set(hashes_of(whole).values()) == entry_keys(cache)


def test_a_task_with_no_cache_block_always_runs(workspace, vx, tmp_path):
    root = workspace(tree({"a": ((), {"build": {"exec": "echo ran >> log"}})}))
    for _ in range(3):
        result = run_json(vx, root, "build", "--all")
        assert tasks(result)["a#build"]["status"] == "success"
        assert tasks(result)["a#build"]["noCache"] is True
    assert (root / "packages/a/log").read_text() == "ran\n" * 3
    assert entry_keys(default_store(tmp_path / "home")) == set()


def test_cache_dir_precedence_flag_over_config_over_env(workspace, vx, tmp_path):
    root = workspace(one())
    dirs = {k: tmp_path / f"by-{k}" for k in ("flag", "config", "env")}
    env = {"VX_CACHE_DIR": str(dirs["env"])}

    def holds_the_cache(where: str) -> None:
        for kind, path in dirs.items():
            has = (path / "cache.db").is_file() and any(path.glob("*.tar.zst"))
            assert has == (kind == where), (kind, where)

    run_json(vx, root, "build", "--all", env=env)
    holds_the_cache("env")
    for path in dirs.values():
        shutil.rmtree(path, ignore_errors=True)

    (root / "vx.workspace.json").write_text(json.dumps({"cacheDir": "../by-config"}))
    run_json(vx, root, "build", "--all", env=env)
    holds_the_cache("config")
    for path in dirs.values():
        shutil.rmtree(path, ignore_errors=True)

    run_json(vx, root, "build", "--all", "--cache-dir", str(dirs["flag"]), env=env)
    holds_the_cache("flag")
    assert not (tmp_path / "home/.vx").exists()


def test_an_unwritable_cache_dir_fails_the_run_before_any_task(workspace, vx, tmp_path):
    """Root writes anywhere, so vx runs without the capabilities that let it (DAC override)."""
    root = workspace(one("touch ran"))
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    cache = locked / "cache"
    libc = ctypes.CDLL(None, use_errno=True)

    def without_dac_override() -> None:
        for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
            if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    proc = subprocess.run(
        [sys.executable, str(VX), "run", "build", "--cache-dir", str(cache)],
        cwd=root / "packages/a",
        env=base_env({"HOME": str(tmp_path / "home")}),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=without_dac_override,
        check=False,
    )
    assert proc.returncode == 1, proc
    assert proc.stderr == f"cache directory {cache} is not writable (EACCES: permission denied)\n"
    assert proc.stdout == ""
    assert not (root / "packages/a/ran").exists()
    assert not cache.exists()


def test_format_json_prints_the_summary_and_summarize_writes_it(workspace, vx, tmp_path):
    schema = json.loads((REPO / "schemas/summary.json").read_text())
    root = workspace(
        tree(
            {
                "a": ((), {"build": cached()}),
                "b": (("a",), {"build": {"exec": "echo plain", "dependsOn": ["^build"]}}),
            }
        )
    )
    cache = tmp_path / "c"
    printed = run_json(vx, root, "build", "--all", "--cache-dir", str(cache))
    doc = json.loads(printed.out)
    jsonschema.validate(doc, schema)
    assert {t["id"] for t in doc["tasks"]} == {"a#build", "b#build"}
    assert "─ vx" in printed.err  # the footer, and everything but the document, is on stderr

    bare = vx(["run", "build", "--all", "--cache-dir", str(cache), "--summarize"], root)
    bare.assert_ok()
    (written,) = (cache / "runs").glob("*.json")
    summary = json.loads(written.read_text())
    jsonschema.validate(summary, schema)
    assert written.name == f"{summary['runId']}.json"
    assert f"[vx] run summary written to {written}" in bare.err
    assert summary["summary"]["cachedLocal"] == 1

    cwd = root / "packages/b"
    vx(["run", "build", "--cache-dir", str(cache), "--summarize=out/s.json"], cwd).assert_ok()
    jsonschema.validate(json.loads((cwd / "out/s.json").read_text()), schema)


def test_the_history_has_one_invocation_and_a_row_per_task(workspace, vx, tmp_path):
    root = workspace(
        tree(
            {
                "a": ((), {"build": cached()}),
                "b": (("a",), {"build": {"exec": "exit 4", "dependsOn": ["^build"]}}),
                "c": ((), {"build": cached()}),
            }
        )
    )
    cache = tmp_path / "c"
    args = ("build", "--all", "--tag", "team=web", "--tag", "k=v=w", "--cache-dir", str(cache))
    result = run_json(vx, root, *args, code=1)
    run_id = result.json()["runId"]
    (row,) = query(
        cache, "SELECT run_id, command, exit_code, git_branch, git_sha, tags FROM invocations"
    )
    sha = git(root, "rev-parse", "HEAD").strip()
    assert (row[0], *row[2:5]) == (run_id, 1, "main", sha)
    assert row[1].split()[:3] == ["vx", "run", "build"]
    assert "--all" in row[1].split()
    assert json.loads(row[5]) == {"team": "web", "k": "v=w"}
    runs = query(cache, "SELECT run_id, project || '#' || task, status FROM runs")
    assert sorted(runs) == [
        (run_id, "a#build", "success"),
        (run_id, "b#build", "failed"),
        (run_id, "c#build", "success"),
    ]

    kept = json.loads((cache / "failures" / f"{run_id}.json").read_text())
    assert kept["runId"] == run_id
    assert [t["taskId"] for t in kept["tasks"]] == ["b#build"]
    assert kept["tasks"][0]["exitCode"] == 4


def test_a_second_run_on_the_workspace_waits_for_the_first(workspace, tmp_path):
    command = "touch started; while [ ! -f go ]; do sleep 0.05; done"
    root = workspace(tree({"a": ((), {"build": {"exec": command}})}))
    pkg = root / "packages/a"
    env = base_env({"HOME": str(tmp_path / "home")})
    logs = {n: (tmp_path / f"{n}.out", tmp_path / f"{n}.err") for n in ("first", "second")}

    def spawn(n: str) -> subprocess.Popen[bytes]:
        out, err = logs[n]
        with out.open("wb") as o, err.open("wb") as e:
            return subprocess.Popen(
                [sys.executable, str(VX), "run", "build"], cwd=pkg, env=env, stdout=o, stderr=e
            )

    first = spawn("first")
    second = None
    try:
        wait_for((pkg / "started").exists, first)
        (pkg / "started").unlink()
        second = spawn("second")
        notice = f"[vx] waiting for another vx run (pid {first.pid}) on this workspace to finish…"
        wait_for(lambda: notice in logs["second"][1].read_text(), second)
        assert not (pkg / "started").exists()  # the second run's task has not begun
        (pkg / "go").touch()
        assert first.wait(timeout=120) == 0
        assert second.wait(timeout=120) == 0
        assert (pkg / "started").exists()
        assert logs["second"][1].read_text().count("waiting for another vx run") == 1
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def wait_for(ready, proc: subprocess.Popen[bytes], limit_s: float = 60) -> None:
    """Poll until `ready()`; fail (never hang) if the process exits first or time runs out."""
    deadline = time.monotonic() + limit_s
    while not ready():
        assert proc.poll() is None, f"vx exited {proc.returncode} too early"
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.02)


def test_vx_requires_git(workspace, vx, tmp_path):
    files = one("touch ran")
    outside = tmp_path / "plain"
    outside.mkdir()
    write_tree(outside, files)
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    result = vx(["run", "build", "--all"], outside, env=env).assert_code(1)
    assert result.err == f"vx requires git: {outside} is not inside a git work tree\n"
    assert result.out == ""

    fresh = workspace(files, name="fresh", commit=False)
    result = vx(["run", "build", "--all"], fresh, env=env).assert_code(1)
    assert result.err == (
        f"vx requires git: {fresh} is a git repository with no commit yet — commit once and re-run\n"
    )
    assert not (outside / "packages/a/ran").exists()
    assert not (fresh / "packages/a/ran").exists()


SECRET = "s3cr3t-Value-91c4e7"  # noqa: S105  a planted value the test hunts for
TOKEN = "npm_AbCdEf123456xyz"  # noqa: S105


def test_a_secret_reaches_no_artifact_no_log_row_and_no_terminal(workspace, vx, tmp_path):
    leak = (
        'echo "tok=$DEPLOY_CREDS"; echo "err=$DEPLOY_CREDS" >&2; '
        "printf '%s' \"$NPM_TOKEN\" | head -c 6; sleep 0.1; printf '%s\\n' \"$NPM_TOKEN\" | tail -c +7"
    )
    env_spec = {"secret": ["DEPLOY_CREDS"], "passThrough": ["NPM_TOKEN"]}
    build = {
        "exec": {"command": f"{leak}; mkdir -p dist && echo ok > dist/out.txt", "env": env_spec},
        "cache": OUTS,
    }
    broken = {"exec": {"command": f"{leak}; exit 2", "env": env_spec}}
    root = workspace(tree({"a": ((), {"build": build}), "z": ((), {"build": broken})}))
    cache = tmp_path / "c"
    env = {"DEPLOY_CREDS": SECRET, "NPM_TOKEN": TOKEN}
    args = ["run", "build", "--all", "--continue", "--output-logs=full", "--cache-dir", str(cache)]
    first = vx(args, root, env=env).assert_code(1)
    replay = vx(args, root, env=env).assert_code(1)
    for result in (first, replay):
        for secret in (SECRET, TOKEN):
            assert secret not in result.out + result.err
        assert "tok=***" in result.out
    outcomes = query(cache, "SELECT project, cache, status FROM runs ORDER BY id")
    assert [o for o in outcomes if o[0] == "a"] == [
        ("a", "miss", "success"),
        ("a", "up-to-date", "success"),
    ]

    blocks = query(cache, "SELECT data FROM entry_log ORDER BY key, seq")
    logged = "".join(text for (block,) in blocks for _, text in unpack(block))
    assert "tok=***" in logged
    assert "err=***" in logged
    assert "***" in logged.replace("tok=***", "").replace("err=***", "")
    for path in cache.rglob("*"):
        if not path.is_file():
            continue
        blobs = [path.read_bytes()]
        if path.name.endswith(".tar.zst"):
            blobs += [b for b in artifact_members(path).values() if b]
        for blob in blobs:
            for secret in (SECRET, TOKEN):
                assert secret.encode() not in blob, path
    assert list(cache.glob("failures/*.json"))
