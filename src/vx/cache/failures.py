"""Failed runs' task output and the files it names, as `<cacheDir>/failures/<runId>.json`."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vx.ids import TaskId
from vx.util.atomic import write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable

KEPT = 50
HEAD_CHARS = 8 * 1024
TAIL_CHARS = 56 * 1024
MAX_LOCATIONS = 50

_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_PY_TRACE = re.compile(r'File "(?P<file>[^"\n]+)", line (?P<line>\d+)')
_PATH = re.compile(
    r"(?<![\w./:@+~-])(?P<file>(?:\.{1,2}/|/)?[\w@+.~-]*[\w@+~-](?:/[\w@+.~-]+)*\.[A-Za-z0-9]+)"
    r"(?::(?P<line>\d+)(?::(?P<col>\d+))?|\((?P<pline>\d+),(?P<pcol>\d+)\))?"
)


@dataclass(frozen=True, slots=True)
class Location:
    """A file a task's output names, absolute, with the line and column when it gave them."""

    file: str
    line: int | None = None
    col: int | None = None


@dataclass(frozen=True, slots=True)
class TaskFailure:
    """A failed task's output (plain text, bounded, already masked) and what it points at."""

    task: TaskId
    exit_code: int | None
    output: str
    locations: tuple[Location, ...] = ()
    timed_out: bool = False


@dataclass(frozen=True, slots=True)
class RunFailures:
    run_id: str
    tasks: tuple[TaskFailure, ...]


def task_failure(
    task: TaskId,
    exit_code: int | None,
    log: str,
    project_dir: Path,
    *,
    timed_out: bool = False,
    is_file: Callable[[Path], bool] = Path.is_file,
) -> TaskFailure:
    """Build a task's record from its masked log: colours stripped, head and tail kept."""
    output = bound(_ANSI.sub("", log))
    return TaskFailure(task, exit_code, output, locations(output, project_dir, is_file), timed_out)


def bound(text: str) -> str:
    """The first HEAD_CHARS and the last TAIL_CHARS: where a failure says what and why."""
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    cut = len(text) - HEAD_CHARS - TAIL_CHARS
    return f"{text[:HEAD_CHARS]}\n[… {cut} characters cut …]\n{text[-TAIL_CHARS:]}"


def locations(
    output: str, project_dir: Path, is_file: Callable[[Path], bool] = Path.is_file
) -> tuple[Location, ...]:
    """The existing files `output` names (`a.ts:3:7`, `a.ts(3,7)`, `File "a.py", line 3`)."""
    hits: list[tuple[int, str, str | None, str | None]] = []
    traces: list[tuple[int, int]] = []
    for m in _PY_TRACE.finditer(output):
        hits.append((m.start(), m.group("file"), m.group("line"), None))
        traces.append(m.span())
    for m in _PATH.finditer(output):
        if not any(start <= m.start() < end for start, end in traces):
            line = m.group("line") or m.group("pline")
            hits.append((m.start(), m.group("file"), line, m.group("col") or m.group("pcol")))
    found: dict[Location, None] = {}
    seen: dict[str, bool] = {}
    base = project_dir.absolute()
    for _, name, line, col in sorted(hits, key=lambda h: h[0]):
        path = os.path.normpath(base / name)
        if path not in seen:
            seen[path] = is_file(Path(path))
        if seen[path]:
            loc = Location(path, int(line) if line else None, int(col) if col else None)
            found.setdefault(loc)
            if len(found) >= MAX_LOCATIONS:
                break
    return tuple(found)


def failures_dir(cache_dir: Path) -> Path:
    return cache_dir / "failures"


def write_failures(cache_dir: Path, failures: RunFailures) -> Path | None:
    """Keep a run's failures (atomically) and drop all but the newest KEPT runs' files.

    Files rather than index rows: `vx last` and an agent read why a task failed without the
    terminal, and a refused write costs only that output.

    Nothing is written when no task failed. OSError (a full disk, a read-only cache dir)
    is the caller's to report: the run's verdict does not change.
    """
    if not failures.tasks:
        return None
    directory = failures_dir(cache_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{failures.run_id}.json"
    write_atomic(path, json.dumps(_to_json(failures), ensure_ascii=False))
    names = sorted(p.name for p in directory.iterdir() if _NAME.fullmatch(p.name))
    for name in names[:-KEPT]:
        (directory / name).unlink(missing_ok=True)
    return path


def read_failures(cache_dir: Path, run_id: str) -> RunFailures | None:
    """A run's kept failures; None when it kept none (or the file is not one of ours)."""
    try:
        raw = json.loads((failures_dir(cache_dir) / f"{run_id}.json").read_text("utf-8"))
        return RunFailures(str(raw["runId"]), tuple(_task_from_json(t) for t in raw["tasks"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _to_json(failures: RunFailures) -> dict[str, Any]:
    tasks: list[dict[str, Any]] = []
    for t in failures.tasks:
        doc: dict[str, Any] = {
            "taskId": str(t.task),
            "project": t.task.project,
            "task": t.task.task,
            "exitCode": t.exit_code,
        }
        if t.timed_out:
            doc["timedOut"] = True
        doc["output"] = t.output
        doc["locations"] = [
            {
                "file": loc.file,
                **({"line": loc.line} if loc.line is not None else {}),
                **({"col": loc.col} if loc.col is not None else {}),
            }
            for loc in t.locations
        ]
        tasks.append(doc)
    return {"runId": failures.run_id, "tasks": tasks}


def _task_from_json(doc: dict[str, Any]) -> TaskFailure:
    locs = tuple(
        Location(str(loc["file"]), loc.get("line"), loc.get("col")) for loc in doc["locations"]
    )
    return TaskFailure(
        TaskId(str(doc["project"]), str(doc["task"])),
        doc["exitCode"],
        str(doc["output"]),
        locs,
        bool(doc.get("timedOut", False)),
    )
