"""`vx run --executor reapi` against a real BuildGrid served by two `vx worker` processes:
outputs as a local run makes them, a second clone all remote hits, tasks sealed off from
what they did not declare, a killed worker's action finished by the other, and Ctrl-C
leaving nothing running on the server."""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import subprocess
import time
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import base_env, make_git_workspace, run_vx, vx_argv
from tests.e2e.remoteservers import buildgrid_exec_server
from tests.e2e.test_remote_turbo import clone, outcomes

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PACKAGES = 12
RUN = ["run", "build", "--all", "--output-logs=full", "--executor", "reapi"]


@pytest.fixture(autouse=True)
def grpc_installed() -> None:
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("grpcio is not installed here: pip install -e '.[reapi]'")


def workspace(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A binary tree of packages: each build reads its sources, its dependency's output and a
    tool from node_modules reached through a symlink, as pnpm lays them out."""
    files: dict[str, Any] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\nnode_modules/\n",
        "vx.workspace.json": {"plugins": ["vx.plugins.reapi:plugin"]},
        "secret.txt": "not an input of anything\n",
    }
    for i in range(PACKAGES):
        name = f"p{i:02d}"
        dep = f"p{(i - 1) // 2:02d}" if i else None
        reads = f" ../{dep}/dist/out.txt" if dep else ""
        command = (
            f"mkdir -p dist && cat src/*{reads} > dist/out.txt"
            " && ../../node_modules/.bin/tool >> dist/out.txt && echo built " + name
        )
        files[f"packages/{name}/package.json"] = {
            "name": name,
            "dependencies": {dep: "*"} if dep else {},
        }
        files[f"packages/{name}/vx.config.json"] = {
            "tasks": {
                "build": {
                    "dependsOn": ["^build", *(["stamp"] if i == 0 else [])],
                    "exec": {"command": command},
                    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
                },
                # Uncached: it runs on this machine, never on a worker.
                "stamp": {"exec": {"command": "echo here > stamp.txt"}},
            }
        }
        files[f"packages/{name}/src/{name}.txt"] = f"{name}\n"
    files.update(extra or {})
    return files


def toolchain(ws: Path) -> Path:
    """node_modules as an install leaves it (untracked): an executable behind a symlink."""
    tool = ws / "node_modules" / ".store" / "tool" / "tool.sh"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho tool-ran\n")
    tool.chmod(0o755)
    (ws / "node_modules" / ".bin").mkdir()
    (ws / "node_modules" / ".bin" / "tool").symlink_to("../.store/tool/tool.sh")
    return ws


def built(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.glob("packages/*/dist/*"))}


class Workers:
    """`vx worker` processes serving one server, each logging to a file of its own."""

    def __init__(self, url: str, where: Path, count: int) -> None:
        self.logs = [where / f"worker{i}.log" for i in range(count)]
        env = base_env({"VX_REAPI_URL": url})
        self.procs = [
            subprocess.Popen(
                [*vx_argv(), "worker", "--dir", str(where / f"scratch{i}")],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log.open("w"),
            )
            for i, log in enumerate(self.logs)
        ]

    def ran(self) -> list[int]:
        """How many actions each worker has finished."""
        return [log.read_text().count(" exited ") for log in self.logs]

    def running(self, deadline_s: float = 120) -> int:
        """The index of a worker with an action under way, waiting for one to start."""
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            for i, log in enumerate(self.logs):
                text = log.read_text()
                if text.count("running lease") > text.count(" exited "):
                    return i
            time.sleep(0.1)
        pytest.fail("no worker started an action: " + " | ".join(p.read_text() for p in self.logs))

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def grid(tmp_path: Path, workers: int = 2) -> Iterator[tuple[str, Workers]]:
    with buildgrid_exec_server(tmp_path / "bgd") as server:
        pool = Workers(server.url, tmp_path, workers)
        try:
            yield server.url, pool
        finally:
            pool.stop()


def test_remote_outputs_match_a_local_run_and_a_second_clone_hits(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", workspace())
    local = toolchain(clone(origin, tmp_path / "local"))
    run_vx(["run", "build", "--all"], local, home=tmp_path / "h0").assert_ok()
    with grid(tmp_path) as (url, pool):
        env = {"VX_REAPI_URL": url}
        first = toolchain(clone(origin, tmp_path / "one"))
        ran = run_vx(RUN, first, env=env, home=tmp_path / "h1", timeout=600).assert_ok()
        executed = sum(pool.ran())
        second = toolchain(clone(origin, tmp_path / "two"))
        hit = run_vx(RUN, second, env=env, home=tmp_path / "h2", timeout=600).assert_ok()
        assert sum(pool.ran()) == executed  # the hits ran nothing anywhere
    assert set(outcomes(ran).values()) == {"success"}, ran.out
    assert executed == PACKAGES  # the builds; the uncached stamp ran here
    assert (first / "packages/p00/stamp.txt").read_text() == "here\n"
    assert built(first) == built(local)
    assert len(built(first)) == PACKAGES
    assert b"tool-ran" in built(first)["packages/p11/dist/out.txt"]
    assert "built p11" in ran.out  # the task's own output, as a local run prints it
    builds = {t: o for t, o in outcomes(hit).items() if t.endswith("#build")}
    assert set(builds.values()) == {"restored-remote"}, hit.out
    assert len(builds) == PACKAGES
    assert built(second) == built(local)


def test_a_task_reading_an_undeclared_file_fails_remotely_with_its_own_error(
    tmp_path: Path,
) -> None:
    leaky = {
        "packages/p01/vx.config.json": {
            "tasks": {
                "build": {
                    "exec": {"command": "cat ../../secret.txt && mkdir -p dist"},
                    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
                }
            }
        }
    }
    origin = make_git_workspace(tmp_path / "origin", workspace(leaky))
    with grid(tmp_path) as (url, _):
        ws = toolchain(clone(origin, tmp_path / "one"))
        result = run_vx(["run", "p01#build", "--output-logs=full", "--executor", "reapi"], ws,
                        env={"VX_REAPI_URL": url}, home=tmp_path / "h", timeout=600)  # fmt: skip
    assert result.code == 1
    assert "secret.txt: No such file or directory" in result.out + result.err
    assert "not an input of anything" not in result.out + result.err


def _slow(seconds: int) -> dict[str, Any]:
    return {
        "packages/p00/vx.config.json": {
            "tasks": {
                "build": {
                    "exec": {
                        "command": f"sleep {seconds} && mkdir -p dist && echo ok > dist/out.txt"
                    },
                    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
                }
            }
        }
    }


def _start(ws: Path, url: str, home: Path) -> subprocess.Popen[str]:
    env = base_env({"VX_REAPI_URL": url, "HOME": str(home)})
    return subprocess.Popen(
        [*vx_argv(), "run", "p00#build", "--executor", "reapi"], cwd=ws, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_killing_the_worker_mid_action_still_ends_green(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", workspace(_slow(4)))
    with grid(tmp_path) as (url, pool):
        ws = toolchain(clone(origin, tmp_path / "one"))
        run = _start(ws, url, tmp_path / "h")
        victim = pool.running()
        pool.procs[victim].send_signal(signal.SIGKILL)
        out, err = run.communicate(timeout=600)
        survivor = 1 - victim
        assert pool.ran()[survivor] == 1
    assert run.returncode == 0, out + err
    assert (ws / "packages/p00/dist/out.txt").read_text() == "ok\n"


def test_ctrl_c_cancels_the_operation_on_the_server(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", workspace(_slow(600)))
    with grid(tmp_path, workers=1) as (url, pool):
        ws = toolchain(clone(origin, tmp_path / "one"))
        run = _start(ws, url, tmp_path / "h")
        pool.running()
        run.send_signal(signal.SIGINT)
        run.communicate(timeout=120)
        deadline = time.monotonic() + 120
        while pool.ran() != [1] and time.monotonic() < deadline:
            time.sleep(0.1)
        log = pool.logs[0].read_text()
    assert run.returncode != 0
    assert pool.ran() == [1], log  # the worker's action ended: the server cancelled its lease
    assert " exited 0" not in log
    assert not (ws / "packages/p00/dist").exists()


def test_without_a_server_the_run_is_refused_in_one_line(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", workspace())
    result = run_vx(["run", "p00#build", "--executor", "reapi"], ws, home=tmp_path / "h")
    assert result.code == 1
    assert result.err.strip().splitlines() == [
        "vx run: --executor reapi needs a server: set VX_REAPI_URL=grpc://host:port"
    ]
