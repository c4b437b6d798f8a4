"""The plan digest: what every shard of one CI run must agree on before it does any work."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from vx.ids import TaskId

DIGEST_VERSION = "1"


def plan_digest(
    tasks: Iterable[tuple[TaskId, str, bool]], *, shards: int, flags: Iterable[str]
) -> str:
    """16 hex digits over every task's id, key and whether it runs, the shard count, and the
    flags that change what a shard does with a task (`--force`, `--cache`…).

    Keys already cover commands, inputs and forwarded args, so two shards at different
    commits, or asked for different tasks, get different digests; the shard's own index is
    left out, since every shard of a run must compute the same one.
    """
    h = hashlib.sha256(f"vx-shard-plan {DIGEST_VERSION}\n".encode())
    h.update(f"shards {shards}\n".encode())
    for flag in sorted(flags):
        h.update(f"flag {flag}\n".encode())
    for tid, key, runs in sorted(tasks, key=lambda t: (t[0].project, t[0].task)):
        h.update(f"task {tid.project}#{tid.task} {key} {int(runs)}\n".encode())
    return h.hexdigest()[:16]
