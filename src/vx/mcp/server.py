"""The `vx mcp` server: the answers listed as MCP tools, served over stdio by the official SDK.

Each tool is a plain function whose parameters the SDK turns into its input schema. Its
description is what a client's model reads to pick it, so it says what the tool answers; the
descriptions are a table, not docstrings, which `python -OO` would strip.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.mcp import answers

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.mcp.answers import Sources

INSTRUCTIONS = (
    "vx is this repository's task runner. These tools read what vx recorded and plans: recent"
    " runs and their verdicts, a failure's output and the files it names, why a task missed"
    " the cache, what a task list would run, what a change affects, a project's task graph,"
    " and what audited runs saw tasks do that their configs do not declare."
    " They never run a task, except run_tasks where the server was started with --allow-run."
)

DESCRIPTIONS = {
    "recent_runs": "The most recent vx runs, newest first: command, verdict, task counts, git"
    " branch and sha. `failed` keeps only runs that failed.",
    "run_summary": "One recorded run (the latest when no id is given): every task's status,"
    " cache outcome, key and duration; failed tasks include their output (masked, clipped).",
    "last_failure": "The latest failed run (or the one named): each failed task's output,"
    " masked and clipped to its end, and excerpts of the workspace files its output names.",
    "why_missed": "Why a task (`pkg#task`, or a task name one project ran) executed instead of"
    " being restored from the cache: the key components that changed since its previous run,"
    " such as the files edited, and what to do about them.",
    "plan": "What `vx run TASKS` would do, without running it: every task in dependency order,"
    " its cache key and whether it would hit or execute. `filters` are `--filter` values"
    " (`app...`, `!docs`); without them every project's tasks of those names are planned.",
    "affected": "The tasks a change reaches: the named tasks of the projects changed since"
    " `base`'s merge base (the workspace's default base when omitted; uncommitted edits"
    " count), each with the change that reached it.",
    "task_graph": "A project's declared tasks, each with its command and the tasks it depends on.",
    "audit_findings": "What the newest audited run of each task (`vx run --audit`) saw it do"
    " that its config does not declare: undeclared reads, writes outside its outputs, missing"
    " dependsOn edges, root toolchain reads; each with the config change it calls for."
    " `task` (`pkg#task` or a task name) narrows to one.",
    "run_tasks": "Run tasks as `vx run TASKS --all` would (cache hits are restored): the run's"
    " exit code, each task's verdict, and the output of those that failed.",
}


def tools(src: Sources, *, allow_run: bool) -> list[Callable[..., dict[str, Any]]]:
    """The tool functions for these sources; `run_tasks` only when running is allowed."""

    def recent_runs(limit: int = 10, failed: bool = False) -> dict[str, Any]:
        return _answer(answers.recent_runs, src, limit, failed=failed)

    def run_summary(run_id: str | None = None) -> dict[str, Any]:
        return _answer(answers.run_tasks_of, src, run_id)

    def last_failure(run_id: str | None = None) -> dict[str, Any]:
        return _answer(answers.last_failure, src, run_id)

    def why_missed(task: str, run_id: str | None = None) -> dict[str, Any]:
        return _answer(answers.why_missed, src, task, run_id)

    def plan(tasks: list[str], filters: list[str] | None = None) -> dict[str, Any]:
        return _answer(answers.plan, src, tasks, filters)

    def affected(tasks: list[str], base: str | None = None) -> dict[str, Any]:
        return _answer(answers.affected, src, tasks, base)

    def task_graph(project: str) -> dict[str, Any]:
        return _answer(answers.task_graph, src, project)

    def audit_findings(task: str | None = None) -> dict[str, Any]:
        return _answer(answers.audit_findings, src, task)

    def run_tasks(tasks: list[str]) -> dict[str, Any]:
        return _answer(answers.run_now, src, tasks)

    found: list[Callable[..., dict[str, Any]]] = [
        recent_runs,
        run_summary,
        last_failure,
        why_missed,
        plan,
        affected,
        task_graph,
        audit_findings,
    ]
    return [*found, run_tasks] if allow_run else found


def _answer(tool: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The tool's answer; a user error (an unknown task, no history yet) is the tool's error
    message, the one line the CLI would print, and no stack in the server's log."""
    from mcp.server.mcpserver.exceptions import ToolError

    from vx.errors import UserError

    try:
        return tool(*args, **kwargs)
    except UserError as err:
        raise ToolError(err.message) from None


def serve(src: Sources, *, allow_run: bool) -> None:
    """Serve the tools over stdin/stdout until the client closes the stream."""
    from mcp.server.mcpserver import MCPServer

    from vx import __version__

    server = MCPServer("vx", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    for tool in tools(src, allow_run=allow_run):
        server.add_tool(tool, name=tool.__name__, description=DESCRIPTIONS[tool.__name__])
    server.run("stdio")
