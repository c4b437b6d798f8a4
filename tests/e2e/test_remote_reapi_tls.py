"""`grpcs://` to a REAPI cache whose certificate a CA of its own signed: BuildGrid behind a TLS
front (ALPN h2) on 127.0.0.1, the CA made with the openssl CLI and named by SSL_CERT_FILE."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

import pytest
from tests.conftest import make_git_workspace, run_vx
from tests.e2e.netservers import TlsFront, make_certs
from tests.e2e.remoteservers import buildgrid_server
from tests.e2e.test_remote_turbo import clone, files, outcomes, outputs

if TYPE_CHECKING:
    from pathlib import Path

PLUGIN = "vx.plugins.reapi:plugin"
RUN = ["run", "build", "--all", "--output-logs=full"]


@pytest.fixture(autouse=True)
def grpc_installed() -> None:
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("grpcio is not installed here: pip install -e '.[reapi]'")


def reapi_notices(text: str) -> list[str]:
    return [line for line in text.splitlines() if "REAPI cache at" in line]


def test_grpcs_trusts_the_ca_ssl_cert_file_names(tmp_path: Path) -> None:
    certs = make_certs(tmp_path / "certs")
    origin = make_git_workspace(tmp_path / "origin", files(plugin=PLUGIN))
    with buildgrid_server(tmp_path / "bgd") as server:
        port = int(server.url.rpartition(":")[2])
        tls = TlsFront(("127.0.0.1", port), certs, alpn=["h2"])
        try:
            url = f"grpcs://127.0.0.1:{tls.port}"
            trusted = {"VX_REAPI_URL": url, "SSL_CERT_FILE": str(certs.ca)}
            first = clone(origin, tmp_path / "one")
            ran = run_vx(RUN, first, env=trusted, home=tmp_path / "h1").assert_ok()
            second = clone(origin, tmp_path / "two")
            hit = run_vx(RUN, second, env=trusted, home=tmp_path / "h2").assert_ok()
            third = clone(origin, tmp_path / "three")
            untrusted = run_vx(RUN, third, env={"VX_REAPI_URL": url},
                               home=tmp_path / "h3").assert_ok()  # fmt: skip
        finally:
            tls.close()
    assert set(outcomes(ran).values()) == {"success"}
    assert reapi_notices(ran.err) == reapi_notices(hit.err) == []
    assert outcomes(hit) == dict.fromkeys(("a#build", "b#build", "c#build"), "restored-remote")
    assert outputs(second) == outputs(first)
    assert set(outcomes(untrusted).values()) == {"success"}, "the system's CAs do not know it"
    [notice] = reapi_notices(untrusted.err)
    assert "UNAVAILABLE" in notice


def test_an_unreadable_ssl_cert_file_is_refused_in_one_line(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", files(plugin=PLUGIN))
    missing = tmp_path / "nowhere.pem"
    env = {"VX_REAPI_URL": "grpcs://127.0.0.1:9", "SSL_CERT_FILE": str(missing)}
    result = run_vx(["run", "a#build"], ws, env=env, home=tmp_path / "h")
    assert result.code == 1
    assert result.err == (
        f"plugin 'vx-reapi': SSL_CERT_FILE is {missing}, which cannot be read (No such file"
        " or directory) — point it at a PEM file of CA certificates\n"
    )
