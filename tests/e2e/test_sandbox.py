"""`exec.sandbox` with the real bubblewrap: grants hold, strays fail, no runtime means no run."""

from __future__ import annotations

import shutil

import pytest
from tests.e2e.runws import tree

from vx.trace.probe import sandbox_available

needs_bwrap = pytest.mark.skipif(
    not sandbox_available().ok, reason=f"no sandbox here: {sandbox_available().reason}"
)
CACHED = {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}}


def _task(command: str, read: list[str], write: list[str]) -> dict[str, object]:
    sandbox = {"allow": {"read": read, "write": write}}
    return {"build": {"exec": {"command": command, "sandbox": sandbox}, "cache": CACHED}}


@needs_bwrap
def test_a_task_inside_its_grants_runs_and_caches(workspace, vx):
    files = tree({"a": ((), _task("cp src/index.txt dist/a.txt", ["src/**"], ["dist/**"]))})
    root = workspace(files)
    vx(["run", "a#build"], root).assert_ok()
    assert (root / "packages/a/dist/a.txt").read_text() == "a\n"
    shutil.rmtree(root / "packages/a/dist")
    again = vx(["run", "a#build", "--format", "json"], root).assert_ok().json()
    assert again["tasks"][0]["restored"] is True


@needs_bwrap
def test_a_read_outside_the_grants_fails_and_saves_nothing(workspace, vx):
    files = tree({"a": ((), _task("cat ../../secret.txt > dist/a.txt", ["src/**"], ["dist/**"]))})
    files["secret.txt"] = "s\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--output-logs=full"], root)
    assert r.code == 1
    assert "../../secret.txt: No such file or directory" in r.out
    assert "failed" in r.out
    again = vx(["run", "a#build", "--format", "json"], root)
    assert again.json()["tasks"][0]["miss"]["kind"] == "first run"


@needs_bwrap
def test_a_write_outside_the_grants_fails(workspace, vx):
    files = tree({"a": ((), _task("echo x > src/new.txt", ["."], ["dist/**"]))})
    root = workspace(files)
    r = vx(["run", "a#build", "--output-logs=full"], root)
    assert r.code == 1
    assert "Read-only file system" in r.out
    assert not (root / "packages/a/src/new.txt").exists()


def test_without_bwrap_the_task_fails_and_never_runs(workspace, vx, tmp_path):
    files = tree({"a": ((), _task("touch ran && mkdir -p dist", ["."], ["dist/**"]))})
    root = workspace(files)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "git", "touch", "mkdir"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    r = vx(["run", "a#build", "--output-logs=full"], root, env={"PATH": str(bin_dir)})
    assert r.code == 1
    assert (
        "sandbox not available: bwrap is not on PATH (Debian: apt-get install bubblewrap)" in r.out
    )
    assert not (root / "packages/a/ran").exists()
    info = vx(["info", "--format", "json"], root, env={"PATH": str(bin_dir)}).assert_ok().json()
    assert info["sandbox"] == {
        "available": False,
        "reason": "bwrap is not on PATH (Debian: apt-get install bubblewrap)",
        "declared": 1,
    }


def test_a_persistent_task_cannot_be_sandboxed(workspace, vx):
    sandbox = {"allow": {"read": ["."]}}
    files = tree(
        {"a": ((), {"dev": {"exec": {"command": "x", "persistent": True, "sandbox": sandbox}}})}
    )
    root = workspace(files)
    r = vx(["run", "a#dev"], root)
    assert r.code != 0
    assert "a persistent or interactive task cannot be sandboxed" in r.err


def test_show_prints_the_grants(workspace, vx):
    import json

    from jsonschema import Draft202012Validator
    from tests.conftest import REPO

    root = workspace(tree({"a": ((), _task("true", ["src/**"], ["dist/**"]))}))
    doc = vx(["show", "a#build", "--format", "json"], root).assert_ok().json()
    schema = json.loads((REPO / "schemas/show.json").read_text())
    Draft202012Validator(schema).validate(doc)
    assert '"allow": {"read": ["src/**"], "write": ["dist/**"]}' in json.dumps(doc)


@needs_bwrap
def test_an_audited_sandboxed_task_is_traced_inside_its_sandbox(workspace, vx):
    files = tree({"a": ((), _task("cat src/index.txt extra.txt > dist/a.txt", ["."], ["dist/**"]))})
    files["packages/a/extra.txt"] = "x\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root).assert_ok()
    assert (
        '[vx] a#build: audit: reads packages/a/extra.txt, which no input covers — add "extra.txt"'
        " to cache.inputs.files"
    ) in r.err


@needs_bwrap
@pytest.mark.parametrize("tracer", ["seccomp", "strace"])
def test_an_audited_task_in_the_sandbox_is_traced_with_host_paths(workspace, vx, tracer):
    """The tracer wraps bubblewrap: the task's reads come back as the host's paths."""
    from vx.trace.probe import tracing_available

    if not tracing_available(None, tracer).ok:
        pytest.skip(f"{tracer} cannot trace here: {tracing_available(None, tracer).reason}")
    command = "cat src/index.txt extra.txt > dist/a.txt"
    files = tree({"a": ((), _task(command, ["src/**", "extra.txt"], ["dist/**"]))})
    files["packages/a/extra.txt"] = "e\n"
    root = workspace(files)
    r = vx(["run", "a#build", "--audit"], root, env={"VX_TRACER": tracer}).assert_ok()
    assert (root / "packages/a/dist/a.txt").read_text() == "a\ne\n"
    assert (
        "[vx] a#build: audit: reads packages/a/extra.txt, which no input covers"
        ' — add "extra.txt" to cache.inputs.files'
    ) in r.err
