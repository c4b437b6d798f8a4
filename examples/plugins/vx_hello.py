"""An example vx plugin: a `hello` verb and a telemetry hook that counts finished tasks.

Declare it in vx.workspace.json as `"plugins": ["vx_hello:plugin"]` with this file at the
workspace root (or installed), then run `vx hello` or `vx hello Ada`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx.plugins import Command, CommandContext, Plugin

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vx.events import Event


def hello(argv: Sequence[str], ctx: CommandContext) -> int:
    """Greet whoever argv names; `vx hello --fail` shows how a plugin verb fails."""
    if "--fail" in argv:
        ctx.warn("asked to fail")
        return 3
    name = argv[0] if argv else "world"
    ctx.out.write(f"hello, {name}, from {ctx.workspace_root.name}\n")
    return 0


def count_finished(event: Event) -> None:
    """Append one line per finished task to the file VX_HELLO_LOG names, if it names one."""
    from vx.events import TaskFinished

    log = os.environ.get("VX_HELLO_LOG")
    if log and isinstance(event, TaskFinished):
        with open(log, "a", encoding="utf-8") as fh:  # noqa: PTH123  an example kept plain
            fh.write(f"{event.id} {event.status} {event.cache}\n")


def plugin() -> Plugin:
    return Plugin(
        name="vx-hello",
        commands={"hello": Command(hello, "greet someone")},
        telemetry=count_finished,
    )
