"""The task tracer: what a task's whole process tree opened, wrote, ran, renamed and removed.

A small, stable API (other engines build on it; change it only with a commit message saying so):

- `vx.trace.probe.tracing_available() -> Probe(ok, reason)`: whether `strace` can follow a
  process tree on this host, probed once per process.
- `vx.trace.strace.strace_prefix(log) -> tuple[str, ...]`: the argv to put before a command so
  `run/process.py` (the one spawner) starts it under the tracer, writing its log to `log`.
- `vx.trace.parse.parse_log(log, cwd) -> Trace(reads, writes, execs, renames, unlinks)`: the
  log read back as absolute paths, each resolved against the working directory of the process
  that named it (chdir, fchdir, fork, vfork and clone followed per pid).
- `vx.trace.probe.sandbox_available() -> Probe(ok, reason)`: whether `bwrap` can start here.

Nothing here is imported by a run that neither audits nor sandboxes.
"""
