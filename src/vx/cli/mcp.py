"""`vx mcp`: serve what vx knows to a Model Context Protocol client over stdin/stdout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.cli.history import CACHE_DIR_FLAG
from vx.cli.parser import Command, Flag, Section
from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.history.why import Explanation
    from vx.run.plan import RunPlan

COMMAND = Command(
    "mcp",
    flags=(
        Flag("--allow-run", "also list run_tasks, a tool that runs tasks (off: tools only read)"),
        CACHE_DIR_FLAG,
    ),
    sections=(
        Section(
            "Tools",
            (
                ("recent_runs", "the newest runs and their verdicts"),
                ("run_summary", "one run's tasks, with failures' output"),
                ("last_failure", "the latest failure's output and the files it names"),
                ("why_missed", "why a task executed instead of hitting the cache"),
                ("plan", "what a task list would run (vx run --dry)"),
                ("affected", "the tasks a change reaches (vx run --affected --dry)"),
                ("task_graph", "a project's tasks and their dependencies"),
                ("run_tasks", "run tasks; listed only with --allow-run"),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx mcp", "what an MCP client's config starts (see docs/observability.md)"),
                ("vx mcp --allow-run", "let the client run tasks too"),
            ),
        ),
    ),
)


class McpSettings(Record):
    """`vx mcp`: whether the run tool is listed, where the history lives, the world."""

    allow_run: bool
    cache_dir: str | None
    env: Mapping[str, str]
    cwd: Path


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> McpSettings:
    """Flags only: the workspace is found when the server starts."""
    return McpSettings(
        allow_run=args.switch("allow-run"),
        cache_dir=args.text("cache-dir"),
        env=env,
        cwd=cwd,
    )


def execute(settings: McpSettings, streams: Streams) -> int:
    """Find the workspace and its history, then serve until the client hangs up."""
    del streams  # stdout is the protocol's: the SDK owns it
    from vx.cli.history import history_dir
    from vx.mcp.answers import Sources
    from vx.workspace.discover import find_root

    if not _sdk_installed():
        raise UserError(
            ErrorCode.USAGE,
            "vx mcp needs the MCP Python SDK (2.x), which is not installed"
            " — pip install 'vx-runner[mcp]'",
        )
    from vx.mcp.server import serve

    root = find_root(settings.cwd).root
    sources = Sources(
        root=root,
        history=history_dir(settings.cache_dir, settings.env, settings.cwd),
        env=settings.env,
        plan_doc=_plan_doc,
        why_doc=_why_doc,
    )
    serve(sources, allow_run=settings.allow_run)
    return 0


def _sdk_installed() -> bool:
    """The SDK's server package can be imported (2.x names it `mcp.server.mcpserver`)."""
    import importlib.util

    try:
        return importlib.util.find_spec("mcp.server.mcpserver") is not None
    except ImportError:  # no `mcp`, or one whose `server` is no package
        return False


def _plan_doc(plan: RunPlan) -> dict[str, Any]:
    from vx.cli.dry import plan_view
    from vx.output.plan import plan_document

    return plan_document(plan_view(plan))


def _why_doc(explanation: Explanation) -> dict[str, Any]:
    from vx.cli.why import _document  # vx why's own --format json document, not a copy

    return _document(explanation)
