"""What the `vx mcp` tools answer: the history, kept failures, miss reasons and plans as data.

Every answer is read from the run history and the plan engine; none runs a task except
`run_tasks`, which the server lists only under `--allow-run`. Text that came from a task or
a file is masked with the secrets vx's own environment holds and clipped to a bound, so an
agent's context never receives a credential or a megabyte of log.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.cache.index import Index
    from vx.history.why import Explanation
    from vx.run.plan import RunPlan

OUTPUT_CHARS = 12_000
"""How much of one task's output an answer carries: its end, where the error usually is."""
FILES = 5
EXCERPT_LINES = 6
LINE_CHARS = 300


class Sources(Record):
    """Where the answers come from, resolved once by `vx mcp`.

    `plan_doc` and `why_doc` are the documents `vx run --dry=json` and `vx why --format json`
    print, so a tool answers exactly as the verb would.
    """

    root: Path
    history: Path
    env: Mapping[str, str]
    plan_doc: Callable[[RunPlan], dict[str, Any]]
    why_doc: Callable[[Explanation], dict[str, Any]]


def recent_runs(src: Sources, limit: int = 10, *, failed: bool = False) -> dict[str, Any]:
    """The newest runs, newest first, each as `vx last --list --format json` gives it."""
    from vx.history.runs import invocation_json

    index = _open(src)
    if index is None:
        return {"runs": []}
    try:
        found = index.invocations(limit=max(1, min(limit, 100)), failed=failed)
        return {"runs": [invocation_json(inv) for inv in found]}
    finally:
        index.close()


def run_tasks_of(src: Sources, run_id: str | None = None) -> dict[str, Any]:
    """One run (the latest without an id) with each task's verdict; failures keep their
    output, masked and clipped."""
    from vx.history.runs import load_replay, pick_run, replay_json

    index = _need(src)
    try:
        doc = replay_json(load_replay(index, src.history, pick_run(index, run_id, failed=False)))
    finally:
        index.close()
    for task in doc["tasks"]:
        if "output" in task:
            task["output"] = _bounded(task["output"], src)
    return doc


def last_failure(src: Sources, run_id: str | None = None) -> dict[str, Any]:
    """The latest failed run (or the one named): each failed task's output and an excerpt of
    each file its output names, inside the workspace."""
    from vx.history.runs import load_replay, pick_run, replay_json

    index = _need(src)
    try:
        doc = replay_json(load_replay(index, src.history, pick_run(index, run_id, failed=True)))
    finally:
        index.close()
    failed = []
    for task in doc["tasks"]:
        if task["status"] != "failed":
            continue
        task["output"] = _bounded(task.get("output", ""), src)
        task["files"] = [
            excerpt
            for loc in task.pop("locations", [])[:FILES]
            if (excerpt := _excerpt(src, loc)) is not None
        ]
        failed.append(task)
    return {"invocation": doc["invocation"], "failed": failed}


def why_missed(src: Sources, task: str, run_id: str | None = None) -> dict[str, Any]:
    """Why the task executed instead of hitting: `vx why`'s answer."""
    from vx.history.why import explain, resolve_task

    index = _need(src)
    try:
        task_id = resolve_task(index, task, None)
        return src.why_doc(explain(index, task_id, run_id, store=index.path.parent))
    finally:
        index.close()


def plan(src: Sources, tasks: list[str], filters: list[str] | None = None) -> dict[str, Any]:
    """What `vx run TASKS --dry=json` prints: every task, its key and what the cache would do.

    Without filters every project's tasks of those names are planned (`--all`): the server
    runs at the root, where the cwd names no project."""
    from vx.run.prepare import RunOptions, plan_run

    options = RunOptions(
        tasks=tuple(tasks),
        cwd=src.root,
        all=not filters,
        filters=tuple(filters or ()),
        env=src.env,
        warm=False,
    )
    return src.plan_doc(plan_run(options))


def affected(src: Sources, tasks: list[str], base: str | None = None) -> dict[str, Any]:
    """What `vx run TASKS --affected[=BASE] --dry=json` prints: the tasks a change reaches,
    each with the change that reached it."""
    from vx.run.prepare import RunOptions, plan_run

    options = RunOptions(
        tasks=tuple(tasks), cwd=src.root, affected=base or "", env=src.env, warm=False
    )
    return src.plan_doc(plan_run(options))


def task_graph(src: Sources, project: str) -> dict[str, Any]:
    """A project's declared tasks, each with its command and the tasks it depends on."""
    from vx.loader.assemble import load_workspace
    from vx.run.prepare import RunOptions, select_plan
    from vx.util.fuzzy import did_you_mean

    ws = load_workspace(src.root)
    names = [p.name for p in ws.projects]
    found = next((p for p in ws.projects if p.name == project), None)
    if found is None:
        near = did_you_mean(project, names)
        hint = (
            f" — did you mean {near}?"
            if near
            else " — the workspace's projects are listed by vx show"
        )
        raise UserError(ErrorCode.UNKNOWN_PROJECT, f"no project named {project!r}{hint}")
    if not found.tasks:
        return {"project": project, "dir": found.rel_dir, "tasks": []}
    chosen = RunOptions(
        tasks=tuple(f"{project}#{t}" for t in found.tasks), cwd=src.root, env=src.env, warm=False
    )
    selected = select_plan(chosen)
    return {
        "project": project,
        "dir": found.rel_dir,
        "tasks": [
            {
                "id": str(tid),
                "command": selected.nodes[tid].command,
                "dependsOn": [str(d) for d in selected.graph.deps.get(tid, ())],
            }
            for tid in selected.order
        ],
    }


def run_now(src: Sources, tasks: list[str]) -> dict[str, Any]:
    """Run the tasks as `vx run TASKS --all` would; each task's verdict, failures' output."""
    from vx.events import TaskFinished, TaskOutput, TaskStatus
    from vx.run.prepare import RunOptions, run

    finished: list[TaskFinished] = []
    logs: dict[str, list[str]] = {}

    def sink(event: object) -> None:
        if isinstance(event, TaskFinished):
            finished.append(event)
        elif isinstance(event, TaskOutput):
            logs.setdefault(str(event.id), []).append(event.text)

    options = RunOptions(
        tasks=tuple(tasks),
        cwd=src.root,
        all=True,
        env=src.env,
        command="vx run " + " ".join(tasks) + " --all  (vx mcp)",
    )
    outcome = run(options, sink)
    return {
        "exitCode": outcome.exit_code,
        "tasks": [
            {
                "id": str(t.id),
                "status": str(t.status),
                "cache": str(t.cache),
                "exitCode": t.exit_code,
                **(
                    {"output": _bounded("".join(logs.get(str(t.id), [])), src)}
                    if t.status is TaskStatus.FAILED
                    else {}
                ),
            }
            for t in finished
        ],
    }


def audit_findings(src: Sources, task: str | None = None) -> dict[str, Any]:
    """Each task's newest audit (`vx run --audit`), as `vx audit` reads them: what it read
    or wrote that its config does not declare, and the change each finding calls for."""
    import json

    index = _open(src)
    if index is None:
        return {"audits": []}
    try:
        rows = index.latest_audits()
    finally:
        index.close()
    out = []
    for row in rows:
        tid = f"{row.project}#{row.task}"
        if task is not None and task not in (tid, row.task):
            continue
        try:
            report = json.loads(row.report)
        except ValueError:
            continue  # a damaged row reads as no audit
        if isinstance(report, dict):
            out.append({"id": tid, **report})
    return {"audits": out}


def _open(src: Sources) -> Index | None:
    from vx.cache.index import read_index

    return read_index(src.history)


def _need(src: Sources) -> Index:
    index = _open(src)
    if index is None:
        from vx.history.runs import NO_RUNS

        raise UserError(ErrorCode.NO_HISTORY, NO_RUNS)
    return index


def _secrets(src: Sources) -> tuple[str, ...]:
    from vx.util.secrets import secret_name

    return tuple(value for name, value in src.env.items() if secret_name(name))


def _bounded(text: str, src: Sources) -> str:
    """The text masked, and past the bound only its end, saying how much was cut."""
    from vx.run.taskenv import mask

    text = mask(text, _secrets(src))
    if len(text) <= OUTPUT_CHARS:
        return text
    cut = len(text) - OUTPUT_CHARS
    return f"[… {cut} earlier characters cut]\n" + text[cut:]


def _excerpt(src: Sources, loc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The lines around a named location, for a file inside the workspace; None otherwise."""
    from vx.run.taskenv import mask

    root = src.root.resolve()
    try:
        path = Path(str(loc["file"])).resolve()
        rel = path.relative_to(root)
        lines = path.read_text("utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return None
    line = loc.get("line")
    centre = int(line) if isinstance(line, int) and line > 0 else 1
    first = max(1, centre - EXCERPT_LINES)
    shown = lines[first - 1 : centre + EXCERPT_LINES]
    secrets = _secrets(src)
    return {
        "file": rel.as_posix(),
        **({"line": line} if line is not None else {}),
        "firstLine": first,
        "text": "\n".join(mask(t[:LINE_CHARS], secrets) for t in shown),
    }
