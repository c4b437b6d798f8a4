"""Atomic writes: whole or nothing, the first writer wins when asked, and no temp left over."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vx.util.atomic import TEMP_MARKER, write_atomic

SRC = Path(__file__).resolve().parents[3] / "src"


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize(
    ("data", "want"),
    [
        (b"bytes", b"bytes"),
        ("text ü", "text ü".encode()),
        (lambda fh: fh.write(b"from a writer"), b"from a writer"),
    ],
    ids=["bytes", "str", "writer"],
)
@pytest.mark.parametrize("durable", [True, False], ids=["synced", "unsynced"])
def test_write_replaces_the_file_whole(tmp_path: Path, data, want: bytes, durable: bool) -> None:
    path = tmp_path / "f.json"
    path.write_text("old")
    assert write_atomic(path, data, mode=0o640, durable=durable)
    assert path.read_bytes() == want
    assert path.stat().st_mode & 0o777 == 0o640
    assert names(tmp_path) == ["f.json"]


def test_a_failing_writer_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("old")

    def writer(fh) -> None:
        fh.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, writer)
    assert path.read_text() == "old"
    assert names(tmp_path) == ["f"]


def test_exclusive_keeps_the_first_file(tmp_path: Path) -> None:
    path = tmp_path / "k"
    assert write_atomic(path, b"first", exclusive=True)
    assert not write_atomic(path, b"second", exclusive=True)
    assert path.read_bytes() == b"first"
    assert names(tmp_path) == ["k"]


def test_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "f", b"x")


def test_a_file_size_limit_is_an_error_with_no_temp_left(tmp_path: Path) -> None:
    code = """
        import resource, signal, sys
        from pathlib import Path
        from vx.util.atomic import write_atomic
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            write_atomic(Path(sys.argv[1]), b"x" * 1_000_000)
        except OSError as err:
            print(err.errno)
        """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(tmp_path / "big")],
        cwd="/",
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert int(out) == errno.EFBIG
    assert names(tmp_path) == []


def test_a_writer_killed_mid_write_never_tears_the_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"A" * 100_000)
    code = """
        import sys
        from pathlib import Path
        from vx.util.atomic import write_atomic
        def slow(fh):
            fh.write(b"B" * 50_000)
            fh.flush()
            print("half", flush=True)
            sys.stdin.read()
        write_atomic(Path(sys.argv[1]), slow)
        """
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), str(path)],
        cwd="/",
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "half\n"
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert path.read_bytes() == b"A" * 100_000
    temps = [n for n in names(tmp_path) if n != "f"]
    assert len(temps) == 1
    assert temps[0].startswith("f" + TEMP_MARKER)
