"""Both tracers, vx's seccomp notifier and strace, following real `sh` trees started through
`run/process.py`: the same paths, resolved the same way, from dynamic and static programs."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from vx.run.groups.registry import ProcessRegistry
from vx.run.process import ProcessSpec, run_process
from vx.trace.observer import TracingUnavailableError, observer
from vx.trace.probe import tracing_available

if TYPE_CHECKING:
    from vx.trace.parse import Trace

ENV = {"PATH": os.environ.get("PATH", os.defpath)}
TRACERS = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(
            not tracing_available(None, name).ok,
            reason=f"{name} cannot trace here: {tracing_available(None, name).reason}",
        ),
    )
    for name in ("seccomp", "strace")
]


def _traced(command: str, cwd: Path, tracer: str) -> tuple[int, Trace | None]:
    watch = observer(cwd, tracer=tracer)
    spec = ProcessSpec(command, cwd, ENV, prefix=watch.prefix, pass_fds=watch.pass_fds)
    try:
        code = run_process(spec, lambda _s, _t: None, registry=ProcessRegistry()).exit_code
    finally:
        watch.spawned()
    return code, watch.finish()


@pytest.mark.parametrize("tracer", TRACERS)
def test_paths_resolve_against_each_processes_own_cwd(tmp_path: Path, tracer: str) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "in.txt").write_text("x")
    (tmp_path / "b" / "other.txt").write_text("y")
    script = (
        "cd a && cat in.txt > out.txt && (cd ../b && cat other.txt >/dev/null) "
        "&& mv out.txt moved.txt && rm moved.txt && sh -c 'cat ../b/other.txt' >/dev/null"
    )
    code, trace = _traced(script, tmp_path, tracer)
    assert code == 0
    assert trace is not None
    a, b = tmp_path / "a", tmp_path / "b"
    assert {str(a / "in.txt"), str(b / "other.txt")} <= trace.reads
    assert str(a / "out.txt") in trace.writes
    assert trace.renames == ((str(a / "out.txt"), str(a / "moved.txt")),)
    assert {str(a / "out.txt"), str(a / "moved.txt")} <= trace.unlinks
    assert shutil.which("cat") in trace.execs or any(e.endswith("/cat") for e in trace.execs)


@pytest.mark.parametrize("tracer", TRACERS)
def test_descriptor_relative_calls_and_failed_calls(tmp_path: Path, tracer: str) -> None:
    """`*at` calls name paths against a directory descriptor; a failed open changed nothing."""
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "in.txt").write_text("x")
    program = (
        "import os\n"
        "d = os.open('d', os.O_RDONLY | os.O_DIRECTORY)\n"
        "os.close(os.open('in.txt', os.O_RDONLY, dir_fd=d))\n"
        "os.close(os.open('made.txt', os.O_WRONLY | os.O_CREAT, dir_fd=d))\n"
        "os.rename('made.txt', 'kept.txt', src_dir_fd=d, dst_dir_fd=d)\n"
        "try:\n    os.open('missing.txt', os.O_RDONLY, dir_fd=d)\n"
        "except FileNotFoundError:\n    pass\n"
    )
    (tmp_path / "p.py").write_text(program)
    code, trace = _traced(f"{sys.executable} -I -S p.py", tmp_path, tracer)
    assert code == 0
    assert trace is not None
    d = tmp_path / "d"
    assert str(d / "in.txt") in trace.reads
    assert str(d / "missing.txt") not in trace.reads
    assert str(d / "kept.txt") in trace.writes
    assert (str(d / "made.txt"), str(d / "kept.txt")) in trace.renames
    assert str(tmp_path / "p.py") in trace.reads
    assert str(d) not in trace.reads  # a directory opened for its entries is no read


@pytest.mark.parametrize("tracer", TRACERS)
def test_the_exit_code_is_the_commands(tmp_path: Path, tracer: str) -> None:
    code, trace = _traced("exit 7", tmp_path, tracer)
    assert code == 7
    assert trace is not None


@pytest.mark.parametrize("tracer", TRACERS)
@pytest.mark.skipif(not Path("/bin/busybox").exists(), reason="busybox-static is not installed")
def test_a_static_binary_is_seen(tmp_path: Path, tracer: str) -> None:
    (tmp_path / "data.txt").write_text("z")
    code, trace = _traced("/bin/busybox cat data.txt > /dev/null", tmp_path, tracer)
    assert code == 0
    assert trace is not None
    assert str(tmp_path / "data.txt") in trace.reads
    assert "/bin/busybox" in trace.execs


@pytest.mark.parametrize("tracer", TRACERS)
def test_a_spawn_that_never_ran_says_so(tmp_path: Path, tracer: str) -> None:
    watch = observer(tmp_path, tracer=tracer)
    watch.spawned()  # the spawn failed before the command started
    assert watch.finish() is None
    assert watch.reason


def test_an_unknown_tracer_choice_is_refused_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(TracingUnavailableError, match=r"^VX_TRACER=ptrace is not one of"):
        observer(tmp_path, tracer="ptrace")


@pytest.mark.parametrize("tracer", TRACERS)
def test_a_leftover_keeps_running_after_the_task_is_judged(tmp_path: Path, tracer: str) -> None:
    """A process the task leaves behind is served, unrecorded, until it ends on its own."""
    (tmp_path / "in.txt").write_text("x")
    done = tmp_path / "done"
    late = f"sleep 0.3; cat in.txt > {done}.part && mv {done}.part {done}"
    script = f"(setsid sh -c '{late}' &) ; cat in.txt > /dev/null"
    code, trace = _traced(script, tmp_path, tracer)
    assert code == 0
    assert trace is not None
    assert str(tmp_path / "in.txt") in trace.reads
    deadline = time.monotonic() + 60
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done.read_text() == "x"


@pytest.mark.parametrize("tracer", TRACERS)
def test_within_keeps_only_paths_under_its_directories(tmp_path: Path, tracer: str) -> None:
    inside, outside = tmp_path / "ws", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    (inside / "in.txt").write_text("x")
    (outside / "out.txt").write_text("y")
    script = f"cat in.txt {outside}/out.txt > /dev/null && echo z > {outside}/m && mv {outside}/m m"
    watch = observer(inside, tracer=tracer, within=(str(inside),))
    spec = ProcessSpec(script, inside, ENV, prefix=watch.prefix, pass_fds=watch.pass_fds)
    try:
        assert run_process(spec, lambda _s, _t: None, registry=ProcessRegistry()).exit_code == 0
    finally:
        watch.spawned()
    trace = watch.finish()
    assert trace is not None
    assert trace.reads == {str(inside / "in.txt")}
    assert trace.execs == frozenset()  # cat and mv live outside
    assert trace.renames == ((str(outside / "m"), str(inside / "m")),)
    assert str(inside / "m") in trace.writes
