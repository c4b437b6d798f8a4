"""Where the cache lives: precedence, the shared store's name, and the checks before a run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from vx.cache.location import (
    CacheLocation,
    Source,
    default_store,
    ensure_writable,
    mount_type,
    resolve_location,
    store_id,
)
from vx.errors import ConfigError, ErrorCode, UserError
from vx.workspace.model import WorkspaceConfig

SRC = Path(__file__).resolve().parents[3] / "src"
ROOT = Path("/work/repo")
CWD = Path("/work/repo/packages/web")
HOME = Path("/home/me")
ID = "3c2e1f0a9b8d7c6e"


def test_the_store_is_named_by_the_repository_identity() -> None:
    # The name is on every user's disk: changing how it is derived orphans every shared store.
    assert store_id("e83c5163316f89bfbde7d9ab23ca2e25604af290") == "da4dc0862dbce5d9"
    assert store_id("a") != store_id("b")
    assert default_store(ID, home=HOME) == HOME / ".vx" / store_id(ID) / "cache"


@pytest.mark.parametrize(
    ("flag", "config", "env", "want", "source"),
    [
        (None, None, {}, None, Source.DEFAULT),
        (None, None, {"VX_CACHE_DIR": ""}, None, Source.DEFAULT),
        (None, None, {"VX_CACHE_DIR": "c"}, "/work/repo/c", Source.ENV),
        (None, None, {"VX_CACHE_DIR": "/abs"}, "/abs", Source.ENV),
        (None, ".cache/vx", {"VX_CACHE_DIR": "c"}, "/work/repo/.cache/vx", Source.CONFIG),
        ("here", ".cache/vx", {"VX_CACHE_DIR": "c"}, "/work/repo/packages/web/here", Source.FLAG),
        ("../../x", None, {}, "/work/repo/x", Source.FLAG),
        ("/tmp/vx", "c", {}, "/tmp/vx", Source.FLAG),
    ],
)
def test_precedence(flag, config, env, want, source) -> None:
    ws = WorkspaceConfig(path="vx.workspace.json", cache_dir=config)
    got = resolve_location(
        root=ROOT, identity=lambda: ID, cwd=CWD, flag=flag, config=ws, env=env, home=HOME
    )
    if want is None:
        store = default_store(ID, home=HOME)
        assert got == CacheLocation(store, store, source)
        assert not got.named
    else:
        assert got == CacheLocation(Path(want), Path(want), source)
        assert got.named


@pytest.mark.parametrize(
    ("flag", "config", "env", "error", "message"),
    [
        (" ", None, {}, UserError, "--cache-dir: the path is blank; name a directory"),
        (
            None,
            "  ",
            {},
            ConfigError,
            "vx.workspace.json: cacheDir: expected a directory, got a blank string",
        ),
        (
            None,
            None,
            {"VX_CACHE_DIR": " \t"},
            UserError,
            "VX_CACHE_DIR is blank: unset it or name a directory",
        ),
    ],
)
def test_blank_paths_are_refused(flag, config, env, error, message) -> None:
    ws = WorkspaceConfig(path="vx.workspace.json", cache_dir=config)
    with pytest.raises(error) as caught:
        resolve_location(
            root=ROOT, identity=lambda: ID, cwd=CWD, flag=flag, config=ws, env=env, home=HOME
        )
    assert caught.value.message == message


def mounts(tmp_path: Path, *lines: str) -> Path:
    table = tmp_path / "mounts"
    table.write_text("".join(line + "\n" for line in lines))
    return table


def test_mount_type_takes_the_longest_mount_point(tmp_path: Path) -> None:
    table = mounts(
        tmp_path,
        "/dev/vda / ext4 rw 0 0",
        f"server:/x {tmp_path}/with\\040space nfs4 rw 0 0",
        f"tmpfs {tmp_path}/with tmpfs rw 0 0",
    )
    assert mount_type(tmp_path / "with space" / "not" / "yet", mounts=table) == "nfs4"
    assert mount_type(tmp_path / "with", mounts=table) == "tmpfs"
    assert mount_type(tmp_path / "without", mounts=table) == "ext4"
    assert mount_type(tmp_path, mounts=tmp_path / "no-such-table") is None


@pytest.mark.parametrize("fstype", ["nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "9p"])
def test_a_network_file_system_is_refused(tmp_path: Path, fstype: str) -> None:
    table = mounts(tmp_path, "/dev/vda / ext4 rw 0 0", f"srv:/c {tmp_path}/net {fstype} rw 0 0")
    with pytest.raises(UserError) as caught:
        ensure_writable(tmp_path / "net" / "cache", mounts=table)
    assert caught.value.code is ErrorCode.FS
    assert f"is on a network file system ({fstype})" in caught.value.message
    assert not (tmp_path / "net").exists()


def test_a_writable_directory_is_created_and_left_clean(tmp_path: Path) -> None:
    ensure_writable(tmp_path / "a" / "cache")
    assert list((tmp_path / "a" / "cache").iterdir()) == []


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("")
    with pytest.raises(UserError) as caught:
        ensure_writable(tmp_path / "a" / "cache")
    assert caught.value.message == (
        f"cache directory {tmp_path / 'a' / 'cache'} is not writable (ENOTDIR: not a directory)"
    )


def test_a_directory_this_user_cannot_write_is_refused() -> None:
    """Run as an unprivileged user: root may write anywhere, so root drops to nobody first."""
    base = Path(tempfile.mkdtemp(prefix="vx-test-"))  # every user can reach it, unlike tmp_path
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir(mode=0o555)
        code = """
            import os, sys
            from pathlib import Path
            from vx.cache.location import ensure_writable
            from vx.errors import UserError
            if os.getuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            try:
                ensure_writable(Path(sys.argv[1]))
            except UserError as err:
                print(err.code, err.message)
            """
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), str(locked / "cache")],
            cwd="/",
            env={**os.environ, "PYTHONPATH": str(SRC)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        shutil.rmtree(base)
    assert out == (
        f"VX_E_FS cache directory {locked / 'cache'} is not writable (EACCES: permission denied)\n"
    )


def test_a_clone_identity_is_computed_once_and_remembered(tmp_path: Path) -> None:
    from vx.cache.location import remembered_identity

    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return "root:abc"

    common = tmp_path / "repo" / ".git"
    common.mkdir(parents=True)
    home = tmp_path / "home"
    assert remembered_identity(common, home=home, compute=compute) == "root:abc"
    assert remembered_identity(common, home=home, compute=compute) == "root:abc"
    assert calls == [1]


def test_a_shallow_identity_is_not_remembered(tmp_path: Path) -> None:
    from vx.cache.location import remembered_identity

    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return "dir:/somewhere"

    home = tmp_path / "home"
    remembered_identity(tmp_path, home=home, compute=compute)
    remembered_identity(tmp_path, home=home, compute=compute)
    assert calls == [1, 1]
