"""The launcher that puts a command under vx's seccomp filter: a 344-byte static program.

The filter must be installed by the traced process itself, before its first `exec`. Doing it
from Python between fork and exec (`preexec_fn`) forces a real fork of vx: 13 ms and about
2,700 page faults a task on a 60 MB vx, where the spawn is otherwise a vfork of 1.3 ms, so a run
of a hundred small tasks took 2.3x as long under audit. A program of its own costs one exec
instead (an interpreter would cost more than the fork). Its source is `launch_x86_64.S` beside
this file; the test suite assembles it and compares. Other machines use strace.

The image is built once per vx process, with the filter appended, into a memory file
(`memfd_create`): nothing is written to disk, and a `noexec` temporary directory does not matter.
"""

from __future__ import annotations

import functools
import os
import platform
import struct

CODE_X86_64 = bytes.fromhex(
    "4c8b24244c8d6c24084f8d74e508498b75084531ff0fb60685c0740f83e830456bff0a4101c748ffc6ebea"
    "4881ec80000000b89d000000bf26000000be0100000031d24531d24531c00f054885c00f85ce000000488d05"
    "fd0000000fb70848890c24488d480848894c2408b83d010000bf01000000be080000004889e20f054885c00f"
    "889a0000004889c348c744241014000000c744241801000000c744241c01000000895c2420c74424240000"
    "0000c64424702b488d442470488944242848c74424300100000031c048894424384889442440488d442428"
    "488944244848c744245001000000488d442410488944245848c74424601800000048c744246800000000b8"
    "2e0000004489ff488d74243831d20f054885c0782cb80300000089df0f05b8030000004489ff0f05b83b00"
    "0000498b7d10498d75104c89f20f05bf7f000000eb05bf7e000000b8e70000000f050f1f8000000000"
)
"""`launch_x86_64.S`'s `.text`; the filter follows it, at `program:`."""

_BASE = 0x400000  # where the one segment is mapped (a fixed address: no relocation to do)
_HEADERS = 64 + 56  # the ELF header, then one program header


class LaunchUnavailableError(Exception):
    """No launcher for this machine, or no memory file to hold it; the message says which."""


def image(program: bytes) -> bytes:
    """The launcher as an ELF executable, with `program` (classic BPF) as its filter."""
    data = CODE_X86_64 + struct.pack("=H6x", len(program) // 8) + program
    size = _HEADERS + len(data)
    ident = b"\x7fELF" + bytes((2, 1, 1, 0)) + bytes(8)  # 64-bit, little-endian, SysV
    header = ident + struct.pack(
        "=HHIQQQIHHHHHH", 2, 62, 1, _BASE + _HEADERS, 64, 0, 0, 64, 56, 1, 0, 0, 0
    )  # an executable for x86_64, entered right after the headers
    segment = struct.pack("=IIQQQQQQ", 1, 5, 0, _BASE, _BASE, size, size, 0x1000)  # load, r-x
    return header + segment + data


@functools.cache
def launcher(program: bytes) -> str:
    """A path that execs the launcher with `program`, valid while this vx runs."""
    if platform.machine() != "x86_64":
        raise LaunchUnavailableError(f"no seccomp launcher for {platform.machine()}")
    try:
        fd = os.memfd_create("vx-launch", os.MFD_CLOEXEC)
        os.write(fd, image(program))
    except (OSError, AttributeError) as exc:
        raise LaunchUnavailableError(f"no memory file for the launcher: {exc}") from exc
    return f"/proc/{os.getpid()}/fd/{fd}"
