"""The REAPI remote cache end to end, against a real BuildGrid server: two clones sharing one
cache, and the plugin refused in one line where its extra is missing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from tests.conftest import base_env, make_git_workspace, run_vx
from tests.e2e.remoteservers import buildgrid_server
from tests.e2e.test_remote_turbo import clone, files, outcomes, outputs

if TYPE_CHECKING:
    from pathlib import Path

PLUGIN = "vx.plugins.reapi:plugin"


@pytest.fixture
def grpc_installed() -> None:
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("grpcio is not installed here: pip install -e '.[reapi]'")


@pytest.mark.usefixtures("grpc_installed")
def test_a_second_clone_hits_the_first_clones_uploads(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files(plugin=PLUGIN))
    run = ["run", "build", "--all", "--output-logs=full"]
    with buildgrid_server(tmp_path / "bgd") as server:
        url = server.url
        env = {"VX_REAPI_URL": url}
        first = clone(origin, tmp_path / "one")
        ran = run_vx(run, first, env=env, home=tmp_path / "h1").assert_ok()
        assert set(outcomes(ran).values()) == {"success"}
        second = clone(origin, tmp_path / "two")
        hit = run_vx(run, second, env=env, home=tmp_path / "h2").assert_ok()
    assert outcomes(hit) == dict.fromkeys(("a#build", "b#build", "c#build"), "restored-remote")
    assert outputs(second) == outputs(first)
    assert "REAPI cache at grpc://" in hit.out
    assert [line for line in hit.err.splitlines() if "REAPI" in line] == []


@pytest.mark.usefixtures("grpc_installed")
def test_a_stopped_server_leaves_the_run_green_with_one_notice(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files(plugin=PLUGIN))
    with buildgrid_server(tmp_path / "bgd") as server:
        url = server.url
    result = run_vx(["run", "build", "--all"], origin, env={"VX_REAPI_URL": url},
                    home=tmp_path / "h").assert_ok()  # fmt: skip
    [notice] = [line for line in result.err.splitlines() if "REAPI cache at" in line]
    assert "UNAVAILABLE" in notice


def hiding_grpc(tmp_path: Path) -> Path:
    """A sitecustomize dir that makes `grpc` impossible to import, for PYTHONPATH."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'grpc' or name.startswith('grpc.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    return hide


def test_without_grpcio_the_plugin_is_refused_naming_the_extra(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", files(plugin=PLUGIN))
    hide = hiding_grpc(tmp_path)
    result = run_vx(["run", "build", "--all"], ws, env={"PYTHONPATH": str(hide)},
                    home=tmp_path / "h").assert_code(1)  # fmt: skip
    assert result.err == (
        "plugin 'vx-reapi' needs grpcio, which is not installed — "
        "python3 -m pip install 'vx-runner[reapi]'\n"
    )


def test_vx_pyz_without_grpcio_names_what_its_python_needs(built_pyz: Path, tmp_path: Path) -> None:
    """vx.pyz has no distribution to add an extra to: grpcio goes into its interpreter."""
    ws = make_git_workspace(tmp_path / "ws", files(plugin=PLUGIN))
    env = base_env({"PYTHONPATH": str(hiding_grpc(tmp_path)), "HOME": str(tmp_path / "h")})
    proc = subprocess.run(
        [sys.executable, str(built_pyz), "run", "build", "--all"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr == (
        "plugin 'vx-reapi' needs grpcio, which is not installed — "
        "python3 -m pip install grpcio, for the Python that runs vx.pyz\n"
    )


@pytest.mark.usefixtures("grpc_installed")
def test_an_entry_filed_under_another_key_is_refused(tmp_path: Path) -> None:
    from vx.cache.remote.reapi import ReapiCache, ReapiConfig

    origin = make_git_workspace(tmp_path / "origin", files(plugin=PLUGIN))
    run = ["run", "build", "--all", "--output-logs=full"]
    with buildgrid_server(tmp_path / "bgd") as server:
        url = server.url
        env = {"VX_REAPI_URL": url}
        first = clone(origin, tmp_path / "one")
        run_vx(run, first, env=env, home=tmp_path / "h1").assert_ok()
        plan = run_vx([*run, "--dry=json"], first, env=env, home=tmp_path / "h1").assert_ok()
        keys = {t["id"]: t["hash"] for t in plan.json()["tasks"]}
        client = ReapiCache(ReapiConfig(url))
        stolen = client.fetch(keys["a#build"])
        assert stolen is not None
        client.store(keys["b#build"], stolen, duration_ms=1.0)  # b's key now serves a's entry
        second = clone(origin, tmp_path / "two")
        result = run_vx(run, second, env=env, home=tmp_path / "h2").assert_ok()
        third = clone(origin, tmp_path / "three")
        healed = run_vx(run, third, env=env, home=tmp_path / "h3").assert_ok()
    assert set(outcomes(healed).values()) == {"restored-remote"}, "b's upload replaced the bad one"
    assert outcomes(result) == {
        "a#build": "restored-remote",
        "b#build": "success",
        "c#build": "restored-remote",
    }
    [refused] = [line for line in result.err.splitlines() if "was refused" in line]
    assert refused == (
        f"[vx] b#build: the remote entry {keys['b#build']} was refused (it holds the entry for"
        f" key {keys['a#build']}); running it"
    )
    assert (second / "packages/b/dist/out.txt").read_text() == "b\n"
