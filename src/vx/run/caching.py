"""The seam between running a task and the cache: probe, restore, clean, save.

The executor asks these questions and never touches the store itself; `NoCache` answers them
for a run whose cache reads and writes nothing (`--no-cache`), and `vx.run.localcache` answers
them from the local store.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vx.events import Stream
    from vx.ids import TaskId
    from vx.run.hits import Hit


class RestoreResult(StrEnum):
    """What a hit did to the outputs on disk."""

    RESTORED = "restored"
    UP_TO_DATE = "up-to-date"
    CORRUPT = "corrupt"  # treated as a miss; the entry is dropped
    GONE = "gone"  # the artifact went after its row was read (a prune): a plain miss, unremarked


class Produced(Record):
    """What an executed task hands the cache to keep."""

    log: Sequence[tuple[Stream, str]]
    duration_ms: float
    cpu_ms: float | None
    peak_rss_bytes: int | None


class TaskCache(Protocol):
    """What the executor needs from a cache, per task."""

    def key(self, tid: TaskId) -> str | None:
        """The task's key (every task has one once keys are derived)."""

    def cached(self, tid: TaskId) -> bool:
        """The task has a `cache` block and this run's cache answers for it."""

    def predicted_hit(self, tid: TaskId) -> bool:
        """An entry exists for the task's key: schedule it on the restore lane."""

    def lookup(self, tid: TaskId) -> Hit | None:
        """A readable entry for the task's key, or None."""

    def restore(self, tid: TaskId, hit: Hit) -> RestoreResult:
        """Put the entry's outputs in place (or find them already there)."""

    def prepare(self, tid: TaskId) -> None:
        """Clean the task's declared outputs before it runs."""

    def save(self, tid: TaskId, produced: Produced) -> str | None:
        """Keep the outputs and log; a one-line reason when the save failed, else None."""

    def unmatched_outputs(self, tid: TaskId) -> str | None:
        """The task's output globs, joined, when it declares some and they matched no file
        after it ran; None otherwise. Asked only after a successful execution."""


class NoCache:
    """A cache that answers nothing: every task runs, nothing is cleaned or saved."""

    def key(self, tid: TaskId) -> str | None:  # noqa: ARG002 - the protocol's shape
        return None

    def cached(self, tid: TaskId) -> bool:  # noqa: ARG002
        return False

    def predicted_hit(self, tid: TaskId) -> bool:  # noqa: ARG002
        return False

    def lookup(self, tid: TaskId) -> Hit | None:  # noqa: ARG002
        return None

    def restore(self, tid: TaskId, hit: Hit) -> RestoreResult:  # noqa: ARG002
        return RestoreResult.CORRUPT

    def prepare(self, tid: TaskId) -> None:
        """Nothing to clean: `--no-cache` leaves the tree alone."""

    def save(self, tid: TaskId, produced: Produced) -> str | None:  # noqa: ARG002
        return None

    def unmatched_outputs(self, tid: TaskId) -> str | None:  # noqa: ARG002
        return None
