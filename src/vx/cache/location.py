"""Where a workspace's cache lives, and the checks its directory passes before a run writes."""

from __future__ import annotations

import contextlib
import errno
import os
import re
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import xxhash

from vx.errors import ConfigError, ErrorCode, UserError
from vx.util.atomic import write_atomic
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.git import GitSnapshot
    from vx.workspace.model import WorkspaceConfig

CACHE_DIR_ENV = "VX_CACHE_DIR"

NETWORK_FILE_SYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "sshfs", "fuse.sshfs", "9p"},
)
"""SQLite's locks are not to be trusted on these, and a torn index is worse than no cache."""

_MOUNT_ESCAPE = re.compile(r"\\([0-7]{3})")


class Source(StrEnum):
    """What chose the cache directory, highest precedence first."""

    FLAG = "--cache-dir"
    CONFIG = "cacheDir"
    ENV = CACHE_DIR_ENV
    DEFAULT = "default"


class CacheLocation(Record):
    """`directory` holds the run history and `failures/`; `store` holds the entries and
    their artifacts.

    By default both are the store every checkout of the repository shares, outside the work
    tree (a cache inside it would be an untracked input to the root project); a named cache
    dir (flag, config or environment) is both and shares nothing.
    """

    directory: Path
    store: Path
    source: Source

    @property
    def named(self) -> bool:
        return self.source is not Source.DEFAULT


def store_id(identity: str) -> str:
    """The 16 hex digits naming a repository's shared store (`~/.vx/<id>/cache`).

    `identity` is what every checkout of one repository shares, such as its root commit.
    """
    return str(xxhash.xxh3_64_hexdigest(identity.encode("utf-8", "surrogateescape")))


def default_store(identity: str, *, home: Path) -> Path:
    return home / ".vx" / store_id(identity) / "cache"


def remembered_identity(
    common_dir: Path, *, home: Path, compute: Callable[[], str], keep: bool = True
) -> str:
    """The repository identity for a clone, computed once and kept under `~/.vx/clones/`.

    Finding the root commit costs a git process; a clone's root commit never changes, so a
    warm run reads one small file instead. A shallow clone's answer names its git dir and is
    not kept, since deepening the clone changes it; nor is any answer with `keep=False` (a
    plan writes nothing).
    """
    real = os.path.realpath(common_dir)
    memo = home / ".vx" / "clones" / store_id(real)
    try:
        kept = memo.read_text(encoding="utf-8").split("\n")
    except OSError:
        kept = []
    if len(kept) >= 2 and kept[0] == real and kept[1]:
        return kept[1]
    identity = compute()
    if keep and identity.startswith("root:"):
        with contextlib.suppress(OSError):
            memo.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(memo, f"{real}\n{identity}\n")
    return identity


def resolve_location(
    *,
    root: Path,
    identity: Callable[[], str],
    cwd: Path,
    flag: str | None = None,
    config: WorkspaceConfig | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> CacheLocation:
    """Pick the cache: `--cache-dir` (from cwd) > `cacheDir` (from the root) > VX_CACHE_DIR
    (from the root; empty ignored) > the shared store. Nothing is created here; `identity` is
    asked only when the shared store is the answer.
    """
    environ = os.environ if env is None else env
    if flag is not None:
        if not flag.strip():
            raise UserError(ErrorCode.USAGE, "--cache-dir: the path is blank; name a directory")
        return _named(cwd, flag, Source.FLAG)
    if config is not None and config.cache_dir is not None:
        if not config.cache_dir.strip():
            where = config.path or "vx.workspace"
            raise ConfigError(where, "expected a directory, got a blank string", "cacheDir")
        return _named(root, config.cache_dir, Source.CONFIG)
    value = environ.get(CACHE_DIR_ENV, "")
    if value:
        if not value.strip():
            msg = f"{CACHE_DIR_ENV} is blank: unset it or name a directory"
            raise UserError(ErrorCode.USAGE, msg)
        return _named(root, value, Source.ENV)
    store = default_store(identity(), home=Path.home() if home is None else home)
    return CacheLocation(store, store, Source.DEFAULT)


def locate_cache(
    root: Path,
    config: WorkspaceConfig | None,
    *,
    cwd: Path,
    env: Mapping[str, str],
    flag: str | None,
    snap: GitSnapshot | None = None,
    keep: bool = True,
) -> CacheLocation:
    """The cache a `vx run` in `root` opens, for a run and for every verb that reads one.

    The shared store is named for the repository's root commits, remembered per clone
    (`keep=False` remembers nothing: a plan writes nothing). A run passes the git snapshot it
    has taken, so at most one more git process asks for them; a reading verb has none, and git
    is asked for the common dir first. Nothing is created here.
    """
    from vx import git

    home = Path(env.get("HOME") or Path.home())

    def identity() -> str:
        if snap is not None:
            common, compute = snap.common_dir, lambda: git.root_commits(snap, env=env)
        else:
            common, compute = (
                git.common_dir(root, env=env),
                lambda: git.repo_identity(root, env=env),
            )
        return remembered_identity(common, home=home, compute=compute, keep=keep)

    return resolve_location(
        root=root, identity=identity, cwd=cwd, flag=flag, config=config, env=env, home=home
    )


def _named(base: Path, value: str, source: Source) -> CacheLocation:
    path = Path(os.path.normpath(base.absolute() / value))
    return CacheLocation(path, path, source)


def ensure_writable(directory: Path, *, mounts: Path = Path("/proc/mounts")) -> None:
    """Refuse, with one line, a cache dir on a network file system or one this user can't write.

    Creates the directory. Called before any task runs: every run records its history there.
    """
    fstype = mount_type(directory, mounts=mounts)
    if fstype in NETWORK_FILE_SYSTEMS:
        raise UserError(
            ErrorCode.FS,
            f"cache directory {directory} is on a network file system ({fstype}); the cache "
            f"index needs a local disk — pass --cache-dir or set {CACHE_DIR_ENV} to a local path",
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".vx-probe-{os.getpid()}-{os.urandom(4).hex()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError as err:
        code = errno.errorcode.get(err.errno or 0, "error")
        text = (err.strerror or "").lower()
        msg = f"cache directory {directory} is not writable ({code}: {text})"
        raise UserError(ErrorCode.FS, msg) from err


def mount_type(path: Path, *, mounts: Path = Path("/proc/mounts")) -> str | None:
    """The file system type `path` is (or would be) on, per the mount table; None if unknown."""
    probe = Path(os.path.normpath(path.absolute()))
    tail: list[str] = []
    while not probe.exists() and probe != probe.parent:
        tail.insert(0, probe.name)
        probe = probe.parent
    real = os.path.join(os.path.realpath(probe), *tail)  # noqa: PTH118
    try:
        table = mounts.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return None
    best: tuple[int, str | None] = (-1, None)
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        point = _MOUNT_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), fields[1])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= best[0]:
            best = (len(point), fields[2])
    return best[1]
