"""The words of an outcome and the one-line task row: glyph, time, status, cache, name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.events import CacheOutcome, TaskStatus
from vx.output import style as palette
from vx.util.record import Record
from vx.util.words import exit_detail, format_duration

if TYPE_CHECKING:
    from vx.events import TaskFinished
    from vx.output.style import RGB, Style

TEXT_PRESENTATION = "\ufe0e"
"""Asks for the text glyph: without it some terminals draw ⏺ and ◼ as two-cell emoji."""

TIME_WIDTH = 7
STATUS_WIDTH = 7
CACHE_WIDTH = 8


class Look(Record):
    """How one outcome reads everywhere: its row glyph, its hue, and its word in a frame."""

    glyph: str
    hue: RGB | None
    word: str
    hit: bool = False


_ANY: CacheOutcome | None = None
_RAN = "⏺" + TEXT_PRESENTATION

OUTCOMES: dict[tuple[TaskStatus, CacheOutcome | None], Look] = {
    (TaskStatus.SUCCESS, CacheOutcome.MISS): Look(_RAN, palette.SUCCESS, "success"),
    (TaskStatus.SUCCESS, CacheOutcome.NO_CACHE): Look(_RAN, palette.SUCCESS, "success"),
    (TaskStatus.SUCCESS, CacheOutcome.UP_TO_DATE): Look(
        "►", palette.SUCCESS, "up-to-date", hit=True
    ),
    (TaskStatus.SUCCESS, CacheOutcome.LOCAL): Look(
        "⇢", palette.SUCCESS, "restored-local", hit=True
    ),
    (TaskStatus.SUCCESS, CacheOutcome.REMOTE): Look(
        "⇣", palette.SUCCESS, "restored-remote", hit=True
    ),
    (TaskStatus.FAILED, _ANY): Look("◼" + TEXT_PRESENTATION, palette.ERROR, "failed"),
    (TaskStatus.SKIPPED, _ANY): Look("⊘", palette.WARN, "skipped"),
    (TaskStatus.RUNNING, _ANY): Look("▸", palette.ACCENT, "running"),
    (TaskStatus.ABORTED, _ANY): Look("✗", palette.ERROR, "aborted"),
    (TaskStatus.NOT_RUN, _ANY): Look("◌", None, "not run"),
}
"""Every outcome's glyph, hue and frame word, in one place: the glyph's shape is the cache
axis, its colour and the status word the task axis."""

CACHE_WORDS: dict[CacheOutcome, str] = {
    CacheOutcome.MISS: "miss",
    CacheOutcome.NO_CACHE: "no-cache",
    CacheOutcome.UP_TO_DATE: "fresh",
    CacheOutcome.LOCAL: "local",
    CacheOutcome.REMOTE: "remote",
}
"""The row's cache cell; an up-to-date hit reads `fresh` so every word fits the column."""

_NO_CACHE_CELL = frozenset({TaskStatus.SKIPPED, TaskStatus.ABORTED, TaskStatus.NOT_RUN})
_NO_TIME_CELL = frozenset({TaskStatus.SKIPPED, TaskStatus.NOT_RUN})


def look(finished: TaskFinished) -> Look:
    found = OUTCOMES.get((finished.status, finished.cache))
    return found if found is not None else OUTCOMES[(finished.status, _ANY)]


def failure_detail(finished: TaskFinished) -> str:
    """What a failure's label holds in parentheses: `exit 1`, `exit 137, 128 + SIGKILL`, …"""
    return exit_detail(finished.exit_code, reason=finished.reason, timed_out=finished.timed_out)


def outcome_word(finished: TaskFinished) -> str:
    """The outcome as a frame's close says it: `failed (exit 1)`, `restored-local`."""
    word = look(finished).word
    if finished.status is TaskStatus.FAILED:
        detail = failure_detail(finished)
        return f"{word} ({detail})" if detail else word
    if finished.status is TaskStatus.SKIPPED and finished.blocked_by is not None:
        return f"{word} ({skip_note(finished)})"
    return word


def skip_note(finished: TaskFinished) -> str:
    """Why a skipped task did not run: `blocked by lib#build`, or the skip's own reason
    (`waiting on app#dev, not ready`: a server its run stopped waiting for)."""
    return finished.reason or f"blocked by {finished.blocked_by}"


def paint_outcome(finished: TaskFinished, style: Style, *, with_key: bool) -> str:
    """The painted outcome; a hit's frame header adds the first eight hex digits of its key."""
    found = look(finished)
    word = style.paint(outcome_word(finished), found.hue, bold=finished.status is TaskStatus.FAILED)
    if with_key and found.hit and finished.key:
        word += " " + style.dim(f"• {finished.key[:8]}")
    return word


def format_row(finished: TaskFinished, style: Style) -> str:
    """` ⇢     4ms success local    pkg#task`: glyph, time, status, cache, name on one grid."""
    found = look(finished)
    status = finished.status
    time_text = "" if status in _NO_TIME_CELL else format_duration(finished.duration_ms)
    cache_text = "" if status in _NO_CACHE_CELL else CACHE_WORDS[finished.cache]
    row = (
        " "
        + style.paint(found.glyph, found.hue)
        + " "
        + " " * (TIME_WIDTH - len(time_text))
        + style.dim(time_text)
        + " "
        + style.paint(status.value, found.hue)
        + " " * (STATUS_WIDTH - len(status.value) + 1)
        + style.dim(cache_text)
        + " " * (CACHE_WIDTH - len(cache_text) + 1)
        + style.task_id(finished.id)
    )
    if finished.blocked_by is not None:
        row += " " + style.dim(f"• {skip_note(finished)}")
    if finished.not_started and finished.reason:
        row += " " + style.dim(f"• {finished.reason}")
    reason = miss_note(finished)
    if reason:
        row += " " + style.dim(reason)
    note = flaky_note(finished)
    if note:
        row += " " + style.dim(note)
    return row


def miss_note(finished: TaskFinished) -> str:
    """Why a cached task executed (`· env API_URL`, `· first run`), for its row and its
    frame's close line alike; empty for every other task."""
    if finished.miss is None or finished.cache is not CacheOutcome.MISS:
        return ""
    return f"· {finished.miss.describe()}"


def flaky_note(finished: TaskFinished) -> str:
    """The dim note of a task the run showed flaky (`flaky - passed 3 times before`, written
    with a multiplication sign, on a failure; `flaky - failed 1 time before · 2 attempts` on a
    pass); empty for every other task.

    A failure counts the passes before it; a pass counts the failures before it, this run's
    failed attempts included.
    """
    if finished.flaky is None:
        return ""
    passes, failures = finished.flaky
    if finished.status is TaskStatus.FAILED:
        note = f"flaky - passed {passes}\u00d7 before"
    else:
        note = f"flaky - failed {failures}\u00d7 before"
    if finished.attempts > 1:
        note += f" · {finished.attempts} attempts"
    return note


HASH_WORD_WIDTH = len("restored-remote")


def format_hash_line(finished: TaskFinished, style: Style) -> str:
    """`--output-logs=hash-only`: outcome word, task id, cache key (`-` for a task with none)."""
    found = look(finished)
    word = found.word
    return (
        style.paint(word, found.hue)
        + " " * (HASH_WORD_WIDTH - len(word) + 1)
        + style.task_id(finished.id)
        + " "
        + style.dim(finished.key or "-")
    )
