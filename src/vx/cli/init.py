"""`vx init`: a vx.config per package from its package.json scripts, and what to do next."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Section
from vx.cli.settings import FORMAT_FLAG, InitSettings, OutputFormat, output_format
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.adopt.init_plan import InitPlan, InitRequest
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.observe.runner import Observed

LISTED = 5

COMMAND = Command(
    "init",
    flags=(
        Flag("--dry", "print the files and the report; write nothing"),
        Flag("--observe", "run each new task twice under the tracer and write its cache block"),
        Flag("--force", "replace existing package configs (of any extension) with generated ones"),
        Flag("--toml", "write vx.config.toml and vx.workspace.toml"),
        Flag("--py", "write vx.config.py and vx.workspace.py"),
        Flag("--native", "in a Turbo or Nx repo: write vx.config.json files from its config"),
        Flag("--keep", "in a Turbo or Nx repo: read turbo.json or nx.json live instead"),
        FORMAT_FLAG._replace(
            help="with --dry, json prints the plan as one document (schemas/init.json)"
        ),
    ),
    sections=(
        Section(
            "What it writes",
            (
                ("vx.config.json", "one per package with scripts: each script a task, verbatim"),
                ("vx.workspace.json", "at the root, unless a vx.workspace.* is there"),
                ("", "an existing package config is kept (listed), unless --force"),
                ("uv workspace", "one vx.workspace.json whose cached build every package runs"),
            ),
        ),
        Section(
            "--observe (Linux, with strace)",
            (
                ("", "runs each new task twice, in dependency order, under the tracer, and"),
                ("", "writes cache.inputs and cache.outputs from what it read and wrote"),
                ("", "a task that writes files git tracks, fails, or writes other bytes the"),
                ("", "second time stays uncached, with the reason in a comment"),
                ("", "never runs servers, watchers or clean/publish/deploy-like tasks"),
            ),
        ),
        Section(
            "In a Turbo or Nx repo (turbo.json or nx.json at the root)",
            (
                ("--native", "the default: one vx.config.json per package, as vx migrate"),
                ("", "writes them from turbo.json / nx.json"),
                ("--keep", 'a vx.workspace.json with "tasksFrom": vx reads the runner\'s'),
                ("", "config live on every run, until --native writes it out"),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx init", ""),
                ("vx init --observe", ""),
                ("vx init --dry --format json", ""),
                ("vx init --toml", ""),
            ),
        ),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> InitSettings:
    """One config format, and JSON only for the plan `--dry` prints."""
    fmt = output_format(args)
    if fmt is OutputFormat.JSON and not args.switch("dry"):
        raise UserError(
            ErrorCode.USAGE,
            "vx init: --format json prints the plan, so it goes with --dry"
            " (vx init --dry --format json)",
        )
    if args.switch("toml") and args.switch("py"):
        raise UserError(ErrorCode.USAGE, "vx init: pick one of --toml and --py")
    config_format = "toml" if args.switch("toml") else "py" if args.switch("py") else "json"
    runner = _runner_mode(args, config_format, cwd)
    observe = args.switch("observe")
    if observe and args.switch("dry"):
        raise UserError(
            ErrorCode.USAGE,
            "vx init: --observe runs the tasks and writes what it saw, and --dry writes nothing:"
            " pick one",
        )
    if observe and runner is not None:
        raise UserError(
            ErrorCode.USAGE,
            "vx init: --observe is for package.json scripts; a Turbo or Nx repo's tasks name"
            " their outputs already — drop --observe",
        )
    return InitSettings(
        cwd=cwd,
        config_format=config_format,
        dry=args.switch("dry"),
        force=args.switch("force"),
        format=fmt,
        env=env,
        runner=runner,
        observe=observe,
    )


def _runner_mode(args: ParsedArgs, config_format: str, cwd: Path) -> str | None:
    """`keep` or `native` in a repo with turbo.json / nx.json (native unless told), else None;
    either flag anywhere else is refused."""
    keep, native = args.switch("keep"), args.switch("native")
    if keep and native:
        raise UserError(ErrorCode.USAGE, "vx init: pick one of --keep and --native")
    from vx.adopt.init_runner import runner_config
    from vx.workspace.discover import find_root

    try:
        root = find_root(cwd).root
    except UserError:
        root = None
    kind = runner_config(root) if root is not None else None
    if kind is None:
        if keep or native:
            flag = "--keep" if keep else "--native"
            raise UserError(
                ErrorCode.USAGE,
                f"vx init: {flag} is for a repo with turbo.json or nx.json at its root, and this"
                " one has neither — drop it to map package.json scripts",
            )
        return None
    if config_format != "json":
        raise UserError(
            ErrorCode.USAGE,
            f"vx init: in a Turbo or Nx repo vx init writes JSON; --{config_format} is for"
            " package.json scripts in a repo without turbo.json or nx.json — drop it",
        )
    return "keep" if keep else "native"


def execute(settings: InitSettings, streams: Streams) -> int:
    """Plan, then print the plan (--dry) or write it and print the report."""
    from vx.adopt.init_plan import ConfigFormat, InitRequest, apply_plan, plan_init

    request = InitRequest(
        cwd=settings.cwd,
        format=ConfigFormat(settings.config_format),
        force=settings.force,
        env=settings.env,
    )
    if settings.runner is not None:
        from vx.adopt.init_runner import RunnerMode, plan_runner_init, runner_config
        from vx.workspace.discover import find_root

        root = find_root(settings.cwd).root
        kind = runner_config(root)
        assert kind is not None  # noqa: S101 - resolve found it
        mode = RunnerMode(settings.runner)
        plan = plan_runner_init(root, kind, mode, force=settings.force)
    else:
        plan = plan_init(request)
    if settings.format is OutputFormat.JSON:
        streams.out.write(json.dumps(document(plan), indent=2, ensure_ascii=False) + "\n")
        return 0
    if settings.dry:
        for planned in plan.files:
            streams.out.write(f"--- {planned.path}\n{planned.text}")
        streams.out.write("\n")
    elif settings.observe:
        plan, seen = _observe(request, plan, streams)
        streams.out.write(observed_report(seen))
    else:
        apply_plan(plan)
    streams.out.write(report(plan, dry=settings.dry))
    return 0


def _observe(
    request: InitRequest, plan: InitPlan, streams: Streams
) -> tuple[InitPlan, tuple[Observed, ...]]:
    """Write the plan, observe the tasks it wrote, then write them again with what was seen."""
    from vx.adopt.init_observed import Observation
    from vx.adopt.init_plan import CHANGES, apply_plan, plan_init
    from vx.observe.runner import ObserveRequest, observe
    from vx.trace.probe import tracing_available

    probe = tracing_available()
    if not probe.ok:
        raise UserError(
            ErrorCode.REFUSED,
            f"vx init --observe: {probe.reason} — nothing was written; run vx init without"
            " --observe and add each cache block by hand",
        )
    if not _in_git(plan.root, request.env):
        raise UserError(
            ErrorCode.REFUSED,
            "vx init --observe: this is no git work tree, and observing needs git to tell"
            " sources from outputs — run git init && git add -A first",
        )
    apply_plan(plan)
    written = frozenset(f.path for f in plan.files)

    def started(task: str) -> None:
        streams.out.write(f"observing {task}\n")
        streams.out.flush()

    seen = observe(ObserveRequest(request.cwd, written, CHANGES, request.env), started)
    found = {(o.rel_dir, o.task): Observation(o.verdict.block, o.verdict.reason) for o in seen}
    again = plan_init(request._replace(observed=found, rewrite=written))
    again = again._replace(replaced=plan.replaced)  # the first pass removed them; say so
    apply_plan(again)
    return again, seen


def _in_git(root: Path, env: Mapping[str, str]) -> bool:
    from vx.git import GitError, head

    try:
        head(root, env=env)
    except GitError:
        return False
    return True


def observed_report(seen: tuple[Observed, ...]) -> str:
    """One line for what --observe cached, and one per task it left uncached, with why;
    nothing when no task needed observing (a uv workspace's build has its block already)."""
    if not seen:
        return ""
    cached = [o for o in seen if o.verdict.block is not None]
    lines = [f"observed {len(seen)} {'task' if len(seen) == 1 else 'tasks'}: {len(cached)} cached"]
    lines += [
        f"not cached: {o.task_id}: {o.verdict.reason}" for o in seen if o.verdict.block is None
    ]
    return "\n".join(lines) + "\n"


def document(plan: InitPlan) -> dict[str, object]:
    """The plan as schemas/init.json describes it."""
    return {
        "files": [{"path": f.path, "text": f.text} for f in plan.files],
        "kept": list(plan.kept),
        "replaced": list(plan.replaced),
        "todos": [{"reason": t.reason, "tasks": list(t.tasks)} for t in plan.todos],
        "notes": list(plan.notes),
        "next": plan.next,
    }


def _names(tasks: tuple[str, ...]) -> str:
    head = ", ".join(tasks[:LISTED])
    return head if len(tasks) <= LISTED else f"{head} and {len(tasks) - LISTED} more"


def report(plan: InitPlan, *, dry: bool) -> str:
    """What was written (or would be), kept and replaced; each TODO reason once; notes; next;
    and, while some task has no cache block, how to get one."""
    from vx.adopt.init_plan import CACHING
    from vx.adopt.init_tasks import CACHE_REASON

    verb = "would write" if dry else "wrote"
    lines = [f"{verb} {f.path}" for f in plan.files]
    if plan.mapped:
        configs = sum(1 for f in plan.files if "/vx.config." in f"/{f.path}")
        tasks = "task" if plan.mapped == 1 else "tasks"
        files = "config" if configs == 1 else "configs"
        lines.append(f"{plan.mapped} {tasks} from package.json scripts in {configs} {files}")
    lines += [f"kept {path} (as it is)" for path in plan.kept]
    lines += [f"replaced {path}" for path in plan.replaced]
    for todo in plan.todos:
        lines.append(f"TODO: {todo.reason}: {_names(todo.tasks)}")
    lines += [f"note: {note}" for note in plan.notes]
    lines.append(f"next: {plan.next}")
    if any(todo.reason == CACHE_REASON for todo in plan.todos):
        lines.append(CACHING)  # last, where it is read: how to get from here to cache hits
    return "\n".join(lines) + "\n"
