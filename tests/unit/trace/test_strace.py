"""The tracer: real `strace` following real `sh` trees started through `run/process.py`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from vx.run.groups.registry import ProcessRegistry
from vx.run.process import ProcessSpec, run_process
from vx.trace.parse import parse_lines, parse_log
from vx.trace.probe import tracing_available
from vx.trace.strace import strace_prefix

ENV = {"PATH": os.environ.get("PATH", os.defpath)}
needs_strace = pytest.mark.skipif(
    not tracing_available().ok, reason=f"no tracer here: {tracing_available().reason}"
)


def _traced(command: str, cwd: Path, log: Path) -> int:
    spec = ProcessSpec(command, cwd, ENV, prefix=strace_prefix(log))
    return run_process(spec, lambda _s, _t: None, registry=ProcessRegistry()).exit_code


@needs_strace
def test_paths_resolve_against_each_processes_own_cwd(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "in.txt").write_text("x")
    (tmp_path / "b" / "other.txt").write_text("y")
    script = (
        "cd a && cat in.txt > out.txt && (cd ../b && cat other.txt >/dev/null) "
        "&& mv out.txt moved.txt && rm moved.txt && sh -c 'cat ../b/other.txt' >/dev/null"
    )
    log = tmp_path / "trace.log"
    assert _traced(script, tmp_path, log) == 0
    trace = parse_log(log, tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    assert {str(a / "in.txt"), str(b / "other.txt")} <= trace.reads
    assert str(a / "out.txt") in trace.writes
    assert trace.renames == ((str(a / "out.txt"), str(a / "moved.txt")),)
    assert {str(a / "out.txt"), str(a / "moved.txt")} <= trace.unlinks
    assert shutil.which("cat") in trace.execs or any(e.endswith("/cat") for e in trace.execs)


@needs_strace
def test_the_exit_code_is_the_commands(tmp_path: Path) -> None:
    assert _traced("exit 7", tmp_path, tmp_path / "t.log") == 7


@needs_strace
@pytest.mark.skipif(not Path("/bin/busybox").exists(), reason="busybox-static is not installed")
def test_a_static_binary_is_seen(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("z")
    log = tmp_path / "t.log"
    assert _traced("/bin/busybox cat data.txt > /dev/null", tmp_path, log) == 0
    trace = parse_log(log, tmp_path)
    assert str(tmp_path / "data.txt") in trace.reads
    assert "/bin/busybox" in trace.execs


def test_joins_unfinished_halves_and_follows_a_child_seen_before_its_fork_returns() -> None:
    log = [
        '10 chdir("/w/pkg") = 0\n',
        "10 vfork( <unfinished ...>\n",
        '11 openat(AT_FDCWD, "src/a.ts", O_RDONLY <unfinished ...>\n',
        "10 <... vfork resumed>) = 11\n",
        "11 <... openat resumed>) = 3\n",
        '11 openat(AT_FDCWD, "/w/pkg/lib", O_RDONLY|O_DIRECTORY) = 4\n',
        '11 openat(4, "x\\"y\\303\\251.js", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 5\n',
        "11 fchdir(4) = 0\n",
        '11 unlinkat(AT_FDCWD, "old.js", 0) = 0\n',
        '10 openat(AT_FDCWD, "gone", O_RDONLY) = -1 ENOENT (No such file or directory)\n',
        '10 execve("./bin/tool", ["tool"], 0x1 /* 3 vars */) = 0\n',
    ]
    trace = parse_lines(log, "/w")
    assert trace.reads == {"/w/pkg/src/a.ts"}
    assert trace.writes == {'/w/pkg/lib/x"yé.js'}
    assert trace.unlinks == {"/w/pkg/lib/old.js"}
    assert trace.execs == {"/w/pkg/bin/tool"}
