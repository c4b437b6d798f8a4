"""The task tracer on seccomp user notification: the kernel stops a task at each file call and
tells a thread of vx, which reads the path and lets the call go on.

strace stops a traced call twice (entry, exit) and copies its registers each time: about
110 µs an open on the machines vx is measured on. Here the kernel's filter picks the calls, the
task waits once, and vx's thread reads the path from `/proc/PID/mem` and answers: about 25 µs.
Static binaries are seen as well as dynamic ones: the filter sits in the kernel, not in libc.

How a task is put under it: its argv starts with vx's launcher (`launch.py`), which forbids
itself new privileges (the kernel's condition for an unprivileged filter), installs the filter
with a listener, sends the listener's descriptor to vx over a socket pair, and execs the
command, so the whole process tree is under the filter. `Notifier`'s thread serves the listener
until every process under the filter is gone.

A call is seen before it runs, so its result is unknown: `settle.py` keeps the calls whose effect
the file system shows once the command ended.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import platform
import posixpath
import select
import socket
import struct
import sys
import threading
from typing import TYPE_CHECKING

from vx.trace.launch import LaunchUnavailableError, launcher
from vx.trace.settle import EXEC, OPEN, RENAME, UNLINK, WRITE, settle

if TYPE_CHECKING:
    from vx.trace.parse import Trace

# What each call does to the file it names: (kind, dirfd arg, path arg, flags arg, dirfd 2,
# path 2); -1 where the call has none. `open` kinds read or write by their flags.
_OPEN, _WRITE, _EXEC, _RENAME, _UNLINK = OPEN, WRITE, EXEC, RENAME, UNLINK
_OPEN2, _CHDIR = -1, -2  # read apart: openat2's flags, and a change of directory
_CALLS: dict[str, tuple[int, int, int, int, int, int]] = {
    "open": (_OPEN, -1, 0, 1, -1, -1),
    "openat": (_OPEN, 0, 1, 2, -1, -1),
    "openat2": (_OPEN2, 0, 1, 2, -1, -1),
    "creat": (_WRITE, -1, 0, -1, -1, -1),
    "truncate": (_WRITE, -1, 0, -1, -1, -1),
    "execve": (_EXEC, -1, 0, -1, -1, -1),
    "execveat": (_EXEC, 0, 1, -1, -1, -1),
    "rename": (_RENAME, -1, 0, -1, -1, 1),
    "renameat": (_RENAME, 0, 1, -1, 2, 3),
    "renameat2": (_RENAME, 0, 1, -1, 2, 3),
    "unlink": (_UNLINK, -1, 0, -1, -1, -1),
    "unlinkat": (_UNLINK, 0, 1, -1, -1, -1),
    "rmdir": (_UNLINK, -1, 0, -1, -1, -1),
    "link": (_WRITE, -1, 1, -1, -1, -1),
    "linkat": (_WRITE, 2, 3, -1, -1, -1),
    "symlink": (_WRITE, -1, 1, -1, -1, -1),
    "symlinkat": (_WRITE, 1, 2, -1, -1, -1),
    "chdir": (_CHDIR, -1, -1, -1, -1, -1),
    "fchdir": (_CHDIR, -1, -1, -1, -1, -1),
}

# The kernel's audit architecture and call numbers, per machine vx has a launcher for.
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "open": 2,
            "openat": 257,
            "openat2": 437,
            "creat": 85,
            "truncate": 76,
            "execve": 59,
            "execveat": 322,
            "rename": 82,
            "renameat": 264,
            "renameat2": 316,
            "unlink": 87,
            "unlinkat": 263,
            "rmdir": 84,
            "link": 86,
            "linkat": 265,
            "symlink": 88,
            "symlinkat": 266,
            "chdir": 80,
            "fchdir": 81,
        },
    ),
}

_X32_BIT = 0x40000000  # x86_64's x32 ABI: other numbers, so every such call is looked at
_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# An open of a directory or for a path only reads no file: the filter lets it by unseen.
_UNREAD_FLAGS = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_PATH", 0)

# seccomp(2)'s filter answers and its listener's ioctls (linux/seccomp.h).
_RET_ALLOW = 0x7FFF0000
_RET_USER_NOTIF = 0x7FC00000
_NOTIF_SIZE = 80  # struct seccomp_notif: id, pid, flags, struct seccomp_data
_RESP_SIZE = 24  # struct seccomp_notif_resp: id, val, error, flags
_IOCTL_RECV = 0xC0502100
_IOCTL_SEND = 0xC0182101
_IOCTL_SET_FLAGS = 0x40082104
_FLAG_CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE: the call runs as if never stopped
_FD_SYNC_WAKE_UP = 1  # the task and vx's thread hand the CPU to each other (Linux 6.6)
_NOTIF = struct.Struct("=QIIiIQ6Q")
_RESP = struct.Struct("=QqiI")
_PATH_MAX = 4096
_REASON_WAIT_S = 1.0
_ZEROS = bytes(_NOTIF_SIZE)
_FS_ENCODING = sys.getfilesystemencoding()
_SWITCH_S = 0.0005


class NotifyUnavailableError(Exception):
    """This machine cannot run the notifier; the message says why."""


def machine() -> tuple[int, dict[str, int]]:
    """(audit arch, call numbers) of this machine, or raise."""
    arch = platform.machine()
    if arch not in _ARCHES:
        raise NotifyUnavailableError(f"no seccomp call table for {arch}")
    return _ARCHES[arch]


@functools.cache
def filter_program() -> bytes:
    """The classic BPF program: stop the traced calls, let everything else run unseen.

    A call of another ABI (a 32-bit program, x32) is stopped whatever it is, and the thread
    marks the trace incomplete: its numbers mean other calls."""
    audit, numbers = machine()
    traced = sorted((nr, name) for name, nr in numbers.items())
    program: list[bytes] = []

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> None:
        program.append(struct.pack("=HBBI", code, jt, jf, k))

    ld_abs, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    flags_at = {name: 16 + 8 * _CALLS[name][3] for name in ("open", "openat")}
    op(ld_abs, 4)  # arch
    op(jeq, audit, 1, 0)
    op(ret, _RET_USER_NOTIF)
    op(ld_abs, 0)  # nr
    op(jge, _X32_BIT, 0, 1)
    op(ret, _RET_USER_NOTIF)
    for nr, name in traced:
        if name in flags_at:  # an open of a directory or a path only is let by
            op(jeq, nr, 0, 4)
            op(ld_abs, flags_at[name])
            op(jset, _UNREAD_FLAGS, 0, 1)
            op(ret, _RET_ALLOW)
            op(ret, _RET_USER_NOTIF)
        else:
            op(jeq, nr, 0, 1)
            op(ret, _RET_USER_NOTIF)
    op(ret, _RET_ALLOW)
    return b"".join(program)


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


_Found = tuple[int, int, tuple[bytes, str], "tuple[bytes, str] | None"]
"""A call read while it waited: kind, open flags, its path, a rename's new path."""


class Notifier:
    """One traced command: the launcher to start it with, and the thread that serves its calls.

    Use: `prefix` before the command's argv and `pass_fds` kept open in the child, `spawned()`
    once the spawn returned (or failed), then `finish()` after the command ended for its
    `Trace`, or None with `reason` saying why nothing was seen. With `waits`, the thread waits
    in the kernel's receive alone, without a poll before each call: where the kernel ends that
    wait when the filter's last process is gone (the probe asks), one system call a file call
    fewer. With `within` (directories),
    only paths under them are kept: the system's files a start-up reads (the loader, locales)
    are most of a small task's calls, and looking at each afterwards would cost more."""

    def __init__(self, within: tuple[str, ...] = (), *, waits: bool = False) -> None:
        self._within = tuple(f"{w.rstrip('/')}/" for w in within)
        self._within_raw = tuple(os.fsencode(w) for w in self._within)
        self._waits = waits
        audit, numbers = machine()
        self._audit = audit
        self._calls = {nr: _CALLS[name] for name, nr in numbers.items()}
        try:
            path = launcher(filter_program())
        except LaunchUnavailableError as exc:
            raise NotifyUnavailableError(str(exc)) from exc
        self._ioctl = _libc().ioctl
        # A traced task waits for this thread at each call, and the thread for the interpreter
        # lock: at the default 5 ms switch interval a busy vx thread (saving another task's
        # outputs) could hold it that long per call. 0.5 ms took a traced 100-task run from
        # 1.52x to 1.45x its untraced time (bench/audit.py, cold).
        sys.setswitchinterval(min(sys.getswitchinterval(), _SWITCH_S))
        self._ours, self._theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.prefix = (path, str(self._theirs.fileno()))
        self.pass_fds = (self._theirs.fileno(),)
        self._seen: list[tuple[int, str, int]] = []  # (kind, path, open flags)
        self._busy = threading.Lock()
        self._open = True
        self.reason = ""
        self._thread = threading.Thread(target=self._serve, name="vx-notify", daemon=True)
        self._thread.start()

    # --- in vx
    def spawned(self) -> None:
        """The child has its copy of our socket end (or never started): drop vx's copy, so the
        thread sees the end of the socket if no listener comes."""
        with contextlib.suppress(OSError):
            self._theirs.close()

    def finish(self) -> Trace | None:
        """What the command did, once it ended; None (and `reason`) when it was not seen.

        The thread holds `_busy` from a call's receipt until it is recorded (it is answered
        in between, so the task may end first): waiting for that lock is all it takes for
        every call of an ended process to be in. A process left behind keeps running under
        the filter, its calls answered and no longer recorded, until it ends (or vx does: then
        its traced calls fail with ENOSYS, as the kernel does for a filter nobody serves)."""
        self.spawned()
        with self._busy:  # the last call answered may still be on its way into the list
            self._open = False
            seen = list(self._seen)
        if not seen:
            self._thread.join(_REASON_WAIT_S)  # a failed install's reason may still be on its way
        if self.reason:
            return None
        if not seen:
            self.reason = "the tracer saw nothing run"
            return None
        return settle(seen)

    def ended(self, timeout_s: float) -> bool:
        """Whether the thread ended, waiting up to `timeout_s` (the command has ended)."""
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def _serve(self) -> None:
        try:
            _, fds, _, _ = socket.recv_fds(self._ours, 1, 1)
        except OSError as exc:
            self.reason = f"the tracer's socket failed: {exc}"
            return
        finally:
            self._ours.close()
        if not fds:  # the launcher closed the socket: the kernel refused it the filter
            self.reason = "the seccomp filter could not be installed, or the command never started"
            return
        listener = fds[0]
        try:
            self._ioctl(listener, _IOCTL_SET_FLAGS, ctypes.c_ulong(_FD_SYNC_WAKE_UP))
            self._loop(listener)
        finally:
            os.close(listener)

    def _loop(self, listener: int) -> None:
        ioctl, get_errno, busy = self._ioctl, ctypes.get_errno, self._busy
        notif = ctypes.create_string_buffer(_NOTIF_SIZE)
        resp = ctypes.create_string_buffer(_RESP_SIZE)
        poller = select.poll()
        poller.register(listener, select.POLLIN)
        memory = _Memory()
        polls = not self._waits
        try:
            while True:
                if polls and not poller.poll()[0][1] & select.POLLIN:
                    return  # POLLHUP: no process is left under the filter
                notif.raw = _ZEROS  # the kernel refuses a buffer that is not zeroed
                if ioctl(listener, _IOCTL_RECV, notif) < 0:
                    failed = get_errno()
                    if failed == errno.ENOENT and _hung_up(poller):
                        return  # the last process under the filter is gone
                    if failed in (errno.EINTR, errno.ENOENT):
                        continue  # a signal, or the task died while we were told
                    return
                nid, pid, _, nr, arch, _, *args = _NOTIF.unpack(notif.raw)
                with busy:  # held until the call is recorded: `finish` waits for it
                    found = self._note(pid, nr, arch, args, memory)
                    _RESP.pack_into(resp, 0, nid, 0, 0, _FLAG_CONTINUE)
                    ioctl(listener, _IOCTL_SEND, resp)  # ENOENT: the task died meanwhile
                    if found is not None:  # the task runs on meanwhile; its bytes are read
                        self._record(*found)
        finally:
            memory.close()

    def _note(
        self, pid: int, nr: int, arch: int, args: list[int], memory: _Memory
    ) -> _Found | None:
        """What the waiting call names, read from its process while it waits: raw bytes and
        the directory they are relative to ("" for an absolute path)."""
        call = self._calls.get(nr) if arch == self._audit else None
        if call is None:
            if not self.reason:
                self.reason = f"a call of another ABI ran (number {nr}): it cannot be read"
            return None
        kind, dirfd_at, path_at, flags_at, dirfd2_at, path2_at = call
        if kind == _CHDIR:
            memory.cwds.clear()  # a thread may share its process's directory: forget them all
            return None
        flags = args[flags_at] if flags_at >= 0 else 0
        if kind == _OPEN2:  # openat2's flags are the first field of its `struct open_how`
            how = memory.read(pid, flags, 8)
            flags = int.from_bytes(how, "little") if len(how) == 8 else os.O_RDWR
            kind = _OPEN
        first = _locate(pid, memory, args, dirfd_at, path_at)
        if kind != _RENAME:
            if first is None:
                self._unread(pid)
                return None
            if first[1] or not self._within_raw or first[0].startswith(self._within_raw):
                return kind, flags, first, None
            return None  # an absolute path outside: nothing more to do for it
        second = _locate(pid, memory, args, dirfd2_at, path2_at)
        if first is None or second is None:
            self._unread(pid)
            return None
        return kind, flags, first, second

    def _unread(self, pid: int) -> None:
        if not self.reason:
            self.reason = f"process {pid}'s memory could not be read"

    def _record(
        self,
        kind: int,
        flags: int,
        first: tuple[bytes, str],
        second: tuple[bytes, str] | None,
    ) -> None:
        path, within = _join(*first, flags), self._within
        if second is None:
            if self._open and (not within or path.startswith(within)):
                self._seen.append((kind, path, flags))
            return
        new = _join(*second, 0)
        if self._open and (not within or path.startswith(within) or new.startswith(within)):
            self._seen += ((kind, path, flags), (kind, new, -1))  # -1: the rename's new name


def _hung_up(poller: select.poll) -> bool:
    """Whether the listener reports no process left under its filter (and nothing to read)."""
    ready = poller.poll(0)
    return bool(ready) and not ready[0][1] & select.POLLIN


class _Memory:
    """Each traced process's `/proc/PID/mem`, opened once, and its working directory once read.

    A descriptor that reads nothing belongs to a process that exec'd or ended (its pid perhaps
    reused): it is opened anew, and the directory read anew with it. Any `chdir` forgets every
    directory (threads share theirs), so a cached one is always the process's own."""

    def __init__(self) -> None:
        self.fds: dict[int, int] = {}
        self.cwds: dict[int, str] = {}

    def read(self, pid: int, address: int, size: int) -> bytes:
        for fresh in (False, True):
            fd = self.fds.get(pid) if not fresh else None
            if fd is None:
                self._drop(pid)
                try:
                    fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    return b""
                self.fds[pid] = fd
            try:
                data = os.pread(fd, size, address)
            except OSError:
                data = b""
            if data:
                return data
        return b""

    def string(self, pid: int, address: int) -> bytes | None:
        """The NUL-ended string at address, read a page at most at a time."""
        out = b""
        while len(out) < _PATH_MAX:
            chunk = self.read(pid, address, 4096 - (address & 4095))
            if not chunk:
                return None
            end = chunk.find(b"\0")
            if end >= 0:
                return out + chunk[:end]
            out += chunk
            address += len(chunk)
        return None

    def _drop(self, pid: int) -> None:
        self.cwds.pop(pid, None)
        fd = self.fds.pop(pid, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        for pid in list(self.fds):
            self._drop(pid)


def _locate(
    pid: int, memory: _Memory, args: list[int], dirfd_at: int, path_at: int
) -> tuple[bytes, str] | None:
    """The path a call names, as bytes, and the directory the kernel will resolve it against
    (the process's working directory, or its descriptor's; "" when the path is absolute)."""
    address = args[path_at]
    fd = memory.fds.get(pid)
    raw: bytes | None = None
    if fd is not None:  # the usual case: a known process, the path within one page
        try:
            chunk = os.pread(fd, 4096 - (address & 4095), address)
        except OSError:
            chunk = b""
        end = chunk.find(b"\0")
        if end >= 0:
            raw = chunk[:end]
    if raw is None:
        raw = memory.string(pid, address)
        if raw is None:
            return None
    if raw[:1] == b"/":
        return raw, ""
    dirfd = _AT_FDCWD
    if dirfd_at >= 0:
        dirfd = args[dirfd_at] & 0xFFFFFFFF
        dirfd -= (dirfd >> 31) << 32  # an int's 32 bits, signed: AT_FDCWD is negative
    base = memory.cwds.get(pid) if dirfd == _AT_FDCWD else None
    if base is None:
        where = f"/proc/{pid}/cwd" if dirfd == _AT_FDCWD else f"/proc/{pid}/fd/{dirfd}"
        try:
            base = os.readlink(where)  # noqa: PTH115 - per call, a Path costs more than the call
        except OSError:
            return None
        if dirfd == _AT_FDCWD:
            memory.cwds[pid] = base
    return raw, base


def _join(raw: bytes, base: str, flags: int) -> str:
    """The absolute, normalised path `_locate` found."""
    path = raw.decode(_FS_ENCODING, "surrogateescape")
    if base:
        if not path and flags & _AT_EMPTY_PATH:
            return base
        path = f"{base}/{path}"
    return posixpath.normpath(path) if "/." in path or "//" in path else path
