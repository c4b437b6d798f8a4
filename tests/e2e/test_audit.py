"""`vx run --audit` with the real strace: each kind of finding, its line and its JSON; strict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from tests.conftest import REPO
from tests.e2e.runws import tree

from vx.trace.probe import tracing_available

pytestmark = pytest.mark.skipif(
    not tracing_available().ok, reason=f"no tracer here: {tracing_available().reason}"
)
CACHED = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}


def _build(command: str, **more: object) -> dict[str, object]:
    return {"build": {"exec": command, "cache": CACHED, **more}}


def _valid(name: str, doc: object) -> None:
    schema = json.loads((REPO / "schemas" / name).read_text())
    Draft202012Validator.check_schema(schema)
    Draft202012Validator(schema).validate(doc)


def _audit(vx, root: Path, task: str) -> dict[str, object]:
    """The task's audit in the latest run, from `vx last --format json` (schema-checked)."""
    doc = vx(["last", "--format", "json"], root).assert_ok().json()
    _valid("last.json", doc)
    [row] = [t for t in doc["tasks"] if t["id"] == task]
    return row["audit"]


def _notices(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("[vx] a#build:")]


def test_an_undeclared_read_in_the_package_names_the_glob(workspace, vx):
    files = tree({"a": ((), _build("mkdir -p dist && cat src/index.txt extra.txt > dist/o"))})
    files["packages/a/extra.txt"] = "extra\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    line = (
        'reads packages/a/extra.txt, which no input covers — add "extra.txt" to cache.inputs.files'
    )
    assert _notices(r.err) == [f"[vx] a#build: audit: {line}"]
    audit = _audit(vx, root, "a#build")
    assert audit["traced"] is True
    assert audit["findings"] == [
        {
            "kind": "undeclared-read",
            "path": "packages/a/extra.txt",
            "field": "cache.inputs.files",
            "value": "extra.txt",
            "line": line,
        }
    ]


def test_a_siblings_outputs_read_without_an_edge_names_the_edge(workspace, vx):
    files = tree(
        {
            "b": ((), _build("mkdir -p dist && cp src/index.txt dist/b.txt")),
            "a": (("b",), _build("mkdir -p dist && cat ../b/dist/b.txt > dist/a.txt")),
        }
    )
    root = workspace(files)
    vx(["run", "b#build"], root).assert_ok()
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    line = (
        "reads packages/b/dist/b.txt, an output of b#build, with no dependsOn edge to it —"
        ' add "^build" to dependsOn'
    )
    assert _notices(r.err) == [f"[vx] a#build: audit: {line}"]
    [finding] = _audit(vx, root, "a#build")["findings"]
    assert (finding["kind"], finding["field"], finding["value"]) == (
        "missing-edge",
        "dependsOn",
        "^build",
    )


def test_a_script_outside_the_package_names_the_workspace_file(workspace, vx):
    files = tree({"a": ((), _build("mkdir -p dist && sh ../../tools/gen.sh > dist/o"))})
    files["tools/gen.sh"] = "echo generated\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    line = (
        "reads tools/gen.sh, outside its package, which no input covers —"
        ' add "tools/gen.sh" to cache.inputs.workspaceFiles'
    )
    assert _notices(r.err) == [f"[vx] a#build: audit: {line}"]
    [finding] = _audit(vx, root, "a#build")["findings"]
    assert finding["field"] == "cache.inputs.workspaceFiles"
    assert finding["value"] == "tools/gen.sh"


def test_a_write_outside_the_outputs_names_the_glob(workspace, vx):
    files = tree({"a": ((), _build("mkdir -p dist meta && echo 1 > dist/o && echo 2 > meta/m"))})
    files[".gitignore"] = "dist/\nmeta/\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    line = (
        "writes packages/a/meta/m, outside its declared outputs —"
        ' add "meta/**" to cache.outputs.files'
    )
    assert _notices(r.err) == [f"[vx] a#build: audit: {line}"]
    [finding] = _audit(vx, root, "a#build")["findings"]
    assert (finding["kind"], finding["value"]) == ("undeclared-write", "meta/**")


def test_a_task_rewriting_its_own_input_is_not_cacheable(workspace, vx):
    files = tree(
        {"a": ((), _build("mkdir -p dist && sed -i s/a/b/ src/index.txt && cp src/index.txt dist"))}
    )
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    line = (
        "rewrites its own input packages/a/src/index.txt —"
        " a task that changes its inputs is not cacheable"
    )
    assert f"[vx] a#build: audit: {line}" in _notices(r.err)
    audit = _audit(vx, root, "a#build")
    assert "modifies-input" in [f["kind"] for f in audit["findings"]]


@pytest.mark.skipif(not Path("/bin/busybox").exists(), reason="busybox-static is not installed")
def test_a_static_binary_is_seen(workspace, vx):
    files = tree({"a": ((), _build("mkdir -p dist && /bin/busybox cat extra.txt > dist/o"))})
    files["packages/a/extra.txt"] = "extra\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    line = (
        'reads packages/a/extra.txt, which no input covers — add "extra.txt" to cache.inputs.files'
    )
    assert _notices(r.err) == [f"[vx] a#build: audit: {line}"]


def test_strict_saves_nothing_for_a_task_with_findings_and_says_so(workspace, vx):
    files = tree({"a": ((), _build("mkdir -p dist && cat extra.txt > dist/o"))})
    files["packages/a/extra.txt"] = "extra\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit=strict"], root).assert_ok()
    assert "[vx] a#build: audit strict: 1 finding, nothing saved" in r.err
    again = vx(["run", "a#build", "--format", "json"], root).assert_ok().json()
    [row] = again["tasks"]
    assert row["miss"]["kind"] == "first run"  # nothing was saved


def test_the_workspace_setting_audits_and_a_hit_is_never_traced(workspace, vx):
    files = tree({"a": ((), _build("mkdir -p dist && cat src/index.txt > dist/o"))})
    files["vx.workspace.json"] = {"audit": "strict"}
    root = workspace(files)
    first = vx(["run", "a#build"], root).assert_ok()
    assert _notices(first.err) == []
    assert _audit(vx, root, "a#build")["findings"] == []
    vx(["run", "a#build"], root).assert_ok()
    doc = vx(["last", "--format", "json"], root).assert_ok().json()
    [row] = doc["tasks"]
    assert row["cache"] != "miss"
    assert "audit" not in row


def test_where_strace_cannot_start_the_task_says_not_traced(workspace, vx, tmp_path):
    files = tree({"a": ((), _build("mkdir -p dist && cat src/index.txt > dist/o"))})
    root = workspace(files)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "git", "mkdir", "cat"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {"PATH": str(bin_dir), "VX_TRACER": "strace"}
    r = vx(["run", "a#build", "--audit=strict"], root, env=env).assert_ok()
    assert _notices(r.err) == [
        "[vx] a#build: not traced — strace is not on PATH (Debian: apt-get install strace)",
        "[vx] a#build: audit strict: it was not traced, nothing saved",
    ]
    assert _audit(vx, root, "a#build")["traced"] is False
    if not tracing_available(None, "seccomp").ok:
        return
    # With the choice left to vx, its own tracer needs no tool on PATH.
    r = vx(["run", "a#build", "--audit=strict", "--force"], root, env={"PATH": str(bin_dir)})
    assert _notices(r.assert_ok().err) == []
    assert _audit(vx, root, "a#build")["traced"] is True


def test_a_task_with_no_cache_block_gets_one_that_caches(workspace, vx):
    files = tree({"a": ((), {"build": {"exec": "mkdir -p lib && cat src/index.txt > lib/a.js"}})})
    files[".gitignore"] = "lib/\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    assert (
        "[vx] a#build: audit: no cache block — `vx audit --suggest` shows the one it needs" in r.err
    )
    patch = vx(["audit", "--suggest"], root).assert_ok().out
    assert patch.startswith("--- a/packages/a/vx.config.json\n+++ b/packages/a/vx.config.json\n")
    assert '+            "lib/**"' in patch
    vx(["audit", "--apply"], root).assert_ok()
    config = json.loads((root / "packages/a/vx.config.json").read_text())
    assert config["tasks"]["build"]["cache"] == {
        "inputs": {"files": ["src/**"]},
        "outputs": {"files": ["lib/**"]},
    }
    vx(["run", "a#build"], root).assert_ok()
    shutil.rmtree(root / "packages/a/lib")
    second = vx(["run", "a#build", "--format", "json"], root).assert_ok().json()
    assert second["tasks"][0]["restored"] is True
    assert (root / "packages/a/lib/a.js").read_text() == "a\n"


def test_a_plain_run_loads_neither_the_tracer_nor_the_audit(workspace, tmp_path):
    import subprocess
    import sys

    from tests.e2e.test_version_imports import _IMPORTED

    from conftest import VX, base_env

    files = tree({"a": ((), _build("mkdir -p dist && cat src/index.txt > dist/o"))})
    root = workspace(files)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(VX), "run", "a#build"],
        cwd=root,
        env=base_env({"HOME": str(tmp_path / "home")}),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    modules = set(_IMPORTED.findall(proc.stderr))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "vx.run.executor" in modules, "the import report was not read"
    assert not {m for m in modules if m.startswith(("vx.trace", "vx.audit", "vx.run.audit"))}


def test_findings_reach_summarize_why_and_vx_audit(workspace, vx, tmp_path):
    files = tree({"a": ((), _build("mkdir -p dist && cat src/index.txt extra.txt > dist/o"))})
    files["packages/a/extra.txt"] = "extra\n"
    root = workspace(files)
    summary = tmp_path / "summary.json"
    vx(["run", "a#build", "--audit", f"--summarize={summary}"], root).assert_ok()
    written = json.loads(summary.read_text())
    _valid("summary.json", written)
    [row] = written["tasks"]
    [finding] = row["audit"]["findings"]
    assert finding["value"] == "extra.txt"
    line = (
        'reads packages/a/extra.txt, which no input covers — add "extra.txt" to cache.inputs.files'
    )
    why = vx(["why", "a#build"], root).assert_ok().out
    assert why.endswith(f"\n  audit (this run):\n    {line}\n")
    doc = vx(["why", "a#build", "--format", "json"], root).assert_ok().json()
    _valid("why.json", doc)
    assert doc["audit"]["findings"][0]["line"] == line
    assert vx(["audit"], root).assert_ok().out == f"a#build: audit: {line}\n"
    both = vx(["audit", "--suggest", "--apply"], root)
    assert both.code == 1
    assert "--suggest and --apply both given" in both.err


def test_vx_audit_with_no_audited_run_says_how_to_get_one(workspace, vx):
    root = workspace(tree({"a": ((), _build("mkdir -p dist && cat src/index.txt > dist/o"))}))
    vx(["run", "a#build"], root).assert_ok()
    r = vx(["audit"], root)
    assert r.code == 1
    assert "vx audit: no task has been audited yet — run vx run --audit first" in r.err


def test_a_read_git_ignores_is_keyed_through_a_runtime_command(workspace, vx):
    build = {
        "exec": "mkdir -p dist && cat .env > dist/o",
        "cache": {"outputs": {"files": ["dist/**"]}},
    }
    files = tree({"a": ((), {"build": build})})
    files[".gitignore"] = "dist/\n.env\n"
    files["packages/a/.env"] = "MODE=dev\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    line = (
        "reads packages/a/.env, which git ignores, so no input can key it —"
        ' add "cat .env" to cache.inputs.runtime'
    )
    assert _notices(r.err) == [f"[vx] a#build: audit: {line}"]
    vx(["audit", "--apply"], root).assert_ok()
    config = json.loads((root / "packages/a/vx.config.json").read_text())
    assert config["tasks"]["build"]["cache"]["inputs"] == {"runtime": ["cat .env"]}
    vx(["run", "a#build"], root).assert_ok()
    (root / "packages/a/.env").write_text("MODE=prod\n")
    again = vx(["run", "a#build", "--format", "json"], root).assert_ok().json()
    assert again["tasks"][0]["miss"]["kind"] == "runtime"
    assert (root / "packages/a/dist/o").read_text() == "MODE=prod\n"


def test_a_task_with_no_cache_block_that_writes_tracked_files_stays_uncached(workspace, vx):
    files = tree({"a": ((), {"gen": {"exec": "date +%s > src/stamp.txt"}})})
    files["packages/a/src/stamp.txt"] = "0\n"
    root = workspace(files)
    r = vx(["run", "a#gen", "--audit"], root).assert_ok()
    why = "it rewrites packages/a/src/stamp.txt, which it reads or git tracks"
    assert f"[vx] a#gen: audit: not cacheable — {why}" in r.err
    before = (root / "packages/a/vx.config.json").read_text()
    applied = vx(["audit", "--apply"], root).assert_ok()
    assert f"vx audit: a#gen stays uncached — {why}\n" in applied.err
    assert (root / "packages/a/vx.config.json").read_text() == before
