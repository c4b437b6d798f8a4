"""`vx run --profile`, `--report` and `--report-file`, end to end on real workspaces."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from tests.conftest import redact
from tests.e2e.runws import tree

BUILD: dict[str, Any] = {
    "dependsOn": ["^build"],
    "exec": "mkdir -p dist && cp src/index.txt dist/",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}
WARM = "warm replay"


def chain(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """lib ← app ← web, each a cached build, and app's uncached test after its build."""
    return tree(
        {
            "lib": ((), {"build": BUILD}),
            "app": (("lib",), {"build": BUILD, "test": {"dependsOn": ["build"], "exec": "true"}}),
            "web": (("app",), {"build": BUILD, **(extra or {})}),
        }
    )


def table(text: str) -> str:
    """The output with durations redacted and the Duration column's padding they decided."""
    return re.sub(r"\[DURATION\] +\|", "[DURATION] |", redact(text))


def test_report_prints_the_manuals_table_above_the_footer(workspace, vx) -> None:
    ws = workspace(chain({"lint": {"exec": "exit 3"}}))
    run = vx(["run", "build", "test", "lint", "--all", "--concurrency=1", "--report"], ws)
    assert run.code == 1, run
    report = run.out[run.out.index("## vx run") : run.out.index("─ vx ")]
    assert table(report) == (
        "## vx run — failed\n"
        "\n"
        "**5 tasks** · 4 success · 1 failed · 0 cached · [DURATION] total · [DURATION] saved\n"
        "\n"
        "| Task      | Status          | Cache    | Duration |\n"
        "| --------- | --------------- | -------- | -------- |\n"
        "| lib#build | success         | miss     | [DURATION] |\n"
        "| app#build | success         | miss     | [DURATION] |\n"
        "| app#test  | success         | no-cache | [DURATION] |\n"
        "| web#build | success         | miss     | [DURATION] |\n"
        "| web#lint  | failed (exit 3) | no-cache | [DURATION] |\n"
        "\n"
    )
    footer = run.out[run.out.index("─ vx ") :]
    assert "## vx run" not in footer
    assert footer.rstrip().splitlines()[-1].lstrip().startswith("result")


def test_a_skip_reads_what_blocked_it(workspace, vx) -> None:
    broken = {**BUILD, "exec": "exit 2"}
    ws = workspace(tree({"lib": ((), {"build": broken}), "app": (("lib",), {"build": BUILD})}))
    run = vx(["run", "build", "--all", "--report"], ws)
    assert run.code == 1, run
    report = table(run.out[run.out.index("## vx run") : run.out.index("─ vx ")])
    assert report == (
        "## vx run — failed\n"
        "\n"
        "**2 tasks** · 0 success · 1 failed · 1 skipped · 0 cached · [DURATION] total"
        " · [DURATION] saved\n"
        "\n"
        "| Task      | Status                         | Cache | Duration |\n"
        "| --------- | ------------------------------ | ----- | -------- |\n"
        "| lib#build | failed (exit 2)                | miss  | [DURATION] |\n"
        "| app#build | skipped (blocked by lib#build) | —     | —        |\n"
        "\n"
    )


def test_report_file_appends_a_report_per_run(workspace, vx) -> None:
    ws = workspace(chain())
    (ws / "summary").mkdir()
    (ws / "summary/step.md").write_text("# from an earlier step\n")
    args = ["run", "build", "--all", "--report-file", "summary/step.md"]
    cold = vx(args, ws).assert_ok()
    assert "## vx run" not in cold.out  # the file, not stdout
    warm = vx(args, ws).assert_ok()
    assert "## vx run" not in warm.out
    text = table((ws / "summary/step.md").read_text())
    assert text.startswith("# from an earlier step\n\n## vx run — passed\n")
    assert text.count("## vx run — passed") == 2
    second = text[text.rindex("## vx run") :]
    assert second == (
        "## vx run — passed\n"
        "\n"
        "**3 tasks** · 3 success · 0 failed · 3 cached (3 up-to-date, 0 restored)"
        " · [DURATION] total · [DURATION] saved\n"
        "\n"
        "| Task      | Status  | Cache      | Duration |\n"
        "| --------- | ------- | ---------- | -------- |\n"
        "| lib#build | success | up-to-date | [DURATION] |\n"
        "| app#build | success | up-to-date | [DURATION] |\n"
        "| web#build | success | up-to-date | [DURATION] |\n"
    )


def test_report_file_makes_its_directory_and_both_flags_write_both(workspace, vx) -> None:
    ws = workspace(chain())
    run = vx(["run", "build", "--all", "--report", "--report-file=out/deep/r.md"], ws).assert_ok()
    written = (ws / "out/deep/r.md").read_text()
    assert written in run.out


def spans(profile: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in profile["traceEvents"] if e["ph"] == "X"]


def test_profile_is_chrome_trace_with_a_span_per_task_on_worker_lanes(workspace, vx) -> None:
    ws = workspace(chain({"lint": {"exec": "exit 3"}}))
    run = vx(["run", "build", "test", "lint", "--all", "--concurrency=2", "--profile"], ws)
    assert run.code == 1, run
    assert f"[vx] profile written to {ws / 'profile.json'}" in run.err
    profile = json.loads((ws / "profile.json").read_text())
    events = spans(profile)
    assert sorted(e["name"] for e in events) == [
        "app#build",
        "app#test",
        "lib#build",
        "web#build",
        "web#lint",
    ]
    for e in events:
        assert {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"} <= e.keys()
        assert isinstance(e["ts"], (int, float))
        assert e["ts"] >= 0
        assert isinstance(e["dur"], (int, float))
        assert e["dur"] >= 0
        assert e["pid"] == 1
        assert e["tid"] >= 1
    cats = {e["name"]: e["cat"] for e in events}
    assert cats["web#lint"] == "failed"
    assert cats["lib#build"] == "success"
    assert {e["args"]["exitCode"] for e in events if e["name"] == "web#lint"} == {3}
    lanes = {e["tid"] for e in events}
    assert lanes <= {1, 2}
    for lane in lanes:
        mine = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e["tid"] == lane)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(mine)), mine
    names = {e["tid"]: e["args"]["name"] for e in profile["traceEvents"] if e["ph"] == "M"}
    assert names[0] == "vx run"
    assert all(names[lane] == f"lane {lane}" for lane in lanes)


def test_artifacts_skip_the_warm_replay_and_still_describe_the_hits(workspace, vx) -> None:
    ws = workspace(chain())
    timing = {"VX_TIMING": "1"}
    vx(["run", "build", "--all"], ws, env=timing).assert_ok()
    vx(["run", "build", "--all"], ws, env=timing).assert_ok()
    assert WARM in vx(["run", "build", "--all"], ws, env=timing).assert_ok().err
    args = ["run", "build", "--all", "--profile=p/trace.json", "--report", "--report=html"]
    run = vx(args, ws, env=timing).assert_ok()
    assert WARM not in run.err
    assert "| web#build | success | up-to-date |" in run.out
    events = spans(json.loads((ws / "p/trace.json").read_text()))
    assert sorted((e["name"], e["cat"]) for e in events) == [
        ("app#build", "cache-hit"),
        ("lib#build", "cache-hit"),
        ("web#build", "cache-hit"),
    ]
    page = (ws / "report.html").read_text()
    assert page.count('class="bar') == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dry", "--profile"], "--profile writes about a run, and --dry runs nothing"),
        (["--graph", "--report"], "--report writes about a run, and --graph runs nothing"),
        (["--dry", "--report-file=r.md"], "--report-file writes about a run, and --dry runs"),
        (["--report=json"], "--report=json is reserved"),
        (["--report=htm"], "--report takes markdown or html[=<path>], got 'htm' (did you mean"),
        (["--report="], "--report= is empty"),
        (["--report=html="], "--report=html= is empty"),
        (["--report", "--report=markdown"], "--report=markdown is given twice"),
        (["--report-file", "--all"], "--report-file got"),
    ],
)
def test_refusals(workspace, vx, args: list[str], message: str) -> None:
    ws = workspace(chain())
    run = vx(["run", "build", *args], ws)
    assert run.code == 1, run
    assert message in run.err
    assert len(run.err.strip().splitlines()) == 1, run
    assert "Traceback" not in run.err


def test_a_path_that_cannot_be_written_is_one_line_and_keeps_the_exit(workspace, vx) -> None:
    ws = workspace(chain())
    (ws / "plain").write_text("a file, not a directory\n")
    args = ["--profile=plain/p.json", "--report=html=plain/r.html", "--report-file=plain/r.md"]
    run = vx(["run", "build", "--all", *args], ws).assert_ok()
    lines = [line for line in run.err.splitlines() if "failed to write" in line]
    assert lines == [
        f"vx: failed to write report to {ws / 'plain/r.md'}: File exists",
        f"vx: failed to write profile to {ws / 'plain/p.json'}: File exists",
        f"vx: failed to write HTML report to {ws / 'plain/r.html'}: File exists",
    ]
