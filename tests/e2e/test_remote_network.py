"""The Turborepo remote cache client on the networks users have, against the real
`turborepo-remote-cache`: through a logging proxy (a CONNECT tunnel to TLS with its own CA,
absolute-form for http, NO_PROXY), behind a front that redirects downloads to another
origin, and a token that would inject a header."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from tests.conftest import make_git_workspace, run_vx
from tests.e2e.netservers import Proxy, RedirectFront, TlsFront, make_certs
from tests.e2e.remoteservers import TEAM, TOKEN, turbo_server
from tests.e2e.test_remote_turbo import assert_no_token, clone, env_for, files, outcomes, outputs

if TYPE_CHECKING:
    from pathlib import Path

RUN = ["run", "build", "--all", "--output-logs=full"]
HITS = dict.fromkeys(("a#build", "b#build", "c#build"), "restored-remote")


def port_of(url: str) -> int:
    return int(url.rstrip("/").rpartition(":")[2])


def test_https_goes_through_the_proxy_in_a_connect_tunnel(tmp_path: Path) -> None:
    """TLS runs end to end inside the tunnel: the proxy sees where, never what (no token),
    and the server's certificate is checked against SSL_CERT_FILE's CA."""
    certs = make_certs(tmp_path / "certs")
    origin = make_git_workspace(tmp_path / "origin", files())
    proxy = Proxy()
    with turbo_server(tmp_path / "storage") as server:
        tls = TlsFront(("127.0.0.1", port_of(server.url)), certs)
        try:
            api = f"https://127.0.0.1:{tls.port}"
            env = env_for(api, SSL_CERT_FILE=str(certs.ca),
                          HTTPS_PROXY=proxy.url.replace("http://", "http://me:pw@"))  # fmt: skip
            first = clone(origin, tmp_path / "one")
            ran = run_vx(RUN, first, env=env, home=tmp_path / "h1").assert_ok()
            second = clone(origin, tmp_path / "two")
            hit = run_vx(RUN, second, env=env, home=tmp_path / "h2").assert_ok()
        finally:
            tls.close()
            proxy.close()
    assert set(outcomes(ran).values()) == {"success"}
    assert outcomes(hit) == HITS
    assert outputs(second) == outputs(first)
    assert proxy.log
    assert set(proxy.log) == {f"CONNECT 127.0.0.1:{tls.port}"}
    assert set(proxy.auth) == {"Basic bWU6cHc="}
    assert [line for line in ran.err.splitlines() + hit.err.splitlines() if "[vx]" in line] == []
    assert_no_token(tmp_path, ran, hit)


def test_http_goes_through_the_proxy_in_absolute_form_unless_no_proxy(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files())
    proxy = Proxy()
    try:
        with turbo_server(tmp_path / "storage") as server:
            first = clone(origin, tmp_path / "one")
            proxied = env_for(server.url, http_proxy=proxy.url)
            ran = run_vx(RUN, first, env=proxied, home=tmp_path / "h1").assert_ok()
            seen = list(proxy.log)
            second = clone(origin, tmp_path / "two")
            bypass = {**proxied, "NO_PROXY": "localhost,127.0.0.1"}
            hit = run_vx(RUN, second, env=bypass, home=tmp_path / "h2").assert_ok()
    finally:
        proxy.close()
    assert set(outcomes(ran).values()) == {"success"}
    assert outcomes(hit) == HITS
    base = f"{server.url.rstrip('/')}/v8/artifacts/"
    assert seen
    assert all(line.split(" ", 1)[1].startswith(base) for line in seen), seen
    assert {line.split(" ", 1)[0] for line in seen} == {"GET", "HEAD", "PUT"}
    assert proxy.log == seen, "NO_PROXY left the proxy out"


def test_downloads_follow_redirects_and_the_token_stays_home(tmp_path: Path) -> None:
    """A GET is redirected on the API's own origin (the token goes along), then to another
    origin (a CDN or bucket, as with TURBO_CACHE_READ_URL): the token is not sent there."""
    origin = make_git_workspace(tmp_path / "origin", files())
    with turbo_server(tmp_path / "storage") as server:
        first = clone(origin, tmp_path / "one")
        run_vx(RUN, first, env=env_for(server.url), home=tmp_path / "h1").assert_ok()
        front = RedirectFront(server.url, tmp_path / "storage")
        try:
            second = clone(origin, tmp_path / "two")
            hit = run_vx(RUN, second, env=env_for(front.url), home=tmp_path / "h2").assert_ok()
        finally:
            front.close()
    assert outcomes(hit) == HITS
    assert outputs(second) == outputs(first)
    bearer = f"Bearer {TOKEN}"
    hops = sorted({(where.split(" ")[0], "hop=1" in where, auth) for where, auth in front.seen})
    assert hops == [("api", False, bearer), ("api", True, bearer), ("cdn", False, None)]
    assert len([w for w, _ in front.seen if w.startswith("cdn")]) == 3
    assert [line for line in hit.err.splitlines() if "[vx]" in line] == []


def test_a_token_holding_a_line_break_is_refused_in_one_line(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", files())
    env = {"TURBO_API": "http://127.0.0.1:9", "TURBO_TOKEN": f"{TOKEN}\r\nX-Evil: 1",
           "TURBO_TEAM": TEAM}  # fmt: skip
    result = run_vx(["run", "a#build"], ws, env=env, home=tmp_path / "h")
    assert result.code == 1
    assert result.err == (
        "plugin 'vx-turbo': TURBO_TOKEN holds a control character (a line break?)"
        " — set it to the value alone\n"
    )
    assert TOKEN not in result.out + result.err


@pytest.mark.parametrize(
    ("variable", "value", "told"),
    [
        ("TURBO_REMOTE_CACHE_TIMEOUT", "soon",
         "TURBO_REMOTE_CACHE_TIMEOUT is 'soon' — set it to a number of seconds (0: no bound)"),
        ("VX_REMOTE_CACHE_MAX_SIZE", "lots",
         "VX_REMOTE_CACHE_MAX_SIZE is 'lots' — set it to a size such as 2G or 500M"),
        ("HTTP_PROXY", "socks5://127.0.0.1:1080",
         "HTTP_PROXY is a socks5:// proxy — vx reaches caches through http:// proxies only"),
    ],
)  # fmt: skip
def test_a_setting_vx_cannot_use_is_refused_in_one_line(
    tmp_path: Path, variable: str, value: str, told: str
) -> None:
    ws = make_git_workspace(tmp_path / "ws", files())
    env = env_for("http://127.0.0.1:9", **{variable: value})
    result = run_vx(["run", "a#build"], ws, env=env, home=tmp_path / "h")
    assert (result.code, result.err) == (1, f"plugin 'vx-turbo': {told}\n")
