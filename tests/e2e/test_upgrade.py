"""`vx upgrade` against a release host on 127.0.0.1: the swap, its checks and its refusals.

The vx upgraded is a built vx.pyz in a temp bin dir (the zipapp kind, whose asset is
`vx.pyz`); the "new release" is a small shell script answering `--version` as vx would.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys

import pytest
from tests.conftest import REPO, base_env
from tests.e2e.releaseserver import (
    ReleaseServer,
    Route,
    gone_by_deadline,
    hanging_vx,
    interrupt_when_marked,
)

NEW = b'#!/bin/sh\necho "vx 0.2.0"\n'
NO_START = b"#!/bin/sh\necho 'cannot execute: wrong ELF class' >&2\nexit 126\n"
WRONG_VERSION = b'#!/bin/sh\necho "vx 9.9.9"\n'
HANGS = b"#!/bin/sh\nsleep 600 &\nsleep 600\n"  # and a child that would hold the pipes


@pytest.fixture
def installed(built_pyz, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    target = bin_dir / "vx.pyz"
    shutil.copy2(built_pyz, target)
    target.chmod(0o751)
    return target


@pytest.fixture
def server():
    with ReleaseServer() as s:
        yield s


def upgrade(target, server_url, *args):
    return subprocess.run(
        [str(target), "upgrade", *args],
        cwd=target.parent,
        env=base_env({"VX_UPGRADE_URL": server_url}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(target):
    return sorted(p.name for p in target.parent.iterdir() if p.name != target.name)


def test_a_good_release_replaces_vx_keeping_its_mode(installed, server):
    server.release("0.2.0", {"vx.pyz": NEW})
    proc = upgrade(installed, server.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"vx 0.1.0 → 0.2.0: installed at {installed}\n"
    assert installed.read_bytes() == NEW
    assert installed.stat().st_mode & 0o7777 == 0o751
    assert leftovers(installed) == []
    assert server.asked == ["/latest/download/release.json", "/latest/download/vx.pyz"]


def test_a_tag_pins_that_release(installed, server):
    server.release("0.2.0", {"vx.pyz": NEW}, latest=False)
    proc = upgrade(installed, server.url, "v0.2.0")
    assert proc.returncode == 0, proc.stderr
    assert server.asked[0] == "/download/v0.2.0/release.json"
    assert installed.read_bytes() == NEW


def test_the_same_version_downloads_nothing(installed, server):
    server.release("0.1.0", {"vx.pyz": NEW})
    before = digest(installed)
    proc = upgrade(installed, server.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("already at 0.1.0")
    assert digest(installed) == before
    assert server.asked == ["/latest/download/release.json"]


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("bad digest", "did not match the release's SHA-256"),
        ("truncated", "the connection ended early"),
        ("no digest", "publishes no SHA-256 for vx.pyz"),
        ("no asset", "has no vx.pyz for this platform"),
        ("not json", "not a release document"),
        ("deeply nested", "not a release document"),
    ],
)
def test_a_bad_download_replaces_nothing(installed, server, setup, words):
    if setup == "bad digest":
        server.release("0.2.0", {"vx.pyz": NEW}, digests={"vx.pyz": "0" * 64})
    elif setup == "no digest":
        server.release("0.2.0", {"vx.pyz": NEW}, digests={"vx.pyz": ""})
    elif setup == "no asset":
        server.release("0.2.0", {"vx-plan9-mips": NEW})
    elif setup == "not json":
        server.routes["/latest/download/release.json"] = Route(b"<html>sign in to the wifi</html>")
    elif setup == "deeply nested":
        server.routes["/latest/download/release.json"] = Route(b"[" * 200_000 + b"]" * 200_000)
    else:
        server.release("0.2.0", {"vx.pyz": NEW})
        server.routes["/latest/download/vx.pyz"].cut = 10
    before = digest(installed)
    proc = upgrade(installed, server.url)
    assert proc.returncode == 1
    assert words in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2, proc.stderr  # the download notice + one
    assert "Traceback" not in proc.stderr
    assert digest(installed) == before
    assert leftovers(installed) == []
    if setup in ("no digest", "no asset", "not json", "deeply nested"):
        assert "/latest/download/vx.pyz" not in server.asked


@pytest.mark.parametrize(
    ("asset", "words"),
    [
        (NO_START, "--version exited 126: cannot execute: wrong ELF class"),
        (WRONG_VERSION, '--version answered "vx 9.9.9", not "vx 0.2.0"'),
        (HANGS, "no answer to --version within 10 s"),
    ],
)
def test_a_binary_that_does_not_start_is_swapped_back(installed, server, asset, words):
    server.release("0.2.0", {"vx.pyz": asset})
    before = digest(installed)
    proc = upgrade(installed, server.url)
    assert proc.returncode == 1
    assert words in proc.stderr
    assert "the previous vx is back in place" in proc.stderr
    assert digest(installed) == before
    assert installed.stat().st_mode & 0o7777 == 0o751
    assert leftovers(installed) == []


@pytest.mark.parametrize(
    ("status", "headers", "words"),
    [
        (404, {}, "has nothing at http"),
        (429, {"Retry-After": "60"}, "is rate-limiting this address (429); try again in 60 s"),
        (
            403,
            {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1767225600"},
            "try again after 00:00:00 UTC",
        ),
        (500, {}, "refused the release (500"),
    ],
)
def test_an_http_refusal_is_one_line(installed, server, status, headers, words):
    server.routes["/download/v0.2.0/release.json"] = Route(b"no", status, headers)
    proc = upgrade(installed, server.url, "v0.2.0")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert words in proc.stderr


def test_an_unreachable_host_is_one_line(installed):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = upgrade(installed, f"http://127.0.0.1:{port}")
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"could not reach 127.0.0.1:{port} to read the release (")
    assert "check the network or the proxy" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_an_unwritable_directory_is_refused_before_the_download(installed, server):
    server.release("0.2.0", {"vx.pyz": NEW})
    if subprocess.run(["chattr", "+i", str(installed.parent)], check=False).returncode != 0:
        pytest.skip("chattr +i is refused here: cannot make a directory unwritable for root")
    try:
        proc = upgrade(installed, server.url)
    finally:
        subprocess.run(["chattr", "-i", str(installed.parent)], check=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"cannot write to {installed.parent} (EACCES)")
    assert "sudo vx upgrade" in proc.stderr
    assert server.asked == []


def test_a_bad_tag_and_a_second_tag_are_refused(installed, server):
    assert "is not a release tag" in upgrade(installed, server.url, "latest!").stderr
    two = upgrade(installed, server.url, "v1.0.0", "v2.0.0")
    assert two.returncode == 1
    assert "takes one tag, got 2" in two.stderr
    assert server.asked == []


def test_a_source_checkout_is_refused_naming_git_pull(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(REPO / "vx.py"), "upgrade"],
        cwd=tmp_path,
        env=base_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.endswith("update this one with: git pull\n")


def test_the_release_document_the_tests_serve_follows_its_schema(server):
    import json

    from jsonschema import Draft202012Validator

    schema = json.loads((REPO / "schemas" / "release.json").read_text())
    server.release("0.2.0", {"vx.pyz": NEW, "vx-linux-x64": NEW})
    doc = json.loads(server.routes["/latest/download/release.json"].body)
    Draft202012Validator(schema).validate(doc)


def test_the_document_build_release_doc_writes_is_one_vx_upgrade_reads(installed, server, tmp_path):
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("release_doc", REPO / "build" / "release_doc.py")
    release_doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(release_doc)
    asset = tmp_path / "vx.pyz"
    asset.write_bytes(NEW)
    doc = release_doc.document("0.2.0", [asset])
    assert (tmp_path / "vx.pyz.sha256").read_text() == f"{digest(asset)}  vx.pyz\n"
    server.routes["/latest/download/release.json"] = Route(json.dumps(doc).encode())
    server.routes["/latest/download/vx.pyz"] = Route(NEW)
    proc = upgrade(installed, server.url)
    assert proc.returncode == 0, proc.stderr
    assert installed.read_bytes() == NEW


def test_through_a_symlink_the_file_it_points_at_is_replaced(installed, server, tmp_path):
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    link = link_dir / "vx"
    link.symlink_to(installed)
    server.release("0.2.0", {"vx.pyz": NEW})
    proc = upgrade(link, server.url)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink()
    assert installed.read_bytes() == NEW


def test_ctrl_c_during_the_probe_swaps_back_and_kills_the_probe(installed, server, tmp_path):
    marker = tmp_path / "probed"
    before = digest(installed)
    server.release("0.2.0", {"vx.pyz": hanging_vx(marker)})
    code, err, pid = interrupt_when_marked(
        [str(installed), "upgrade"], base_env({"VX_UPGRADE_URL": server.url}), marker
    )
    assert code != 0
    assert "Traceback" not in err
    assert digest(installed) == before
    assert leftovers(installed) == []
    assert gone_by_deadline(pid)


def test_a_new_vx_leaving_a_daemon_on_its_stdout_is_not_waited_for(installed, server, tmp_path):
    """The probe's output goes to a file: a process the new vx leaves behind in a session of
    its own, holding what was its stdout, does not keep the upgrade waiting."""
    marker = tmp_path / "daemon"
    daemonizes = (
        "#!/bin/sh\n"
        f'setsid sh -c \'echo $$ >"{marker}.tmp" && mv "{marker}.tmp" "{marker}" && exec sleep 600\' &\n'
        f'while [ ! -e "{marker}" ]; do sleep 0.01; done\n'  # the daemon has left our session
        'echo "vx 0.2.0"\n'
    ).encode()
    server.release("0.2.0", {"vx.pyz": daemonizes})
    try:
        proc = upgrade(installed, server.url)
    finally:
        if marker.exists():
            os.kill(int(marker.read_text()), signal.SIGKILL)
    assert proc.returncode == 0, proc.stderr
    assert installed.read_bytes() == daemonizes
    assert marker.exists(), "the new vx was never probed"
