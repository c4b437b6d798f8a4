"""`vx run --profile`, `--report` and `--report-file`: what is asked, and writing it after the run.

The reports are rendered by `vx.history.report`; this module decides the paths, feeds the
renderers the run's events or outcome, and turns a write the disk refuses into one line that
leaves the run's exit code alone (the run already happened).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.util.fuzzy import did_you_mean
from vx.util.record import Record
from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from vx.events import Event, PlannedTask, TaskFinished
    from vx.history.report import RunReport
    from vx.ids import TaskId
    from vx.run.outcome import RunOutcome

PROFILE_DEFAULT = "profile.json"
HTML_DEFAULT = "report.html"
REPORT_FORMATS = ("markdown", "html")


class Artifacts(Record):
    """The artifacts one `vx run` asked for; paths as typed, resolved against `cwd` on write.

    `profile` is the Chrome trace's path; `markdown` prints the report above the footer;
    `html` is the HTML report's path; `report_file` is where the markdown is appended.
    """

    profile: str | None = None
    markdown: bool = False
    html: str | None = None
    report_file: str | None = None

    @property
    def asked(self) -> str | None:
        """The first artifact flag given, for a refusal that names it; None when none was."""
        if self.profile is not None:
            return "--profile"
        if self.markdown or self.html is not None:
            return "--report"
        return "--report-file" if self.report_file is not None else None

    @property
    def wants_markdown(self) -> bool:
        """Either markdown form: printed, appended to a file, or both."""
        return self.markdown or self.report_file is not None


def artifacts(profile: str | None, reports: tuple[str, ...], report_file: str | None) -> Artifacts:
    """Read `--profile[=<path>]`, each `--report[=markdown|html[=<path>]]`, `--report-file`."""
    markdown = False
    html: str | None = None
    for report in reports:
        kind, eq, path = report.partition("=")
        if kind == "json":
            msg = "--report=json is reserved: for the run as JSON use --summarize or --format json"
            raise UserError(ErrorCode.USAGE, msg)
        if kind not in REPORT_FORMATS or (eq and kind != "html"):
            near = did_you_mean(kind, REPORT_FORMATS)
            hint = f" (did you mean {near}?)" if near else ""
            msg = f"--report takes markdown or html[=<path>], got {clip(report)!r}{hint}"
            raise UserError(ErrorCode.USAGE, msg)
        if eq and not path:
            msg = "--report=html= is empty: write --report=html or --report=html=<path>"
            raise UserError(ErrorCode.USAGE, msg)
        if (markdown and kind == "markdown") or (html is not None and kind == "html"):
            raise UserError(ErrorCode.USAGE, f"--report={kind} is given twice: keep one")
        if kind == "markdown":
            markdown = True
        else:
            html = path or HTML_DEFAULT
    return Artifacts(
        profile=(profile or PROFILE_DEFAULT) if profile is not None else None,
        markdown=markdown,
        html=html,
        report_file=report_file,
    )


class ReportCollector:
    """Builds the markdown report from the run's events, in time to print above the footer.

    The footer prints when the run's `RunFinished` arrives, before the engine returns its
    outcome, so the report is read from the events the terminal sees: the same tasks, the
    same order, the same counts.
    """

    def __init__(self) -> None:
        self._planned: tuple[PlannedTask, ...] = ()
        self._finished: dict[TaskId, TaskFinished] = {}

    def see(self, event: Event) -> RunReport | None:
        """Take one event; at `RunFinished`, the report of the run."""
        from vx.events import RunFinished, RunStarted, TaskFinished

        if isinstance(event, RunStarted):
            self._planned = event.tasks
        elif isinstance(event, TaskFinished):
            self._finished.setdefault(event.id, event)
        elif isinstance(event, RunFinished):
            from vx.history.report import RunReport

            work = [t.id for t in self._planned if not t.group]
            finished = tuple(self._finished[t] for t in work if t in self._finished)
            return RunReport(finished, event.exit_code, event.wall_ms, event.interrupted)
        return None


def markdown_sink(
    wanted: Artifacts,
    *,
    cwd: Path,
    above_footer: Callable[[str], None],
    note: Callable[[str], None],
) -> Callable[[Event], None]:
    """A tap on the run's events: at its end, print the report and append it to the file."""
    from vx.history.report import markdown

    collector = ReportCollector()

    def see(event: Event) -> None:
        report = collector.see(event)
        if report is None:
            return
        text = markdown(report)
        if wanted.markdown:
            above_footer(text)
        if wanted.report_file is not None:
            failure = append_report(cwd / wanted.report_file, text)
            if failure:
                note(failure)

    return see


def append_report(target: Path, text: str) -> str | None:
    """Append to the file (a step summary other steps write too); a refusal's line, if any."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as fh:
            fh.write(text if fh.tell() == 0 else "\n" + text)
    except OSError as error:
        return f"vx: failed to write report to {target}: {error.strerror or error}"
    return None


def outcome_report(outcome: RunOutcome) -> RunReport:
    """The outcome as the profile and the HTML page read it: spans and the graph included."""
    from vx.history.report import RunReport

    plan = outcome.plan
    if plan is None:
        raise AssertionError("an artifact run takes the full path, which returns its plan")
    by_id = {f.id: f for f in outcome.finished}
    work = [t for t in plan.order if not plan.nodes[t].task.is_group and t in by_id]
    return RunReport(
        finished=tuple(by_id[t] for t in work),
        exit_code=outcome.exit_code,
        wall_ms=outcome.wall_ms,
        interrupted=outcome.signal is not None,
        run_id=outcome.run_id,
        spans=outcome.spans,
        order=plan.order,
        deps=plan.graph.deps,
    )


def write_files(wanted: Artifacts, outcome: RunOutcome, *, cwd: Path) -> list[str]:
    """Write the profile and the HTML report; a line for each written file or refusal."""
    if wanted.profile is None and wanted.html is None:
        return []
    import json

    from vx.history.picture import html_report
    from vx.history.report import chrome_trace

    report = outcome_report(outcome)
    lines: list[str] = []
    if wanted.profile is not None:
        text = json.dumps(chrome_trace(report), indent=1) + "\n"
        lines.append(_write(cwd / wanted.profile, text, "profile"))
    if wanted.html is not None:
        lines.append(_write(cwd / wanted.html, html_report(report), "HTML report"))
    return lines


def _write(target: Path, text: str, what: str) -> str:
    from vx.util.atomic import write_atomic

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, text)
    except OSError as error:
        return f"vx: failed to write {what} to {target}: {error.strerror or error}"
    return f"[vx] {what} written to {target}"
