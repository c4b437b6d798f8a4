"""Task processes: real `sh` children in their own groups, real signals, real pipes and a real pty."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from vx.events import Stream
from vx.run.groups.registry import ProcessRegistry
from vx.run.process import (
    ProcessHandle,
    ProcessResult,
    ProcessSpec,
    SpawnError,
    run_captured,
    run_process,
    start_process,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

SRC = Path(__file__).resolve().parents[3] / "src"
ENV = {"PATH": os.environ.get("PATH", os.defpath)}
HANG_LIMIT_S = 60  # only there so a broken build fails instead of hanging


class Collected:
    """Chunks as on_output saw them."""

    def __init__(self) -> None:
        self.chunks: list[tuple[Stream, str]] = []
        self.seen: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def __call__(self, stream: Stream, text: str) -> None:
        with self._lock:
            self.chunks.append((stream, text))
            joined = self.text()
            for needle, event in self.seen.items():
                if needle in joined:
                    event.set()

    def text(self, stream: Stream | None = None) -> str:
        return "".join(t for s, t in self.chunks if stream is None or s == stream)

    def merged(self) -> list[tuple[Stream, str]]:
        out: list[tuple[Stream, str]] = []
        for stream, text in self.chunks:
            if out and out[-1][0] == stream:
                out[-1] = (stream, out[-1][1] + text)
            else:
                out.append((stream, text))
        return out

    def when(self, needle: str) -> threading.Event:
        with self._lock:
            event = self.seen.setdefault(needle, threading.Event())
            if needle in self.text():
                event.set()
            return event


def spec(command: str, cwd: Path, **kw: object) -> ProcessSpec:
    return ProcessSpec(command, cwd, ENV, **kw)  # type: ignore[arg-type]


class Waiter:
    """handle.wait() on a thread of its own, as a scheduler's worker runs it."""

    def __init__(self, handle: ProcessHandle) -> None:
        self._box: list[ProcessResult | BaseException] = []
        self._thread = threading.Thread(target=self._run, args=(handle,), daemon=True)
        self._thread.start()

    def _run(self, handle: ProcessHandle) -> None:
        try:
            self._box.append(handle.wait())
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            self._box.append(exc)

    def result(self) -> ProcessResult:
        """The result, failing rather than hanging."""
        self._thread.join(HANG_LIMIT_S)
        assert not self._thread.is_alive(), "the process layer hung"
        result = self._box[0]
        if isinstance(result, BaseException):
            raise result
        return result


def wait_bounded(handle: ProcessHandle) -> ProcessResult:
    return Waiter(handle).result()


def run(
    command: str, cwd: Path, registry: ProcessRegistry, **kw: object
) -> tuple[ProcessResult, Collected, int]:
    out = Collected()
    handle = start_process(spec(command, cwd, **kw), out, registry=registry)
    return wait_bounded(handle), out, handle.pgid


def assert_group_gone(pgid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.killpg(pgid, 0)


@pytest.fixture
def registry() -> Iterator[ProcessRegistry]:
    reg = ProcessRegistry()
    yield reg
    assert reg.live() == ()


def test_output_keeps_arrival_order_across_streams(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    command = (
        "echo out 1; sleep 0.2; echo err 1 >&2; sleep 0.2; echo out 2; sleep 0.2; echo err 2 >&2"
    )
    result, out, pgid = run(command, tmp_path, registry)
    assert result.exit_code == 0
    assert out.merged() == [
        (Stream.STDOUT, "out 1\n"),
        (Stream.STDERR, "err 1\n"),
        (Stream.STDOUT, "out 2\n"),
        (Stream.STDERR, "err 2\n"),
    ]
    assert_group_gone(pgid)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (r"printf '\303'; sleep 0.2; printf '\251t\303\251\n'", "été\n"),
        (r"printf 'a\377b\n'", "a\ufffdb\n"),
        (r"printf '\342\202'", "\ufffd"),
    ],
)
def test_utf8_is_decoded_across_reads(
    tmp_path: Path, registry: ProcessRegistry, command: str, expected: str
) -> None:
    _, out, _ = run(command, tmp_path, registry)
    assert out.text(Stream.STDOUT) == expected


def test_full_pipes_never_block(tmp_path: Path, registry: ProcessRegistry) -> None:
    command = (
        "head -c 1048576 /dev/zero | tr '\\0' e >&2; "
        "head -c 1048576 /dev/zero | tr '\\0' o; "
        "head -c 1048576 /dev/zero | tr '\\0' e >&2; echo"
    )
    result, out, _ = run(command, tmp_path, registry)
    assert result.exit_code == 0
    assert out.text(Stream.STDOUT) == "o" * 1048576 + "\n"
    assert out.text(Stream.STDERR) == "e" * 2 * 1048576


@pytest.mark.parametrize(
    ("command", "code", "signo"),
    [
        ("exit 0", 0, None),
        ("exit 3", 3, None),
        ("exec false", 1, None),
        ("no-such-command-anywhere", 127, None),
        ("kill -TERM $$", 143, signal.SIGTERM),
        ("kill -KILL $$", 137, signal.SIGKILL),
        ("kill -USR1 $$", 128 + signal.SIGUSR1, signal.SIGUSR1),
        ("kill -INT $$", 130, signal.SIGINT),
    ],
)
def test_exit_codes_read_as_a_shell_reports_them(
    tmp_path: Path, registry: ProcessRegistry, command: str, code: int, signo: int | None
) -> None:
    result, _, pgid = run(command, tmp_path, registry)
    assert (result.exit_code, result.signal, result.timed_out) == (code, signo, False)
    assert_group_gone(pgid)


def test_rusage_comes_from_the_kernel(tmp_path: Path, registry: ProcessRegistry) -> None:
    command = f"{sys.executable} -c 'b = bytearray(64 * 1024 * 1024); b[::4096] = b\"x\" * len(b[::4096])'"
    result, _, _ = run(command, tmp_path, registry)
    assert result.exit_code == 0
    assert result.cpu_ms is not None
    assert result.cpu_ms > 0
    assert result.peak_rss_bytes is not None
    assert result.peak_rss_bytes >= 64 * 1024 * 1024
    assert result.duration_ms > 0


def test_stdin_is_empty_and_env_and_cwd_are_exact(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    command = 'cat; echo "rc=$?"; pwd; echo "$GREETING"; echo "${HOME-unset}"'
    out = Collected()
    env = {**ENV, "GREETING": "hi"}
    handle = start_process(ProcessSpec(command, tmp_path, env), out, registry=registry)
    assert wait_bounded(handle).exit_code == 0
    assert out.text(Stream.STDOUT) == f"rc=0\n{tmp_path}\nhi\nunset\n"


SHELL_CASES = [
    'echo "$0 $# [$*] $LINENO"\necho "$LINENO $-"',
    'echo "[${_-unset}]"; set | grep -c "^_=" || true',
    "nosuchcommand-vx",
    "echo a; if",
    'echo "unterminated',
    "; echo x",
    "\nfi",
    "echo ${1?missing}",
    "trap 'echo bye' EXIT; exit 3",
    "cat <<EOF\n$0 here\nEOF",
    "ls /proc/self/fd | wc -l",
]


@pytest.mark.parametrize("underscore", [False, True], ids=["plain", "env-holds-_"])
@pytest.mark.parametrize("command", SHELL_CASES)
def test_a_captured_task_reads_as_sh_c_its_command(
    tmp_path: Path, registry: ProcessRegistry, command: str, *, underscore: bool
) -> None:
    """The gate before a task changes nothing the task can see: what it prints (messages,
    line numbers, `$0`, `_`, its open descriptors) and its exit code are those of `sh -c`."""
    env = {**ENV, "_": "from-env"} if underscore else ENV
    out = Collected()
    handle = start_process(ProcessSpec(command, tmp_path, env), out, registry=registry)
    result = wait_bounded(handle)
    alone = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )
    got = (result.exit_code, out.text(Stream.STDOUT), out.text(Stream.STDERR))
    assert got == (alone.returncode, alone.stdout, alone.stderr)


def test_a_task_never_starts_without_vx_s_word(tmp_path: Path) -> None:
    """Should vx die between the spawn and registering the group, the gate's pipe ends unread:
    the shell exits 125 and the command never runs, on either form of the gate."""
    from vx.run.process import _gated

    marker = tmp_path / "ran"
    for env, prefix in ((ENV, ()), ({**ENV, "_": "x"}, ("env",))):
        task = ProcessSpec(f"touch {marker}", tmp_path, env, prefix=prefix)
        read_end, write_end = os.pipe()
        os.close(write_end)  # vx gone before its word
        argv = _gated(task, [*prefix, "/bin/sh", "-c", task.command])
        code = subprocess.run(argv, stdin=read_end, env=env, check=False).returncode
        os.close(read_end)
        assert (code, marker.exists()) == (125, False)


def test_a_timeout_terms_the_group(tmp_path: Path, registry: ProcessRegistry) -> None:
    result, _, pgid = run("sleep 600", tmp_path, registry, timeout_ms=100, kill_grace_ms=30_000)
    assert (result.exit_code, result.signal, result.timed_out) == (143, signal.SIGTERM, True)
    assert_group_gone(pgid)


def test_a_timeout_kills_what_ignores_term(tmp_path: Path, registry: ProcessRegistry) -> None:
    result, _, pgid = run(
        "trap '' TERM; sleep 600", tmp_path, registry, timeout_ms=100, kill_grace_ms=200
    )
    assert (result.exit_code, result.signal, result.timed_out) == (137, signal.SIGKILL, True)
    assert_group_gone(pgid)


@pytest.mark.parametrize(
    "command",
    [
        "sleep 600 & echo started",
        "(trap '' TERM; sleep 600) & echo started",
        "sleep 600 >/dev/null 2>&1 & echo started",
        "(sleep 600 & sleep 600) & echo started",
    ],
)
def test_leftovers_in_the_group_neither_hang_nor_survive(
    tmp_path: Path, registry: ProcessRegistry, command: str
) -> None:
    result, out, pgid = run(command, tmp_path, registry, kill_grace_ms=200)
    assert result.exit_code == 0
    assert out.text() == "started\n"
    assert_group_gone(pgid)


def test_terminate_from_another_thread(tmp_path: Path, registry: ProcessRegistry) -> None:
    out = Collected()
    handle = start_process(spec("echo ready; sleep 600", tmp_path), out, registry=registry)
    assert handle.pgid in registry.live()
    waiter = Waiter(handle)
    assert out.when("ready").wait(HANG_LIMIT_S)
    threading.Thread(target=handle.terminate).start()
    result = waiter.result()
    assert (result.exit_code, result.timed_out) == (143, False)
    assert handle.wait() is result
    handle.terminate()  # a no-op once it is over
    assert_group_gone(handle.pgid)


def test_terminate_kills_after_the_grace(tmp_path: Path, registry: ProcessRegistry) -> None:
    out = Collected()
    handle = start_process(
        spec("trap '' TERM; echo ready; sleep 600", tmp_path), out, registry=registry
    )
    waiter = Waiter(handle)
    assert out.when("ready").wait(HANG_LIMIT_S)
    handle.terminate(100)
    result = waiter.result()
    assert (result.exit_code, result.signal) == (137, signal.SIGKILL)


def test_signal_all_reaches_each_group_once(tmp_path: Path, registry: ProcessRegistry) -> None:
    command = (
        "trap 'echo usr1' USR1; trap 'echo usr2' USR2; echo ready; while :; do sleep 0.05; done"
    )
    outs = [Collected(), Collected()]
    handles = [start_process(spec(command, tmp_path), o, registry=registry) for o in outs]
    waiters = [Waiter(h) for h in handles]
    for out in outs:
        assert out.when("ready").wait(HANG_LIMIT_S)
    assert registry.live() == tuple(sorted(h.pgid for h in handles))
    assert registry.signal_all(signal.SIGUSR1) == 2
    assert registry.signal_all(signal.SIGUSR1) == 0
    for out in outs:
        assert out.when("usr1").wait(HANG_LIMIT_S)
    assert registry.signal_all(signal.SIGUSR2) == 2
    for out in outs:
        assert out.when("usr2").wait(HANG_LIMIT_S)
    assert registry.kill_all() == 2
    assert [w.result().exit_code for w in waiters] == [137, 137]
    for out in outs:
        assert out.text().count("usr1") == 1
    for handle in handles:
        assert_group_gone(handle.pgid)


@pytest.mark.parametrize(("stop", "code"), [("signal_all", 143), ("kill_all", 137)])
def test_a_group_spawned_after_a_stop_gets_it_at_once(tmp_path: Path, stop: str, code: int) -> None:
    registry = ProcessRegistry()
    if stop == "signal_all":
        assert registry.signal_all(signal.SIGTERM) == 0
    else:
        assert registry.kill_all() == 0
    result, _, _ = run("sleep 600", tmp_path, registry)
    assert result.exit_code == code


def test_terminate_all(tmp_path: Path, registry: ProcessRegistry) -> None:
    outs = [Collected(), Collected()]
    handles = [
        start_process(spec("echo ready; sleep 600", tmp_path), o, registry=registry) for o in outs
    ]
    assert registry.terminate_all(5000) == 2
    assert [wait_bounded(h).exit_code for h in handles] == [143, 143]


def test_an_output_callback_that_raises_kills_the_group(
    tmp_path: Path, registry: ProcessRegistry
) -> None:
    def explode(stream: Stream, text: str) -> None:
        raise RuntimeError(text)

    handle = start_process(
        spec("sleep 600 & echo boom; sleep 600", tmp_path), explode, registry=registry
    )
    with pytest.raises(RuntimeError, match="boom"):
        wait_bounded(handle)
    assert_group_gone(handle.pgid)


@pytest.mark.parametrize(
    ("cwd", "command", "reason"),
    [
        ("missing", "true", "No such file or directory"),
        (".", "echo a\0b", "null"),
    ],
)
def test_a_failed_spawn(
    tmp_path: Path, registry: ProcessRegistry, cwd: str, command: str, reason: str
) -> None:
    where = tmp_path / cwd
    with pytest.raises(SpawnError, match=reason):
        start_process(spec(command, where), Collected(), registry=registry)
    result = run_process(spec(command, where), Collected(), registry=registry)
    assert result.exit_code == 127
    assert result.spawn_error is not None
    assert reason in result.spawn_error
    assert str(where) in result.spawn_error


@pytest.mark.parametrize("kwargs", [{"timeout_ms": 0}, {"kill_grace_ms": -1}])
def test_spec_invariants(tmp_path: Path, kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="must"):
        spec("true", tmp_path, **kwargs)


INHERIT_SCENARIO = """
import os
from pathlib import Path
from vx.run.process import ProcessSpec, run_process
from vx.run.groups.registry import ProcessRegistry
spec = ProcessSpec('read line; echo "got $line"; echo to-err >&2', Path.cwd(), dict(os.environ), interactive=True)
result = run_process(spec, lambda stream, text: None, registry=ProcessRegistry())
print(f"exit={result.exit_code}")
"""


def test_an_interactive_task_off_a_terminal_inherits_stdio(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", INHERIT_SCENARIO],
        input="hello\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=HANG_LIMIT_S,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "got hello\nexit=0\n", "to-err\n")


PTY_SCENARIO = """
import fcntl, os, termios
from pathlib import Path
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
from vx.run.process import ProcessSpec, run_process
from vx.run.groups.registry import ProcessRegistry
command = (
    'printf "name? "; read name; echo "hello $name"; '
    'trap "echo task-got-int; exit 7" INT; echo waiting; while :; do sleep 0.05; done'
)
spec = ProcessSpec(command, Path.cwd(), dict(os.environ), interactive=True)
result = run_process(spec, lambda stream, text: None, registry=ProcessRegistry())
print(f"result exit={result.exit_code} front={os.tcgetpgrp(0) == os.getpgrp()}", flush=True)
"""


def _expect(fd: int, needle: str) -> str:
    seen = b""
    while needle.encode() not in seen:
        ready, _, _ = select.select([fd], [], [], HANG_LIMIT_S)
        assert ready, f"no {needle!r} on the terminal; saw {seen!r}"
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: every slave end is closed
            data = b""
        assert data, f"the terminal closed before {needle!r}; saw {seen!r}"
        seen += data
    return seen.decode(errors="replace")


def test_an_interactive_task_owns_the_terminal_and_its_ctrl_c(tmp_path: Path) -> None:
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", PTY_SCENARIO],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        start_new_session=True,
    )
    os.close(slave)
    try:
        transcript = _expect(master, "name? ")
        os.write(master, b"world\n")
        transcript += _expect(master, "waiting")
        os.write(master, b"\x03")
        transcript += _expect(master, "front=True")
        proc.wait(HANG_LIMIT_S)
    finally:
        proc.kill()
        os.close(master)
    assert "hello world" in transcript
    assert "task-got-int" in transcript
    assert "result exit=7 front=True" in transcript
    assert "KeyboardInterrupt" not in transcript
    assert proc.returncode == 0


@pytest.mark.parametrize(
    ("argv", "keep_stderr", "expected"),
    [
        (["sh", "-c", "printf out; printf err >&2; exit 3"], False, (3, b"out", b"")),
        (["sh", "-c", "printf out; printf err >&2"], True, (0, b"out", b"err")),
        (["sh", "-c", "kill -TERM $$"], False, (-signal.SIGTERM, b"", b"")),
    ],
)
def test_a_short_command_is_captured(
    tmp_path: Path, argv: list[str], keep_stderr: bool, expected: tuple[int, bytes, bytes]
) -> None:
    done = run_captured(
        argv, cwd=tmp_path, env=ENV, timeout_s=HANG_LIMIT_S, keep_stderr=keep_stderr
    )
    assert done is not None
    assert (done.returncode, done.stdout, done.stderr) == expected


def test_a_short_command_past_its_deadline_dies_with_its_session(tmp_path: Path) -> None:
    pgid_file, child_file = tmp_path / "pgid", tmp_path / "child"
    command = f"echo $$ > {pgid_file}; sleep 600 & echo $! > {child_file}; wait"
    assert run_captured(["sh", "-c", command], env=ENV, timeout_s=0.5) is None
    pgid, child = int(pgid_file.read_text()), int(child_file.read_text())
    # The orphaned sleep is reaped by whoever adopted it: this process when an earlier test
    # made it a subreaper (the registry does), else init, which is waited for.
    with contextlib.suppress(ChildProcessError):
        os.waitpid(child, 0)
    deadline = time.monotonic() + HANG_LIMIT_S
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        select.select([], [], [], 0.01)
    assert_group_gone(pgid)


def test_a_short_command_that_cannot_start(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="No such file"):
        run_captured([str(tmp_path / "missing")], timeout_s=HANG_LIMIT_S)
