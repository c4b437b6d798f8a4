"""A sharded plan as `vx run --dry --shard K/N` prints it: each shard's tasks and expected wall.

The text is for people reading a CI log; the JSON (schemas/shard-plan.json) for scripts that
check a deal before the shards start.
"""

from __future__ import annotations

from typing import Any

from vx.util.record import Record
from vx.util.words import format_duration


class ShardPart(Record):
    """One shard's part: its number (1-based), expected wall in ms, and its tasks."""

    shard: int
    expected_ms: float
    tasks: tuple[str, ...]


class ShardView(Record):
    """A whole deal: the plan digest, which shard asked, the ideal wall, every shard's part."""

    digest: str
    shard: int
    total: int
    ideal_ms: float
    parts: tuple[ShardPart, ...]


def shard_text(view: ShardView) -> str:
    """Every shard's part, this one marked, with the digest every shard must print too."""
    slowest = max((p.expected_ms for p in view.parts), default=0.0)
    ratio = f" ({slowest / view.ideal_ms:.2f}x ideal)" if view.ideal_ms else ""
    head = (
        f"shard plan · digest {view.digest} · {view.total} shards · ideal"
        f" {format_duration(view.ideal_ms)}, slowest {format_duration(slowest)}{ratio}"
    )
    lines = [head]
    for part in view.parts:
        mark = "▸" if part.shard == view.shard else " "
        lines.append(
            f"{mark} shard {part.shard}/{view.total}  expected {format_duration(part.expected_ms)}"
            f"  {len(part.tasks)} task{'' if len(part.tasks) == 1 else 's'}"
        )
        lines.extend(f"    {tid}" for tid in part.tasks)
    return "\n".join(lines) + "\n"


def shard_document(view: ShardView) -> dict[str, Any]:
    """The deal as one JSON document (schemas/shard-plan.json)."""
    return {
        "digest": view.digest,
        "shard": view.shard,
        "shards": view.total,
        "idealMs": round(view.ideal_ms, 1),
        "parts": [
            {"shard": p.shard, "expectedMs": round(p.expected_ms, 1), "tasks": list(p.tasks)}
            for p in view.parts
        ],
    }
