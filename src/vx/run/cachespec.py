"""`--cache <spec>`, `--no-cache` and `--force` → the four cache axes, in the documented order."""

from __future__ import annotations

from vx.errors import ErrorCode, UserError
from vx.util.record import Record

LAYERS = ("local", "remote")


class CacheAxes(Record):
    """The four switches `--cache`, `--no-cache` and `--force` resolve to."""

    local_read: bool = True
    local_write: bool = True
    remote_read: bool = True
    remote_write: bool = True

    @property
    def answers(self) -> bool:
        """The local cache reads or writes anything this run."""
        return self.local_read or self.local_write


OFF = CacheAxes(local_read=False, local_write=False, remote_read=False, remote_write=False)
"""A run whose index its disk refused at the start: `--no-cache`, whatever was asked."""


def resolve_axes(spec: str | None, *, no_cache: bool, force: bool) -> CacheAxes:
    """Start all on; apply each `layer:flags` segment exactly; `--no-cache` turns all off;
    `--force` turns both reads off (writes stay as the spec left them)."""
    axes = {"local": [True, True], "remote": [True, True]}
    if spec is not None:
        for segment in spec.split(","):
            layer, sep, flags = segment.strip().partition(":")
            if layer not in LAYERS:
                raise UserError(
                    ErrorCode.USAGE,
                    f"invalid --cache layer '{layer}' — use local:<r|w|rw> or remote:<r|w|rw>",
                )
            if not sep:
                raise UserError(
                    ErrorCode.USAGE,
                    f"invalid --cache segment '{segment}' — write {layer}:rw, {layer}:r,"
                    f" {layer}:w or {layer}: (off)",
                )
            bad = [c for c in flags if c not in "rw"]
            if bad:
                raise UserError(
                    ErrorCode.USAGE, f"invalid --cache flag '{bad[0]}' — flags are r and w"
                )
            axes[layer] = ["r" in flags, "w" in flags]
    if no_cache:
        axes = {"local": [False, False], "remote": [False, False]}
    if force:
        axes["local"][0] = axes["remote"][0] = False
    return CacheAxes(
        local_read=axes["local"][0],
        local_write=axes["local"][1],
        remote_read=axes["remote"][0],
        remote_write=axes["remote"][1],
    )


def names_remote(spec: str | None) -> bool:
    """The spec sets a remote axis, which no layer serves here."""
    return spec is not None and any(s.strip().startswith("remote:") for s in spec.split(","))
