"""The run lock: one run per workspace at a time, a wait that names the holder, no stale locks."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from vx.cache.runlock import NestedRunError, acquire_run_lock, lock_path
from vx.errors import ErrorCode, UserError

SRC = Path(__file__).resolve().parents[3] / "src"

HOLDER = """
import subprocess, sys
from pathlib import Path
from vx.cache.runlock import acquire_run_lock
lock = acquire_run_lock(Path(sys.argv[1]), temp_dir=Path(sys.argv[2]))
print("held", flush=True)
if len(sys.argv) > 3:
    child = subprocess.run([sys.executable, "-c", sys.argv[3], *sys.argv[1:3]], capture_output=True, text=True)
    print(child.stdout.strip(), flush=True)
sys.stdin.read()
lock.release()
"""

NESTED = """
import sys
from pathlib import Path
from vx.cache.runlock import NestedRunError, acquire_run_lock
try:
    acquire_run_lock(Path(sys.argv[1]), temp_dir=Path(sys.argv[2]))
except NestedRunError as err:
    print("refused", err.pid)
"""


def holder(root: Path, tmp: Path, *extra: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(root), str(tmp), *extra],
        cwd="/",
        env={**os.environ, "PYTHONPATH": str(SRC)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "held\n", proc.communicate()
    return proc


def test_the_lock_file_is_this_users_and_this_workspaces(tmp_path: Path) -> None:
    path = lock_path(tmp_path / "ws", temp_dir=tmp_path / "tmp")
    assert path.parent == tmp_path / "tmp" / f"vx-{os.getuid()}"
    assert re.fullmatch(r"[0-9a-f]{16}\.lock", path.name)
    assert lock_path(tmp_path / "other", temp_dir=tmp_path / "tmp") != path
    with acquire_run_lock(tmp_path / "ws", temp_dir=tmp_path / "tmp") as lock:
        assert lock.path == path
        assert path.read_text() == f"{os.getpid()}\n"
        assert path.parent.stat().st_mode & 0o777 == 0o700
    with acquire_run_lock(tmp_path / "ws", temp_dir=tmp_path / "tmp"):
        pass


def test_a_second_run_waits_and_is_told_who_holds_the_lock(tmp_path: Path) -> None:
    root, tmp = tmp_path / "ws", tmp_path / "tmp"
    proc = holder(root, tmp)
    told: list[int] = []
    got: list[int] = []

    def on_wait(pid: int) -> None:
        told.append(pid)
        assert proc.stdin is not None
        proc.stdin.close()

    def take() -> None:
        with acquire_run_lock(root, temp_dir=tmp, on_wait=on_wait):
            got.append(os.getpid())

    waiter = threading.Thread(target=take, daemon=True)
    waiter.start()
    waiter.join(timeout=60)
    proc.wait(timeout=60)
    assert told == [proc.pid]
    assert got == [os.getpid()]


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    root, tmp = tmp_path / "ws", tmp_path / "tmp"
    proc = holder(root, tmp)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    told: list[int] = []
    with acquire_run_lock(root, temp_dir=tmp, on_wait=told.append):
        pass
    assert told == []


def test_a_task_of_the_holding_run_is_refused_instead_of_waiting_forever(tmp_path: Path) -> None:
    root, tmp = tmp_path / "ws", tmp_path / "tmp"
    proc = holder(root, tmp, textwrap.dedent(NESTED))
    assert proc.stdout is not None
    assert proc.stdout.readline() == f"refused {proc.pid}\n"
    proc.communicate("")
    assert NestedRunError(7).code is ErrorCode.REFUSED


def test_taking_a_lock_this_process_holds_is_a_defect_not_a_hang(tmp_path: Path) -> None:
    with (
        acquire_run_lock(tmp_path / "ws", temp_dir=tmp_path / "tmp"),
        pytest.raises(RuntimeError, match="already holds"),
    ):
        acquire_run_lock(tmp_path / "ws", temp_dir=tmp_path / "tmp")


def test_a_lock_dir_that_is_not_this_users_own_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp" / f"vx-{os.getuid()}").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UserError, match="not a directory this user owns") as caught:
        acquire_run_lock(tmp_path / "ws", temp_dir=tmp_path / "tmp")
    assert caught.value.code is ErrorCode.FS
    assert list((tmp_path / "elsewhere").iterdir()) == []
