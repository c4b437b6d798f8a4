"""`vx init --observe`'s engine: run each new task twice, in dependency order, under the tracer,
and judge from what it did which cache block it needs (derive.py).

The first run says what the task reads and writes; the second, with the same inputs, says
whether it writes the same bytes again: a task whose outputs differ (a timestamp, a random
chunk name) would restore something no fresh build makes, so it stays uncached. Nothing is
deleted between the runs: a file git tracks is never touched, and a task that rewrites its
outputs shows its nondeterminism all the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from typing import TYPE_CHECKING

from vx.git import ls_files_stage
from vx.graph.algo import topo_order
from vx.graph.build import build_graph
from vx.ids import TaskId
from vx.loader.assemble import load_workspace
from vx.observe.derive import Seen, Verdict, derive, differing, state_path
from vx.run.groups.registry import ProcessRegistry
from vx.run.process import ProcessSpec, run_process
from vx.run.taskenv import task_env
from vx.trace.observer import observer
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path

    from vx.events import Stream
    from vx.graph.model import TaskNode
    from vx.trace.parse import Trace
    from vx.workspace.model import Project, TaskDef, Workspace

_KILL_GRACE_MS = 2000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # a task's colours (it runs with FORCE_COLOR=1)


class ObserveRequest(Record):
    """Which tasks to observe: those of the configs at `configs` (root-relative paths) that run
    a command, serve nothing and have no cache block, minus the names in `never` (tasks that
    publish, deploy or rewrite the repo). `env` is vx's own environment, as a run gets it."""

    cwd: Path
    configs: frozenset[str]
    never: frozenset[str]
    env: Mapping[str, str]


class Observed(Record):
    """One task's outcome: its id, its package directory and name, and the verdict."""

    task_id: str
    rel_dir: str
    task: str
    verdict: Verdict


def observe(request: ObserveRequest, started: Callable[[str], None]) -> tuple[Observed, ...]:
    """Run the chosen tasks in dependency order; `started` is told each task id as it begins."""
    ws = load_workspace(request.cwd)
    chosen = [
        TaskId(p.name, t.name)
        for p in ws.projects
        if p.config is not None and p.config.path in request.configs
        for t in p.tasks.values()
        if _observable(t, request.never)
    ]
    if not chosen:
        return ()
    graph = build_graph(ws, chosen)
    wanted = set(chosen)
    tracked = frozenset(ls_files_stage(ws.root, env=request.env))
    registry = ProcessRegistry()
    out: list[Observed] = []
    wrote: set[str] = set()
    try:
        for tid in topo_order(graph.deps):
            if tid not in wanted:
                continue
            started(str(tid))
            node = graph.nodes[tid]
            runs = _Runs(ws, node, request.env, registry)
            verdict = _judge(runs, tracked, frozenset(wrote))
            wrote.update(runs.written)
            out.append(Observed(str(tid), node.project.rel_dir, tid.task, verdict))
    finally:
        registry.close(_KILL_GRACE_MS)
    return tuple(out)


def _observable(task: TaskDef, never: frozenset[str]) -> bool:
    spec = task.exec_spec
    if spec is None or spec.persistent or spec.interactive or task.cache_spec is not None:
        return False
    return task.name not in never


def _judge(runs: _Runs, tracked: frozenset[str], others_wrote: frozenset[str]) -> Verdict:
    existing = runs.files_now()
    saved = runs.save(existing & tracked)
    first = runs.run()
    touched = sorted((runs.written | first.removed) & tracked)
    if touched:
        kept = runs.put_back(saved, touched)
        more = f" and {len(touched) - 1} more" if len(touched) > 1 else ""
        left = "" if kept else "; vx put back only files inside its package, see git status"
        return Verdict(None, f"it changes {touched[0]}{more}, which git tracks{left}")
    if first.exit_code != 0:
        return Verdict(None, f"it failed when observed (exit {first.exit_code}{first.said})")
    before = runs.digests()
    second = runs.run()
    if second.exit_code != 0:
        why = f"exit {second.exit_code}{second.said}"
        return Verdict(None, f"it failed when run a second time ({why})")
    changed = differing(before, runs.digests())
    if changed:
        return Verdict(
            None, f"its outputs differ between two runs of the same inputs ({changed[0]})"
        )
    seen = Seen(
        package=runs.project.rel_dir,
        reads=first.reads,
        written=runs.written,
        tracked=tracked,
        existing=existing,
        others_wrote=others_wrote,
    )
    return derive(seen)


class _Outcome(Record):
    exit_code: int
    reads: frozenset[str]
    removed: frozenset[str] = frozenset()
    said: str = ""  # ": " and the last line of its output, to name a failure


class _Runs:
    """One task's traced runs; `written` gathers what they left on disk, root-relative."""

    def __init__(
        self,
        ws: Workspace,
        node: TaskNode,
        env: Mapping[str, str],
        registry: ProcessRegistry,
    ) -> None:
        self.ws = ws
        self.project: Project = node.project
        self.node = node
        self.env = env
        self.registry = registry
        self.written: frozenset[str] = frozenset()
        self._bases = tuple(dict.fromkeys((os.fspath(ws.root), os.path.realpath(ws.root))))

    def run(self) -> _Outcome:
        spec = self.node.task.exec_spec
        assert spec is not None  # noqa: S101 - _observable chose tasks with a command
        env = task_env(
            base=self.env,
            exec_spec=spec,
            project_dir=self.project.dir,
            root=self.ws.root,
            task_id=str(self.node.id),
            workspace_pass_through=self.ws.config.pass_through,
        )
        timeout = spec.timeout_ms if spec.timeout_ms is not None else self.ws.config.timeout_ms
        watcher = observer(
            self.project.dir,
            path=self.env.get("PATH"),
            tracer=self.env.get("VX_TRACER", "auto"),
            within=self._bases,
        )
        process = ProcessSpec(
            command=spec.command,
            cwd=self.project.dir,
            env=env.env,
            timeout_ms=timeout,
            kill_grace_ms=_KILL_GRACE_MS,
            prefix=watcher.prefix,
            pass_fds=watcher.pass_fds,
        )
        tail = _Tail()
        try:
            result = run_process(process, tail, registry=self.registry)
        finally:
            watcher.spawned()
        said = f": {tail.last}" if tail.last else ""
        trace = watcher.finish()
        if trace is None:
            return _Outcome(result.exit_code or 1, frozenset(), said=said)
        self.written |= self._left(trace)
        reads, removed = self._relative(trace.reads), self._relative(trace.unlinks)
        return _Outcome(result.exit_code, frozenset(reads), frozenset(removed), said)

    def save(self, files: frozenset[str]) -> dict[str, tuple[bytes, int]]:
        """The bytes and mode of the package's tracked files, to put back what a run changes."""
        saved = {}
        for rel in files:
            path = self.ws.root / rel
            with contextlib.suppress(OSError):
                saved[rel] = (path.read_bytes(), path.stat().st_mode & 0o7777)
        return saved

    def put_back(self, saved: Mapping[str, tuple[bytes, int]], files: Iterable[str]) -> bool:
        """Restore `files` from `saved`; False when some were not saved (outside the package)."""
        from vx.util.atomic import write_atomic

        whole = True
        for rel in files:
            if rel in saved:
                data, mode = saved[rel]
                write_atomic(self.ws.root / rel, data, mode=mode)
            else:
                whole = False
        return whole

    def _left(self, trace: Trace) -> frozenset[str]:
        """The files the run wrote that are still there (a temp renamed away is not)."""
        return frozenset(
            rel
            for rel in self._relative(trace.writes)
            if (self.ws.root / rel).is_file() and not state_path(rel)
        )

    def _relative(self, paths: Iterable[str]) -> list[str]:
        out = []
        for path in paths:
            for base in self._bases:
                if path.startswith(base + os.sep):
                    out.append(path[len(base) + 1 :].replace(os.sep, "/"))
                    break
        return out

    def digests(self) -> dict[str, str]:
        return {rel: _digest(self.ws.root / rel) for rel in self.written}

    def files_now(self) -> frozenset[str]:
        """Every file in the package before it runs, outside dependency and tool state."""
        found: set[str] = set()
        top = self.project.dir
        for directory, dirs, files in os.walk(top):
            rel_dir = os.path.relpath(directory, self.ws.root).replace(os.sep, "/")
            dirs[:] = [d for d in dirs if not state_path(f"{d}/x")]
            prefix = "" if rel_dir == "." else f"{rel_dir}/"
            found.update(f"{prefix}{name}" for name in files)
        return frozenset(found)


class _Tail:
    """A task's output while it is observed: only its last line is kept, to name a failure
    in the reason init writes (the whole log is a plain `vx run` away)."""

    _LONGEST = 120

    def __init__(self) -> None:
        self.last = ""

    def __call__(self, stream: Stream, text: str) -> None:  # noqa: ARG002 - either stream
        plain = _ANSI.sub("", text)
        lines = [line.strip() for line in plain.splitlines() if line.strip()]
        if lines:
            line = lines[-1]
            self.last = line if len(line) <= self._LONGEST else line[: self._LONGEST - 1] + "…"


def _digest(path: Path) -> str:
    try:
        if path.is_symlink():
            return f"link:{path.readlink()}"
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "gone"
