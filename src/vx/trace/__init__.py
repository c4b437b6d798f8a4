"""The task tracer: what a task's whole process tree opened, wrote, ran, renamed and removed.

A small, stable API (other engines build on it; change it only with a commit message saying so;
this commit changed it: one observer for both tracers in place of strace's prefix and log):

- `vx.trace.probe.tracing_available(path, tracer) -> Probe(ok, reason, tracer=…)`: which
  tracer works on this host (vx's seccomp notifier, else `strace`; `tracer` is the `VX_TRACER`
  choice), probed once per process.
- `vx.trace.observer.observer(cwd, path=, tracer=) -> Observer`: one command to trace. Its
  `prefix` and `pass_fds` go to `run/process.py` (the one spawner), `spawned()` after the spawn,
  `finish() -> Trace(reads, writes, execs, renames, unlinks) | None` after the exit: absolute
  paths, each resolved against the working directory of the process that named it.
- `vx.trace.probe.sandbox_available() -> Probe(ok, reason)`: whether `bwrap` can start here;
  `vx.trace.sandbox.sandbox_prefix(root, project, read, write)` the argv that runs a command
  inside it (`exec.sandbox`), a prefix like strace's.

Nothing here is imported by a run that neither audits nor sandboxes.
"""
