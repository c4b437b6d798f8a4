"""A task's frame: `┌─` header, `$ command`, the OUTPUT section, `└─` close; buffered or live."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.events import Stream, TaskStatus
from vx.output import style as palette
from vx.output.console import strip_ansi
from vx.output.rows import flaky_note, look, miss_note, paint_outcome
from vx.util.words import format_duration

if TYPE_CHECKING:
    from collections.abc import Sequence

    from vx.events import TaskFinished
    from vx.ids import TaskId
    from vx.output.style import RGB, Style

RULE_WIDTH = 60
PERSISTENT_MARK = "▸ "
WITHHELD_SHOWN = 12
WITHHELD_HINT = "declare them in exec.env.passThrough or cache.inputs.env"

Chunk = tuple[Stream, str]


def section_rule(label: str, hue: RGB | None, style: Style) -> str:
    """`├─ OUTPUT ───…`, sixty cells wide: rule dim, the label bold in the task's state colour."""
    fill = "─" * max(RULE_WIDTH - len(label) - 4, 3)
    return f"{style.dim('├─')} {style.paint(label, hue, bold=True)} {style.dim(fill)}"


def _mark(persistent: bool, style: Style) -> str:
    return style.paint(PERSISTENT_MARK, palette.ACCENT) if persistent else ""


def frame_header(finished: TaskFinished, style: Style, *, persistent: bool = False) -> str:
    outcome = paint_outcome(finished, style, with_key=True)
    return (
        f"{style.dim('┌─')} {_mark(persistent, style)}{style.task_id(finished.id)} "
        f"{style.dim('>')} {outcome}"
    )


def withheld_line(names: Sequence[str], style: Style) -> str:
    """`not passed to the task: A, B — declare them in …`: names only, never a value."""
    shown = ", ".join(names[:WITHHELD_SHOWN])
    more = f" and {len(names) - WITHHELD_SHOWN} more" if len(names) > WITHHELD_SHOWN else ""
    return style.dim(f"not passed to the task: {shown}{more} — {WITHHELD_HINT}")


def frame_close(finished: TaskFinished, style: Style, *, persistent: bool = False) -> str:
    duration = style.dim(f"({format_duration(finished.duration_ms)})")
    outcome = paint_outcome(finished, style, with_key=False)
    notes = " ".join(n for n in (miss_note(finished), flaky_note(finished)) if n)
    return (
        f"{style.dim('└─')} {_mark(persistent, style)}{style.task_id(finished.id)} "
        f"{style.dim('──')} {duration} {outcome}" + (f" {style.dim(notes)}" if notes else "")
    )


def wrote_something(chunks: Sequence[Chunk]) -> bool:
    """Whether a task printed anything visible; whitespace and bare escapes are nothing."""
    return any(strip_ansi(text).strip() for _, text in chunks)


def _lines(chunks: Sequence[Chunk]) -> list[tuple[Stream, str]]:
    """Split output into lines, each taking the stream of the chunk that began it."""
    lines: list[tuple[Stream, str]] = []
    current: list[str] = []
    began: Stream | None = None
    for stream, text in chunks:
        start = 0
        while start <= len(text):
            newline = text.find("\n", start)
            end = len(text) if newline < 0 else newline
            if began is None and (end > start or newline >= 0):
                began = stream
            current.append(text[start:end])
            if newline < 0:
                break
            lines.append((began or stream, "".join(current)))
            current, began = [], None
            start = newline + 1
    if began is not None:
        lines.append((began, "".join(current)))
    while lines and not strip_ansi(lines[-1][1]).strip():
        lines.pop()
    return lines


def frame_body(chunks: Sequence[Chunk], style: Style) -> str:
    """The task's lines, raw; a stderr line the task did not colour itself turns red."""
    out: list[str] = []
    own_escapes = False
    for stream, line in _lines(chunks):
        if "\x1b" in line:
            own_escapes = True
            out.append(line)
        elif stream is Stream.STDERR:
            out.append(style.paint(line, palette.ERROR))
        else:
            out.append(line)
    body = "\n".join(out)
    # A task that leaves an attribute switched on must not tint the frame's close.
    return body + palette.RESET if own_escapes and style.color else body


def render_frame(
    finished: TaskFinished,
    *,
    command: str | None,
    chunks: Sequence[Chunk],
    style: Style,
    persistent: bool = False,
) -> str:
    """A whole frame, sections blank-line separated; `$ command` only for a task that executed."""
    parts = [frame_header(finished, style, persistent=persistent)]
    if command is not None:
        parts.append(style.dim(f"$ {command}"))
    if wrote_something(chunks):
        hue = palette.ERROR if finished.status is TaskStatus.FAILED else look(finished).hue
        parts.append(section_rule("OUTPUT", hue, style))
        parts.append(frame_body(chunks, style))
    if finished.withheld:
        parts.append(withheld_line(finished.withheld, style))
    parts.append(frame_close(finished, style, persistent=persistent))
    return "\n\n".join(parts) + "\n"


def live_open(task: TaskId, command: str, style: Style, *, persistent: bool = False) -> str:
    """A live frame's first line: the outcome is not known yet, so it names the command instead."""
    return (
        f"{style.dim('┌─')} {_mark(persistent, style)}{style.task_id(task)} "
        f"{style.dim('>')} {style.dim(f'$ {command}')}\n\n"
    )
