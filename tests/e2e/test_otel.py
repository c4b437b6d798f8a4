"""Traces end to end: a run's spans reach a real OTLP/HTTP receiver with their parentage and
verdicts, a task sees `TRACEPARENT` naming its span, keys do not move, and a collector that is
down or hung leaves the run green and its exit bounded."""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING

import pytest
from tests.conftest import base_env, make_git_workspace, run_vx, vx_argv
from tests.e2e.otlpreceiver import closed_port, receiver, silent_port

if TYPE_CHECKING:
    from pathlib import Path

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed"
)

SECRET = "s3cr3t-Value-9f2b"  # noqa: S105  a value no span may carry
# A receiver that is up gets time to answer however loaded the machine is: the 2 s bound is
# the down and hung collectors' business.
PATIENT = {"OTEL_EXPORTER_OTLP_TIMEOUT": "60"}


def make(tmp_path: Path) -> Path:
    files: dict[str, object] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\nseen.txt\n",
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {
            "tasks": {
                "build": {
                    "exec": "mkdir -p dist && cp src/x dist/x",
                    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
                },
                "check": {
                    "exec": {
                        "command": 'echo "$TRACEPARENT" > seen.txt; echo "token $API_TOKEN"; exit 3',
                        "env": {"secret": ["API_TOKEN"]},
                    },
                    "dependsOn": ["build"],
                },
            }
        },
        "packages/a/src/x": "x\n",
    }
    ws = tmp_path / "ws"
    ws.mkdir()
    return make_git_workspace(ws, files)


def test_a_run_is_traced_with_parentage_verdicts_and_a_task_traceparent(tmp_path: Path) -> None:
    ws = make(tmp_path)
    home = tmp_path / "home"
    run_vx(["run", "build", "--all"], ws, home=home).assert_ok()
    with receiver() as got:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": got.endpoint, "API_TOKEN": SECRET, **PATIENT}
        result = run_vx(["run", "check", "--all"], ws, env=env, home=home).assert_code(1)
    assert "dropped" not in result.err, result
    assert got.requests == 1
    (run,) = got.by_name("vx run")
    assert run.parent_id == ""
    assert run.status == 2
    assert run.attributes["vx.run.exit_code"] == 1
    (build,) = got.by_name("a#build")
    (check,) = got.by_name("a#check")
    assert {build.parent_id, check.parent_id} == {run.span_id}
    assert {s.trace_id for s in got.spans} == {run.trace_id}
    # the cached task was restored: its key did not move with the trace context
    assert build.attributes["vx.cache.outcome"] == "up-to-date"
    assert build.status == 0
    children = {(s.name, s.parent_id) for s in got.spans}
    assert ("restore", build.span_id) in children
    assert ("execute", check.span_id) in children
    assert check.status == 2
    assert check.attributes["process.exit.code"] == 3
    assert check.attributes["vx.task.status"] == "failed"
    seen = (ws / "packages/a/seen.txt").read_text().strip()
    assert seen.startswith(f"00-{run.trace_id}-{check.span_id}-")  # then the flags: sampled
    assert all(SECRET not in str(v) for s in got.spans for v in s.attributes.values())


def test_a_callers_traceparent_is_the_runs_parent(tmp_path: Path) -> None:
    ws = make(tmp_path)
    outer_trace, outer_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    with receiver() as got:
        env = {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": got.endpoint + "/v1/traces",
            "TRACEPARENT": f"00-{outer_trace}-{outer_span}-01",
            **PATIENT,
        }
        run_vx(["run", "build", "--all"], ws, env=env, home=tmp_path / "home").assert_ok()
    (run,) = got.by_name("vx run")
    assert (run.trace_id, run.parent_id) == (outer_trace, outer_span)
    names = {s.name for s in got.spans}
    assert {"a#build", "queue", "execute", "save"} <= names


@pytest.mark.parametrize("collector", ["refused", "hung"])
def test_a_collector_down_leaves_the_run_green_and_its_exit_bounded(
    tmp_path: Path, collector: str
) -> None:
    ws = make(tmp_path)
    with silent_port() as hung:
        endpoint = closed_port() if collector == "refused" else hung
        env = base_env({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "HOME": str(tmp_path / "home")})
        started = time.monotonic()
        # a generous deadline, only to catch a hang: the bound itself is 2 s
        proc = subprocess.run(
            [*vx_argv(), "run", "build", "--all"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        waited = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert waited < 60
    dropped = [line for line in proc.stderr.splitlines() if "dropped" in line]
    assert len(dropped) == 1, proc.stderr
    assert dropped[0].startswith(f"vx: dropped 5 trace spans for {endpoint}/v1/traces: ")
    assert "Traceback" not in proc.stderr


def test_a_plain_run_loads_no_tracing(tmp_path: Path) -> None:
    """Without an endpoint nothing of OpenTelemetry is imported, cold or warm."""
    ws = make(tmp_path)
    env = base_env({"HOME": str(tmp_path / "home")})
    for _ in ("cold", "warm"):
        proc = subprocess.run(
            [*vx_argv(), "run", "build", "--all"],
            cwd=ws,
            env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert "vx.run" in proc.stderr, "the import report was not read"
        assert "opentelemetry" not in proc.stderr
        assert "vx.otel.tracer" not in proc.stderr


def test_a_warm_replay_is_traced_too(tmp_path: Path) -> None:
    ws = make(tmp_path)
    home = tmp_path / "home"
    with receiver() as got:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": got.endpoint, "VX_TIMING": "1", **PATIENT}
        # executed, then up to date (the warm path's snapshot is kept), then replayed
        runs = [run_vx(["run", "build", "--all"], ws, env=env, home=home) for _ in range(3)]
    assert ["warm replay" in r.assert_ok().err for r in runs] == [False, False, True], runs
    traced = got.by_name("vx run")
    assert len({r.trace_id for r in traced}) == 3
    replayed = [s for s in got.by_name("a#build") if s.trace_id == traced[2].trace_id]
    assert [s.attributes["vx.cache.outcome"] for s in replayed] == ["up-to-date"]
    assert replayed[0].parent_id == traced[2].span_id


def test_without_the_extra_an_endpoint_is_ignored_and_the_plugin_refused(tmp_path: Path) -> None:
    ws = make(tmp_path)
    shadow = tmp_path / "shadow" / "opentelemetry"  # an `opentelemetry` with no SDK in it
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    home = tmp_path / "home"
    env = {"PYTHONPATH": str(shadow.parent), "OTEL_EXPORTER_OTLP_ENDPOINT": closed_port()}
    quiet = run_vx(["run", "build", "--all"], ws, env=env, home=home).assert_ok()
    assert "trace" not in quiet.err
    (ws / "vx.workspace.json").write_text('{"plugins": ["vx.plugins.otel:plugin"]}')
    refused = run_vx(["run", "build", "--all", "--force"], ws, env=env, home=home)
    assert refused.code == 1, refused
    assert refused.err == (
        "plugin 'vx-otel' needs opentelemetry-sdk and its OTLP/HTTP exporter, which are not"
        " installed — pip install 'vx-runner[otel]'\n"
    )
