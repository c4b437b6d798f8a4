"""`--executor reapi`: a cacheable task runs as a REAPI action on the server's workers.

The action's input root is what the task's key vouches for (its declared files, manifests
and lockfiles), the outputs of every task it depends on, and the toolchain it needs (each
node_modules on its way, symlinks kept); its outputs come back through the CAS onto the
workspace, where the executor saves them as it saves a local run's, so the entry lands in
the local cache and in the remote cache layer alike. Persistent, interactive and uncached
tasks never come here: they run on this machine.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx.cache.key import Kind
from vx.cache.outputs import output_paths
from vx.cache.remote.base import RemoteError
from vx.errors import ErrorCode, UserError
from vx.events import Stream
from vx.remoteexec.client import ActionSpec, RemoteExecutor, output_roots
from vx.run.process import ProcessResult

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping

    from vx.ids import TaskId
    from vx.run.keys import KeySet
    from vx.run.localcache import LocalCache
    from vx.run.plan import PlanNode, RunPlan
    from vx.run.process import ProcessSpec

_INPUT_KINDS = frozenset({Kind.FILE, Kind.WORKSPACE, Kind.PACKAGE, Kind.LOCKFILE})
_TOOLCHAIN = "node_modules"


class Offload:
    """Sends the run's cacheable tasks to one REAPI server; safe across worker threads."""

    def __init__(
        self, plan: RunPlan, keys: KeySet, cache: LocalCache, remote: RemoteExecutor
    ) -> None:
        self.plan = plan
        self.keys = keys
        self.cache = cache
        self.remote = remote
        self.root = plan.workspace.root

    def takes(self, node: PlanNode) -> bool:
        spec = node.task.exec_spec
        return (
            spec is not None
            and not spec.interactive
            and not spec.persistent
            and node.task.cache_spec is not None
            and self.cache.cached(node.id)
        )

    def run(
        self,
        node: PlanNode,
        pspec: ProcessSpec,
        on_output: Callable[[Stream, str], None],
        stopping: threading.Event,
    ) -> ProcessResult:
        """Execute remotely and land the outputs; a server that fails it reads as exit 1."""
        cwd = self._rel(node.project.dir)
        base, patterns, _ = self.cache.output_globs(node)
        outputs = tuple(
            os.path.relpath(os.path.join(base, r), node.project.dir)  # noqa: PTH118
            for r in output_roots(patterns)
        )
        spec = ActionSpec(
            command=pspec.command,
            env=tuple(sorted(pspec.env.items())),
            cwd=cwd,
            files=self._files(node.id),
            dirs=self._toolchain(node),
            outputs=outputs,
            timeout_ms=pspec.timeout_ms,
        )
        try:
            done = self.remote.execute(spec, stopping)
        except RemoteError as err:
            return ProcessResult(exit_code=1, duration_ms=0.0, spawn_error=f"[vx] remote: {err}")
        if done.stdout:
            on_output(Stream.STDOUT, done.stdout)
        if done.stderr:
            on_output(Stream.STDERR, done.stderr)
        error = f"[vx] remote execution: {done.error}" if done.error else None
        return ProcessResult(
            exit_code=done.exit_code, duration_ms=done.duration_ms, spawn_error=error
        )

    def _files(self, tid: TaskId) -> tuple[str, ...]:
        """What the key vouches for, and every file a dependency (near or far) produced."""
        own = [c.name for c in self.keys.components[tid] if c.kind in _INPUT_KINDS]
        seen: set[TaskId] = set()
        pending = list(self.plan.graph.deps[tid])
        while pending:
            dep = pending.pop()
            if dep in seen or dep not in self.plan.nodes:
                continue
            seen.add(dep)
            pending.extend(self.plan.graph.deps[dep])
            node = self.plan.nodes[dep]
            if node.task.cache_spec is None:
                continue
            base, patterns, stops = self.cache.output_globs(node)
            rel = self._rel(base)
            found = output_paths(base, patterns, stop_at=stops)
            own.extend(path if rel == "." else f"{rel}/{path}" for path in found)
        return tuple(dict.fromkeys(own))

    def _toolchain(self, node: PlanNode) -> tuple[str, ...]:
        """Each node_modules from the workspace root down to the task's project."""
        rel = self._rel(node.project.dir)
        parts = [] if rel == "." else rel.split("/")
        found = []
        for depth in range(len(parts) + 1):
            here = "/".join([*parts[:depth], _TOOLCHAIN])
            if (self.root / here).is_dir():
                found.append(here)
        return tuple(found)

    def _rel(self, path: os.PathLike[str] | str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")


def open_offload(plan: RunPlan, keys: KeySet, cache: LocalCache, env: Mapping[str, str]) -> Offload:
    """The run's remote executor at VX_REAPI_URL; a UserError when it cannot be one."""
    url = env.get("VX_REAPI_URL", "")
    if not url:
        msg = "vx run: --executor reapi needs a server: set VX_REAPI_URL=grpc://host:port"
        raise UserError(ErrorCode.USAGE, msg)
    try:
        from vx.cache.remote.reapi import ReapiCache, ReapiConfig

        cas = ReapiCache(ReapiConfig(url, env.get("VX_REAPI_INSTANCE", "")))
    except ImportError:
        msg = (
            "vx run: --executor reapi needs grpcio (not installed) — pip install 'vx-runner[reapi]'"
        )
        raise UserError(ErrorCode.CONFIG, msg) from None
    except ValueError as err:
        msg = f"vx run: VX_REAPI_URL: {err} — set grpc://host:port"
        raise UserError(ErrorCode.USAGE, msg) from None
    return Offload(plan, keys, cache, RemoteExecutor(cas, plan.workspace.root))
