"""Failed runs' records: what is kept, how much of it, and which files the output names."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from vx.cache.failures import (
    HEAD_CHARS,
    KEPT,
    TAIL_CHARS,
    Location,
    RunFailures,
    TaskFailure,
    bound,
    failures_dir,
    locations,
    read_failures,
    task_failure,
    write_failures,
)
from vx.ids import TaskId
from vx.util.uuid7 import uuid7

if TYPE_CHECKING:
    from pathlib import Path

WEB_TEST = TaskId("web", "test")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ws" / "web"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.ts").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("")
    return root


@pytest.mark.parametrize(
    ("output", "want"),
    [
        ("src/app.ts:12:5 - error TS2322", [("src/app.ts", 12, 5)]),
        ("src/app.ts(12,5): error TS2322", [("src/app.ts", 12, 5)]),
        ("./src/app.ts:3 oops", [("src/app.ts", 3, None)]),
        ("in src/app.ts somewhere", [("src/app.ts", None, None)]),
        ('  File "tests/test_app.py", line 7, in test_x', [("tests/test_app.py", 7, None)]),
        ("src/gone.ts:1:1 missing files are left out", []),
        ("see https://example.com/src/app.ts:1", []),
        ("src/app.ts:1:2 and again src/app.ts:1:2", [("src/app.ts", 1, 2)]),
        (
            "tests/test_app.py:4: AssertionError\nsrc/app.ts:9:1",
            [("tests/test_app.py", 4, None), ("src/app.ts", 9, 1)],
        ),
    ],
)
def test_locations_are_the_existing_files_the_output_names(
    project: Path, output: str, want: list[tuple[str, int | None, int | None]]
) -> None:
    got = locations(output, project)
    assert got == tuple(Location(str(project / f), line, col) for f, line, col in want)


def test_an_absolute_path_is_kept_and_outside_ones_resolve(project: Path) -> None:
    file = project / "src" / "app.ts"
    assert locations(f"{file}:1:1", project) == (Location(str(file), 1, 1),)
    assert locations("../web/src/app.ts:2", project) == (Location(str(file), 2),)


def test_output_is_plain_and_bounded(project: Path) -> None:
    log = "\x1b[31merror\x1b[0m in src/app.ts:1:1\n" + "x" * (HEAD_CHARS + TAIL_CHARS)
    failure = task_failure(WEB_TEST, 1, log, project)
    assert failure.output.startswith("error in src/app.ts:1:1\n")
    assert f"[… {len(log) - 9 - HEAD_CHARS - TAIL_CHARS} characters cut …]" in failure.output
    assert failure.output.endswith("x" * TAIL_CHARS)
    assert failure.locations == (Location(str(project / "src" / "app.ts"), 1, 1),)
    assert bound("short") == "short"


def test_a_run_record_round_trips_as_the_json_vx_last_reads(tmp_path: Path) -> None:
    run_id = uuid7()
    failures = RunFailures(
        run_id,
        (
            TaskFailure(WEB_TEST, 1, "boom", (Location("/w/a.ts", 3, 1), Location("/w/b.ts"))),
            TaskFailure(TaskId("//", "lint"), None, "", (), timed_out=True),
        ),
    )
    path = write_failures(tmp_path, failures)
    assert path == failures_dir(tmp_path) / f"{run_id}.json"
    assert json.loads(path.read_text()) == {
        "runId": run_id,
        "tasks": [
            {
                "taskId": "web#test",
                "project": "web",
                "task": "test",
                "exitCode": 1,
                "output": "boom",
                "locations": [{"file": "/w/a.ts", "line": 3, "col": 1}, {"file": "/w/b.ts"}],
            },
            {
                "taskId": "//#lint",
                "project": "//",
                "task": "lint",
                "exitCode": None,
                "timedOut": True,
                "output": "",
                "locations": [],
            },
        ],
    }
    assert read_failures(tmp_path, run_id) == failures
    assert read_failures(tmp_path, str(uuid7())) is None


def test_only_the_newest_runs_are_kept(tmp_path: Path) -> None:
    ids = [
        str(uuid7(now_ns=lambda n=n: 1_700_000_000_000_000_000 + n * 10**6))
        for n in range(KEPT + 5)
    ]
    failures_dir(tmp_path).mkdir()
    (failures_dir(tmp_path) / "notes.json").write_text("{}")
    for run_id in ids:
        write_failures(tmp_path, RunFailures(run_id, (TaskFailure(WEB_TEST, 1, "x"),)))
    kept = sorted(p.name for p in failures_dir(tmp_path).iterdir())
    assert kept == sorted([f"{i}.json" for i in ids[5:]] + ["notes.json"])


def test_a_run_without_failures_writes_nothing(tmp_path: Path) -> None:
    assert write_failures(tmp_path, RunFailures(str(uuid7()), ())) is None
    assert not failures_dir(tmp_path).exists()
