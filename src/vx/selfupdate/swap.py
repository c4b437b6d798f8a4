"""Put a verified download in place of the running vx, and put the old one back if it fails.

The new file is written beside the old one (same directory, same file system), checked
against the release's SHA-256, given the old file's mode (and, as root, its owner), and
renamed over it: at every instant the path holds a whole vx. The old file stays reachable
through a hard link until the new one has answered `--version`; if it does not (it does not
start here, it hangs past PROBE_TIMEOUT_S, it names another version), or the upgrade is
interrupted before it has, the link is renamed back.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.selfupdate.fetch import download
from vx.util.record import Record

if TYPE_CHECKING:
    from vx.selfupdate.release import Release

PROBE_TIMEOUT_S = 10
_PARTIAL = ".vx-upgrade-"


def check_writable(directory: Path) -> None:
    """Refuse before any download when this user cannot write `directory`, where the file
    (or the folder) to replace lives."""
    if not os.access(directory, os.W_OK | os.X_OK):
        name = errno.errorcode[errno.EACCES]
        raise UserError(
            ErrorCode.FS,
            f"cannot write to {directory} ({name}), where this vx lives — nothing downloaded; "
            "re-run as a user who can (sudo vx upgrade)",
        )


class Installed(Record):
    """The outcome of a swap that held: the file and the version it now answers with."""

    path: Path
    version: str


def install(release: Release, path: Path) -> Installed:
    """Download the release's asset, verify it, swap it in for `path`, prove it starts."""
    fd, partial_name = tempfile.mkstemp(prefix=_PARTIAL, dir=path.parent)
    partial = Path(partial_name)
    backup: Path | None = None
    replaced = False
    try:
        fetch_verified(release, fd)
        _copy_mode_and_owner(path, partial)
        backup = _keep_old(path)
        partial.replace(path)
        replaced = True
        prove_started(path, release.version)
    except BaseException:
        # Whatever stopped us (a refused probe, Ctrl-C, a crash) after the swap, the old file
        # goes back: the path never stays on a vx that has not answered.
        if replaced and backup is not None:
            backup.replace(path)
            backup = None
        raise
    finally:
        for leftover in (partial, backup):
            if leftover is not None:
                leftover.unlink(missing_ok=True)
    return Installed(path, release.version)


def fetch_verified(release: Release, fd: int) -> None:
    """Download the release's asset into the open file `fd` (closed after), flushed to disk,
    and refuse it unless its SHA-256 is the one the release publishes."""
    with os.fdopen(fd, "wb") as out:
        saved = download(release.asset.url, out, release.asset.size)
        out.flush()
        os.fsync(out.fileno())
    if saved.sha256 != release.asset.sha256:
        raise UserError(
            ErrorCode.REFUSED,
            f"the download did not match the release's SHA-256 (expected "
            f"{release.asset.sha256[:12]}…, got {saved.sha256[:12]}…) — nothing replaced; "
            "re-run vx upgrade, and report it if it repeats",
        )


def prove_started(path: Path, version: str) -> None:
    """Refuse, saying why, unless `path --version` answers `vx <version>`; the caller has put
    the previous vx back by the time the error is shown."""
    problem = probe(path, version)
    if problem is not None:
        raise UserError(
            ErrorCode.REFUSED,
            f"the new vx {version} did not start here ({problem}) — the previous vx is back "
            f"in place at {path}",
        )


_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def probe(path: Path, version: str) -> str | None:
    """Run `path --version`; None when it answers `vx <version>`, else what went wrong.

    The probe runs in a session of its own, so a binary that hangs is killed with whatever
    it started: nothing outlives the upgrade, and nothing holds the pipes open after it.
    """
    # A Ctrl-C landing inside Popen, after the fork, would leave a probe no one kills: the
    # stop signals wait until `child` exists and the handler below can reach it. (The probe
    # inherits the mask; it is only ever ended by SIGKILL.)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        child = subprocess.Popen(
            [path, "--version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as e:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return f"{errno.errorcode.get(e.errno or 0, 'OSError')}: {e.strerror}"
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        out, err = child.communicate(timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill(child)
        return f"no answer to --version within {PROBE_TIMEOUT_S} s"
    except BaseException:
        # Ctrl-C reaches only our session: the probe's would run on, hung, without this.
        _kill(child)
        raise
    if child.returncode != 0:
        last = (err.strip().splitlines() or [""])[-1][:200]
        return f"--version exited {child.returncode}" + (f": {last}" if last else "")
    answer = out.strip()
    if answer != f"vx {version}":
        return f'--version answered "{answer[:80]}", not "vx {version}"'
    return None


def _kill(child: subprocess.Popen[str]) -> None:
    """Kill the probe's whole session and reap it (its group outlives a leader that exited)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.communicate()


def _copy_mode_and_owner(old: Path, new: Path) -> None:
    """The new file gets the old one's permission bits, and as root its owner and group."""
    st = old.stat()
    new.chmod(st.st_mode & 0o7777)
    if os.geteuid() == 0:
        os.chown(new, st.st_uid, st.st_gid)


def _keep_old(path: Path) -> Path:
    """A second name for the old file, to rename back on a failed probe."""
    backup = path.parent / f"{_PARTIAL}old-{os.getpid()}"
    backup.unlink(missing_ok=True)
    try:
        backup.hardlink_to(path)
    except OSError:
        shutil.copy2(path, backup)
    return backup
