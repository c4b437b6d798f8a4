"""Upgrade the binary's folder install: a new `lib/vx-<version>/` beside the old, one link flipped.

install.sh lays the binary out as `<root>/lib/vx-<version>/` (the executable beside the
libraries it loads) with `<root>/bin/vx` a relative symlink to the executable. An upgrade
downloads the release's tarball into `lib/`, checks its SHA-256, unpacks it under a hidden
name, renames it to `lib/vx-<new>/`, and swaps `bin/vx` by renaming a new link over it: at
every instant `bin/vx` leads to a whole vx. The new vx then answers `--version` through the
link within swap.PROBE_TIMEOUT_S, or the old link is renamed back and the new folder removed.

Ctrl-C or an error after the flip puts the old link back the same way before it travels on.
The running vx's folder stays (it is still executing from it); older ones are removed once
the new one holds, so `lib/` keeps the current version and the one before it.
"""

from __future__ import annotations

import os
import posixpath
import secrets
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.selfupdate.swap import Installed, fetch_verified, prove_started

if TYPE_CHECKING:
    from vx.selfupdate.release import Release

_PARTIAL = ".vx-upgrade-"


def install_folder(release: Release, root: Path, running: Path) -> Installed:
    """Put the release's folder under `root/lib`, flip `root/bin/vx` to it, prove it starts.

    `running` is this vx's executable (`root/lib/vx-<old>/vx`): its mode and owner go to the
    new executable, its folder's owner to the new folder, and its folder is kept.
    """
    lib, link = root / "lib", root / "bin" / "vx"
    dest = lib / f"vx-{release.version}"
    if dest == running.parent:
        raise UserError(
            ErrorCode.REFUSED,
            f"{dest} is this vx's own folder, yet this vx answers another version — nothing "
            "replaced; reinstall with install.sh",
        )
    # A random name: a link left by an upgrade that was killed never blocks a later one.
    new_link = link.with_name(f"{_PARTIAL}{secrets.token_hex(8)}")
    partial: Path | None = None
    stage: Path | None = None
    flipped = placed = False
    try:
        old_target = link.readlink()
        fd, partial_name = tempfile.mkstemp(prefix=_PARTIAL, suffix=".tar.gz", dir=lib)
        partial = Path(partial_name)
        fetch_verified(release, fd)
        stage = Path(tempfile.mkdtemp(prefix=_PARTIAL, dir=lib))
        top = _unpack(partial, stage, release.asset.name)
        _copy_owner_tree(running, top)
        if dest.exists():
            shutil.rmtree(dest)
        top.rename(dest)
        placed = True
        new_link.symlink_to(f"../lib/{dest.name}/vx")
        _copy_link_owner(link, new_link)
        new_link.replace(link)
        flipped = True
        prove_started(link, release.version)
    except BaseException:
        # A refused probe, Ctrl-C or a crash: bin/vx goes back to the old folder before the
        # error travels on, so it never stays on a vx that has not answered.
        if flipped:
            new_link.unlink(missing_ok=True)
            new_link.symlink_to(old_target)
            _copy_link_owner(link, new_link)
            new_link.replace(link)
        if placed:
            shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        new_link.unlink(missing_ok=True)
        if partial is not None:
            partial.unlink(missing_ok=True)
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
    for old in lib.glob("vx-*"):
        if old not in (dest, running.parent):
            shutil.rmtree(old, ignore_errors=True)
    return Installed(link, release.version)


def _unpack(tarball: Path, stage: Path, name: str) -> Path:
    """Unpack into `stage`; the one top folder the asset's name promises, holding `vx`.

    The archive is checked before anything is written: the top member a directory, every
    member under it, and every link (symbolic or hard) leading to a path under it; then
    tarfile's data filter allows only regular files, directories and links.
    """
    top_name = name.removesuffix(".tar.gz")
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            members = tar.getmembers()
            problem = next(filter(None, (_escapes(m, top_name) for m in members)), None)
            if problem is not None:
                raise _bad(name, problem)
            tar.extractall(stage, filter="data")
    except (tarfile.TarError, EOFError, OSError) as e:
        raise _bad(name, str(e) or type(e).__name__) from None
    top = stage / top_name
    if not (top / "vx").is_file():
        raise _bad(name, f"no {top_name}/vx inside")
    return top


def _escapes(member: tarfile.TarInfo, top_name: str) -> str | None:
    """Why `member` would put something outside the top folder (or not make it one), if so."""
    path = posixpath.normpath(member.name)
    if path == top_name:
        return None if member.isdir() else f"{top_name} is not a folder"
    if not path.startswith(f"{top_name}/"):
        return f"{member.name} lies outside {top_name}/"
    if not (member.issym() or member.islnk()):
        return None
    # A symlink's target is relative to the link's folder; a hard link's to the archive's root.
    base = posixpath.dirname(path) if member.issym() else ""
    target = posixpath.normpath(posixpath.join(base, member.linkname))
    if not target.startswith(f"{top_name}/"):
        return f"{member.name} links to {member.linkname}, outside {top_name}/"
    return None


def _bad(name: str, detail: str) -> UserError:
    return UserError(
        ErrorCode.REFUSED,
        f"could not unpack {name} ({detail}) — nothing replaced; report it to the release's "
        "publisher",
    )


def _copy_owner_tree(running: Path, top: Path) -> None:
    """The new executable gets the old one's mode; as root, the new folder its owner."""
    st = running.stat()
    (top / "vx").chmod(st.st_mode & 0o7777)
    if os.geteuid() != 0:
        return
    owner = running.parent.stat()
    for path in [top, *top.rglob("*")]:
        os.lchown(path, owner.st_uid, owner.st_gid)
    os.chown(top / "vx", st.st_uid, st.st_gid)


def _copy_link_owner(old: Path, new: Path) -> None:
    if os.geteuid() == 0:
        st = old.lstat()
        os.lchown(new, st.st_uid, st.st_gid)
