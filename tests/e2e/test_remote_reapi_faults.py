"""The REAPI remote cache against a real BuildGrid server that fails: killed mid-run, and
answering through a real gRPC proxy that returns error statuses, cut-short blobs and
tampered ones. Every run stays green with the right outputs."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

import pytest
from tests.conftest import make_git_workspace, run_vx
from tests.e2e.remoteservers import buildgrid_server
from tests.e2e.test_remote_turbo import clone, files, outcomes, outputs

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import VxResult

PLUGIN = "vx.plugins.reapi:plugin"
RUN = ["run", "build", "--all", "--output-logs=full"]
TOLD_ONCE = "— the run goes on with the local cache (further remote errors are not shown)"


@pytest.fixture(autouse=True)
def grpc_installed() -> None:
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("grpcio is not installed here: pip install -e '.[reapi]'")


def notices(result: VxResult) -> list[str]:
    return [line for line in result.err.splitlines() if "REAPI cache at" in line]


def refused(result: VxResult) -> list[str]:
    return [line for line in result.err.splitlines() if "was refused" in line]


def same_outputs(first: Path, second: Path) -> None:
    """Every output but the random `blob.bin` is byte- and mode-identical across clones."""
    theirs, ours = outputs(first), outputs(second)
    assert sorted(ours) == sorted(theirs)
    for name, (mode_bits, data) in ours.items():
        if not name.endswith("blob.bin"):
            assert theirs[name] == (mode_bits, data), name


def test_a_server_killed_mid_run_leaves_the_run_green_with_one_notice(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files(plugin=PLUGIN))
    with buildgrid_server(tmp_path / "bgd") as server:
        first = clone(origin, tmp_path / "one")
        env = {"VX_REAPI_URL": server.url}
        run_vx(["run", "a#build"], first, env=env, home=tmp_path / "h1").assert_ok()
        second = clone(origin, tmp_path / "two")
        killing = {**env, "KILL_SERVER_PID": str(server.proc.pid)}
        result = run_vx(["run", "b#boom", "c#build", "--output-logs=full", "--concurrency=1"],
                        second, env=killing, home=tmp_path / "h2").assert_ok()  # fmt: skip
        assert server.proc.wait(timeout=30) != 0
    assert outcomes(result) == {
        "a#build": "restored-remote",
        "b#build": "success",
        "b#boom": "success",
        "c#build": "success",
    }
    [notice] = notices(result)
    assert notice.endswith(TOLD_ONCE)
    assert (second / "packages/a/dist/out.txt").read_text() == "a\n"
    assert (second / "packages/c/dist/out.txt").read_text() == "c\n"


@pytest.mark.parametrize("mode", ["internal", "unavailable"])
def test_a_server_answering_errors_is_a_miss_told_once(tmp_path: Path, mode: str) -> None:
    from tests.e2e.grpcfaults import GrpcFaultProxy

    origin = make_git_workspace(tmp_path / "origin", files(plugin=PLUGIN))
    with buildgrid_server(tmp_path / "bgd") as server:
        first = clone(origin, tmp_path / "one")
        run_vx(RUN, first, env={"VX_REAPI_URL": server.url}, home=tmp_path / "h1").assert_ok()
        proxy = GrpcFaultProxy(server.url, mode)
        try:
            second = clone(origin, tmp_path / "two")
            result = run_vx(RUN, second, env={"VX_REAPI_URL": proxy.url},
                            home=tmp_path / "h2").assert_ok()  # fmt: skip
        finally:
            proxy.close()
    assert proxy.broken > 0
    assert set(outcomes(result).values()) == {"success"}
    same_outputs(first, second)
    [notice] = notices(result)
    assert f"{mode.upper()}: injected fault\\x1b[2J" in notice
    assert "\x1b" not in result.err
    assert notice.endswith(TOLD_ONCE)
    assert refused(result) == []


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("truncate", "the CAS blob does not match its digest"),
        ("tamper", "the CAS blob does not match its digest"),
        ("forge", "its SHA-256 does not match its content"),
    ],
)
def test_a_broken_artifact_is_refused_run_here_and_replaced(
    tmp_path: Path, mode: str, why: str
) -> None:
    from tests.e2e.grpcfaults import GrpcFaultProxy

    origin = make_git_workspace(tmp_path / "origin", files(plugin=PLUGIN))
    with buildgrid_server(tmp_path / "bgd") as server:
        first = clone(origin, tmp_path / "one")
        run_vx(RUN, first, env={"VX_REAPI_URL": server.url}, home=tmp_path / "h1").assert_ok()
        proxy = GrpcFaultProxy(server.url, mode)
        try:
            second = clone(origin, tmp_path / "two")
            result = run_vx(RUN, second, env={"VX_REAPI_URL": proxy.url},
                            home=tmp_path / "h2").assert_ok()  # fmt: skip
        finally:
            proxy.close()
        third = clone(origin, tmp_path / "three")
        healed = run_vx(RUN, third, env={"VX_REAPI_URL": server.url},
                        home=tmp_path / "h3").assert_ok()  # fmt: skip
    assert proxy.broken == 3
    assert set(outcomes(result).values()) == {"success"}, "nothing broken was restored"
    same_outputs(first, second)
    lines = refused(result)
    assert len(lines) == 3
    assert all(f"({why}); running it" in line for line in lines), lines
    assert notices(result) == []
    assert set(outcomes(healed).values()) == {"restored-remote"}
    assert outputs(third) == outputs(second), "the refused entries were replaced by the re-run"
