"""The dev servers `vx watch` keeps up across cycles, and when one must be started again.

A cycle hands its ready requested servers over running (`RunOptions.keep_servers`) instead of
holding the run open. The next cycle keeps them when their task config and forwarded args are
what they were and they are alive: it then asks the run only for what they depend on, so the
libraries an edit reaches are rebuilt and the server stays up. Otherwise the old servers are
stopped first (grace, then SIGKILL) and the cycle runs as asked, starting them again.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vx.ids import TaskId
    from vx.run.plan import RunPlan
    from vx.run.servers import HeldServers


def _servers(plan: RunPlan) -> dict[TaskId, str]:
    """Each requested persistent task's identity: what it runs and how, args included."""
    found: dict[TaskId, str] = {}
    for node in plan.nodes.values():
        spec = node.task.exec_spec
        if node.surfaced and spec is not None and spec.persistent:
            found[node.id] = repr((node.command, spec, sorted(node.task.resolved.items())))
    return found


class Keeper:
    """The servers the last full cycle left running, with the identity each started under."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: HeldServers | None = None
        self._identity: dict[TaskId, str] = {}
        self._said: set[TaskId] = set()

    @property
    def holding(self) -> bool:
        """Some server is held (alive or not yet noticed dead)."""
        return self._held is not None

    def take(self, held: HeldServers) -> None:
        """`RunOptions.keep_servers`: the run hands its ready servers over."""
        with self._lock:
            self._held = held
            self._said.clear()

    def started_under(self, plan: RunPlan | None) -> None:
        """Remember the identity the held servers started under (the plan of the run that did)."""
        self._identity = _servers(plan) if plan is not None else {}

    def keeping_words(self, plan: RunPlan) -> tuple[str, ...] | None:
        """The task words a cycle asks for while the servers stay up, or None to restart them.

        Each kept server stands in for itself: its dependencies are asked for instead, and the
        other requested tasks as they are. None when a server died, its identity changed, or
        the set of requested servers did.
        """
        held = self._held
        if held is None or held.dead() or _servers(plan) != self._identity:
            return None
        kept = {s.id for s in held.servers}
        if kept != set(self._identity):
            return None
        words: list[str] = []
        for tid in plan.graph.requested:
            if tid in kept:
                words.extend(str(dep) for dep in plan.graph.deps[tid])
            else:
                words.append(str(tid))
        return tuple(dict.fromkeys(words))

    def deaths(self) -> list[str]:
        """A line for each held server that exited since the last look, once."""
        held = self._held
        if held is None:
            return []
        lines = []
        for server in held.dead():
            if server.id in self._said:
                continue
            self._said.add(server.id)
            code = server.result.exit_code if server.result is not None else 1
            lines.append(f"vx: {server.id} exited with code {code}")
        return lines

    def stop(self, signo: int | None = None) -> None:
        """Stop every held server (signo first, when vx itself was signalled)."""
        with self._lock:
            held, self._held = self._held, None
        self._identity = {}
        if held is not None:
            held.stop(signo)
