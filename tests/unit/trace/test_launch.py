"""The seccomp launcher's embedded bytes are its assembly source's, and its image is well formed."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from vx.trace.launch import CODE_X86_64, image

SOURCE = Path(__file__).resolve().parents[3] / "src/vx/trace/launch_x86_64.S"


@pytest.mark.skipif(
    not (shutil.which("as") and shutil.which("objcopy")), reason="binutils is not installed"
)
def test_the_embedded_code_is_what_the_source_assembles_to(tmp_path: Path) -> None:
    obj, raw = tmp_path / "launch.o", tmp_path / "launch.bin"
    subprocess.run(["as", "--64", "-o", str(obj), str(SOURCE)], check=True)
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(obj), str(raw)], check=True)
    assert raw.read_bytes() == CODE_X86_64


def test_the_image_loads_its_filter_right_after_the_code() -> None:
    program = bytes(range(16))  # two instructions
    elf = image(program)
    assert elf[:4] == b"\x7fELF"
    entry = struct.unpack_from("=Q", elf, 24)[0]
    assert entry == 0x400000 + 120
    filesz, memsz = struct.unpack_from("=QQ", elf, 64 + 32)
    assert filesz == memsz == len(elf)
    tail = elf[120 + len(CODE_X86_64) :]
    assert tail == struct.pack("=H6x", 2) + program


def _runs_here() -> bool:
    from vx.trace.probe import tracing_available

    return tracing_available(None, "seccomp").ok


@pytest.mark.skipif(not _runs_here(), reason="the seccomp notifier cannot run here")
def test_the_launcher_exits_126_when_vx_is_gone_and_127_when_the_exec_fails() -> None:
    from vx.trace.launch import launcher
    from vx.trace.notify import Notifier, filter_program

    gone = subprocess.run([launcher(filter_program()), "999", "/bin/true"], check=False)
    assert gone.returncode == 126
    notifier = Notifier()
    try:
        missing = subprocess.run(
            [*notifier.prefix, "/nonexistent/program"], pass_fds=notifier.pass_fds, check=False
        )
    finally:
        notifier.spawned()
    assert missing.returncode == 127
    trace = notifier.finish()
    assert trace is not None
    assert trace.execs == frozenset()  # the program never existed: no run is kept


@pytest.mark.skipif(not _runs_here(), reason="the seccomp notifier cannot run here")
@pytest.mark.parametrize("waits", [True, False])
def test_both_ways_of_waiting_see_the_same_calls_and_end_with_the_command(
    tmp_path: Path, waits: bool
) -> None:
    from vx.trace.notify import Notifier
    from vx.trace.probe import tracing_available

    if waits and "waits" not in tracing_available(None, "seccomp").flags:
        pytest.skip("this kernel does not end a waiting receive when the filter's users are gone")
    (tmp_path / "in.txt").write_text("x")
    notifier = Notifier((str(tmp_path),), waits=waits)
    try:
        done = subprocess.run(
            [*notifier.prefix, "/bin/sh", "-c", "cat in.txt > out.txt"],
            cwd=tmp_path,
            pass_fds=notifier.pass_fds,
            check=False,
        )
    finally:
        notifier.spawned()
    assert done.returncode == 0
    trace = notifier.finish()
    assert trace is not None
    assert trace.reads == {str(tmp_path / "in.txt")}
    assert trace.writes == {str(tmp_path / "out.txt")}
    assert notifier.ended(60.0)
