"""`vx run`: parse the flags, resolve them once into RunSettings, select, plan, run, render."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING

from vx.cli import foreign
from vx.cli.parser import Command, Flag, Number, Section, Takes
from vx.cli.settings import (
    AFFECTED_FLAG,
    FILTER_FLAG,
    FORMAT_FLAG,
    OutputFormat,
    ci_bases,
    output_format,
)
from vx.errors import ErrorCode, UserError
from vx.util.record import Record
from vx.util.text import shell_quote

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from vx.cli.artifacts import Artifacts
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.events import Event
    from vx.output.console import Console
    from vx.output.render import Renderer
    from vx.run.prepare import RunOptions
    from vx.shard.spec import ShardSpec
    from vx.workspace.model import Workspace

CONTINUE_MODES = ("never", "deps-ok", "always")
OUTPUT_LOGS = ("full", "errors-only", "hash-only", "none")
DRY_FORMATS = ("text", "json")

FLAGS = (
    Flag("--all", "select every project that declares the task"),
    FILTER_FLAG,
    AFFECTED_FLAG,
    Flag(
        "--exclude-dependencies",
        "drop dependsOn edges: all of them, or only the tasks with these comma-separated names",
        Takes.OPTIONAL,
        metavar="<names>",
    ),
    Flag(
        "--concurrency",
        "how many tasks execute at once: a count or a share of the CPUs (50%); default:"
        " the workspace's concurrency, else the CPUs vx may use (cgroup quota included)",
        Takes.VALUE,
        metavar="<n|n%>",
        number=Number.INT_OR_PERCENT,
        minimum=1,
    ),
    Flag(
        "--continue",
        "what a failure takes down: never (stop), deps-ok (its dependants; the default),"
        " always (nothing; what a bare --continue means)",
        Takes.OPTIONAL,
        metavar="never|deps-ok|always",
        choices=CONTINUE_MODES,
        bare="always",
    ),
    Flag(
        "--retry",
        "re-run a failed task up to n more times (a task's exec.retries wins)",
        Takes.VALUE,
        metavar="<n>",
        number=Number.INT,
    ),
    Flag(
        "--timeout",
        "default per-task timeout in ms for tasks without exec.timeout (for a persistent"
        " task: how long it may take to become ready)",
        Takes.VALUE,
        metavar="<ms>",
        number=Number.INT,
        minimum=1,
    ),
    Flag(
        "--output-logs",
        "how much task output prints (default: chosen by the flow)",
        Takes.VALUE,
        choices=OUTPUT_LOGS,
    ),
    Flag(
        "--verbosity",
        "1 or more adds a per-task table above the footer",
        Takes.VALUE,
        metavar="<n>",
        number=Number.INT,
    ),
    Flag("--force", "re-run every task (no cache reads) and refresh the cache"),
    Flag("--no-cache", "no cache reads or writes; declared outputs are left alone"),
    Flag(
        "--cache",
        "per-layer reads and writes: local:<r|w|rw>, remote:<r|w|rw>, comma-separated"
        " (local:r, local:rw,remote:r, remote: for no remote layer)",
        Takes.VALUE,
        metavar="<spec>",
    ),
    Flag(
        "--download",
        "where a remote hit's outputs land: all (default) restores every one; toplevel only"
        " the requested tasks'; none none, until a task running here depends on them",
        Takes.VALUE,
        metavar="<mode>",
        choices=("all", "toplevel", "none"),
    ),
    Flag(
        "--executor",
        "where cacheable tasks execute: local (default), or reapi: as actions on the REAPI"
        " server at VX_REAPI_URL, run by its workers (vx worker)",
        Takes.VALUE,
        metavar="<where>",
        choices=("local", "reapi"),
    ),
    Flag(
        "--cache-dir",
        "keep the whole cache in this directory (relative to the current one)",
        Takes.VALUE,
        metavar="<path>",
        no_dash=True,
    ),
    Flag(
        "--summarize",
        "write the run's JSON record to <cacheDir>/runs/<runId>.json, or to <path>",
        Takes.OPTIONAL,
        metavar="<path>",
        empty_is_bare=True,
    ),
    Flag(
        "--dry",
        "print every task's key and predicted cache status, and the predicted time;"
        " run nothing (json: one document on stdout, schemas/plan.json)",
        Takes.OPTIONAL,
        choices=DRY_FORMATS,
        bare="text",
    ),
    Flag(
        "--graph",
        "print the task graph as Graphviz DOT, coloured by predicted cache status, or"
        " write it to <path>; run nothing",
        Takes.OPTIONAL,
        metavar="<path>",
        empty_is_bare=True,
    ),
    Flag(
        "--profile",
        "write a Chrome trace of the run, one lane per worker, to profile.json or <path>",
        Takes.OPTIONAL,
        metavar="<path>",
        empty_is_bare=True,
    ),
    Flag(
        "--report",
        "print a markdown report above the footer; html: write the run as a picture to"
        " report.html or <path> (repeatable: --report --report=html asks for both)",
        Takes.OPTIONAL,
        metavar="markdown|html[=<path>]",
        repeat=True,
        bare="markdown",
    ),
    Flag(
        "--report-file",
        "append the markdown report to <path> (the form for $GITHUB_STEP_SUMMARY)",
        Takes.VALUE,
        metavar="<path>",
        no_dash=True,
    ),
    Flag(
        "--tag",
        "label this run in the history (repeatable)",
        Takes.VALUE,
        metavar="<k=v>",
        repeat=True,
    ),
    Flag(
        "--audit",
        "trace every task that executes (Linux, strace) and say, one line each, what its"
        " config does not declare; strict also saves nothing for a task with findings"
        " (default: the workspace's audit, else off)",
        Takes.OPTIONAL,
        choices=("warn", "strict", "off"),
        bare="warn",
    ),
    Flag(
        "--shard",
        "run the K-th of N shards of the plan, dealt by expected cost (default: CI_NODE_INDEX"
        "/CI_NODE_TOTAL, CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL); with --dry: every shard's part",
        Takes.VALUE,
        metavar="<K/N>",
    ),
    Flag(
        "--shard-run",
        "the id the shards of one CI run share, to compare plans through the remote cache"
        " (default: GITHUB_RUN_ID+GITHUB_RUN_ATTEMPT, CI_PIPELINE_ID, CIRCLE_WORKFLOW_ID)",
        Takes.VALUE,
        metavar="<id>",
    ),
    Flag(
        "--shard-wait",
        "seconds a shard waits for a dependency another shard owns before running it (300)",
        Takes.VALUE,
        metavar="<s>",
        number=Number.INT,
        minimum=0,
    ),
    Flag(
        "--frozen",
        "read every project config from vx-lock.json, evaluating none (run vx lock --check"
        " first: the run checks nothing against the repo)",
    ),
    FORMAT_FLAG,
)
COMMAND = Command(
    "run",
    flags=FLAGS,
    words="task",
    most_words=None,
    forwards=True,
    rewrite=foreign.rewrite,
    sections=(
        Section(
            "Selection",
            (
                ("(default)", "the project holding the current directory, and its dependsOn"),
                ("PKG#TASK", "that project's task; //#TASK is the root project's"),
                ("--all", "every project that declares the task"),
                ("--filter P", "the projects P selects (below), instead of the current one"),
                ("--affected[=BASE]", "the tasks a change since BASE's merge base reaches:"),
                ("", "those whose inputs it touches, and those depending on one of them"),
                ("-- ARGS", "forwarded, shell-quoted, to the requested tasks' commands"),
            ),
        ),
        Section(
            "Filters (--filter, repeatable; every include first, then every ! exclude)",
            (
                ("NAME, @scope/*", "by package name; * matches any run, / included"),
                ("NAME without its scope", "the one scoped package of that name (ui: @acme/ui)"),
                ("apps/*", "a name with a / that matches no package is a directory"),
                ("./DIR, {DIR}", "the project at DIR, else the projects under it"),
                ("./GLOB", "projects whose dir matches (** also matches zero dirs)"),
                (". and //", "the root project (., when the root is none: every project)"),
                ("tag:PATTERN", "projects whose config tags match"),
                ("X... / X^...", "X and what it depends on / only what it depends on"),
                ("...X / ...^X", "X and its dependents / only its dependents"),
                ("...X...", "X, its dependents, and what all of them depend on"),
                ("[REF], X[REF]", "projects (of X) with files changed since REF's merge base"),
                ("X...[REF]", "X when it or something it depends on changed since REF"),
                ("!X", "leave out what X selects"),
            ),
        ),
        Section(
            "Exit codes",
            (
                ("0", "every task succeeded or was restored"),
                ("1", "a task failed or was skipped, a requested server exited non-zero,"),
                ("", "or a refusal"),
                ("130/143/129", "interrupted by SIGINT/SIGTERM/SIGHUP"),
            ),
        ),
        Section(
            "Environment",
            (
                ("VX_TASK_TIMEOUT", "default task timeout (ms), below --timeout"),
                ("VX_KILL_GRACE_MS", "SIGTERM → SIGKILL grace for a stopped task (2000)"),
                ("VX_READY_NOTICE_MS", "when to say a persistent task is not ready yet (10000)"),
                ("VX_TIMING", "print where the run's time went, stage by stage"),
                ("VX_WARM=0", "never replay the last all-cached run; always take the full path"),
                ("VX_CACHE_DIR", "the cache directory, below --cache-dir and cacheDir"),
                ("CI_NODE_INDEX/TOTAL", "GitLab's parallel job (1-based): --shard, unless given"),
                ("CIRCLE_NODE_INDEX/TOTAL", "CircleCI's parallelism (0-based): likewise"),
                ("CI, GITHUB_ACTIONS", "the CI output flow and its ::group:: framing"),
                ("NO_COLOR, FORCE_COLOR", "colour off / on"),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx run build", "build this project and what it depends on"),
                ("vx run build test --all", "two tasks in every project"),
                ("vx run app#test -- --watch", "forward --watch to app's test command"),
                ("vx run build --all --continue", "surface every failure in one pass"),
                ("vx run build --force", "rebuild everything and refresh the cache"),
                ("vx run build --dry", "what would run and what would restore, and how long"),
                ("vx run build --graph | dot -Tsvg", "draw the task graph"),
                ("vx run build --filter '...@acme/core'", "core and everything depending on it"),
                ("vx run test --filter '[main]'", "where files changed since main"),
                ('vx run ci --report-file="$GITHUB_STEP_SUMMARY"', "a CI step summary"),
                ("vx run build --report=html", "the run as a picture in report.html"),
                ("vx run test --affected --dry", "what a change reaches, and why"),
                ("vx run build --all --shard 2/4", "the second of four CI machines' part"),
            ),
        ),
        foreign.help_section(f.name for f in FLAGS),
    ),
)


class RunSettings(Record):
    """Everything `vx run` was asked, resolved once from args and environment.

    The workspace's own defaults (concurrency, timeout, cache dir) are the engine's to apply:
    resolving them here would read every config before the warm path could skip that.
    """

    options: RunOptions
    all: bool
    output_logs: str | None
    verbosity: int
    format: OutputFormat
    env: Mapping[str, str]
    dry: str | None = None
    graph: str | None = None
    artifacts: Artifacts | None = None

    @property
    def plans(self) -> bool:
        """`--dry` or `--graph`: plan, print, and run nothing."""
        return self.dry is not None or self.graph is not None


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> RunSettings:
    """Fold the flags into the engine's RunOptions; nothing here reads the workspace."""
    from vx.cli.artifacts import artifacts
    from vx.run.prepare import RunOptions

    exclude = args.text("exclude-dependencies")
    excluded: bool | frozenset[str] = False
    if exclude is not None and args.given("exclude-dependencies") and exclude == "":
        excluded = True
    elif exclude:
        excluded = frozenset(n.strip() for n in exclude.split(",") if n.strip())
    amount = args.amount("concurrency")
    fmt = output_format(args)
    summarize = args.text("summarize") if args.given("summarize") else None
    dry = args.text("dry")
    graph = args.text("graph")
    wanted = artifacts(args.text("profile"), args.texts("report"), args.text("report-file"))
    writes = "--summarize" if summarize is not None else wanted.asked
    _refuse_planning_clashes(dry, graph, writes=writes, fmt=fmt)
    options = RunOptions(
        tasks=args.words,
        cwd=cwd,
        all=args.switch("all"),
        filters=args.texts("filter"),
        affected=args.text("affected") if args.given("affected") else None,
        ci_bases=ci_bases(env),
        forward=args.forwarded or (),
        exclude_dependencies=excluded,
        concurrency=None if amount is None else str(amount),
        continue_mode=args.text("continue") or "deps-ok",
        retry=args.integer("retry") or 0,
        timeout_ms=args.integer("timeout"),
        force=args.switch("force"),
        no_cache=args.switch("no-cache"),
        cache=_cache_spec(args.text("cache")),
        download=args.text("download") or "all",
        executor=args.text("executor"),
        cache_dir=args.text("cache-dir"),
        summarize=summarize,
        tags=tuple(_tag(t) for t in args.texts("tag")),
        command=" ".join(shell_quote(w) for w in ("vx", "run", *args_words(args))),
        env=env,
        timing=bool(env.get("VX_TIMING")),
        warm=fmt is OutputFormat.PRETTY and writes is None and env.get("VX_WARM") != "0",
        frozen=args.switch("frozen"),
        audit=args.text("audit") if args.given("audit") else None,
        shard=_shard(args, env),
    )
    if graph is not None and options.shard is not None:
        msg = "--graph draws the whole plan: drop --shard, or use --dry to see each shard's part"
        raise UserError(ErrorCode.USAGE, msg)
    return RunSettings(
        options=options,
        all=options.all,
        output_logs=args.text("output-logs"),
        verbosity=args.integer("verbosity") or 0,
        format=fmt,
        env=env,
        dry=dry,
        graph=graph,
        artifacts=wanted if wanted.asked else None,
    )


def _refuse_planning_clashes(
    dry: str | None, graph: str | None, *, writes: str | None, fmt: OutputFormat
) -> None:
    """`--dry` and `--graph` each run nothing: with each other, with a flag that writes about
    a run, or with another product on stdout, one of the two asks is refused."""
    if dry is not None and graph is not None:
        raise UserError(ErrorCode.USAGE, "--dry and --graph both plan without running: pick one")
    planner = "--dry" if dry is not None else "--graph" if graph is not None else None
    if planner is None:
        return
    if writes is not None:
        msg = f"{writes} writes about a run, and {planner} runs nothing: drop one of them"
        raise UserError(ErrorCode.USAGE, msg)
    if fmt is OutputFormat.JSON and dry == "text":
        msg = "--format json prints a run's summary; for the plan as JSON use --dry=json"
        raise UserError(ErrorCode.USAGE, msg)
    if fmt is OutputFormat.JSON and graph == "":
        msg = "--format json and a bare --graph both print on stdout: write --graph=<path>"
        raise UserError(ErrorCode.USAGE, msg)


def args_words(args: ParsedArgs) -> tuple[str, ...]:
    """The invocation as the history records it: tasks, flags, then what followed `--`."""
    flags: list[str] = []
    for dest, value in args.values.items():
        if value is True:
            flags.append(f"--{dest}")
        elif value is False:
            continue
        elif isinstance(value, tuple):
            flags.extend(f"--{dest}={v}" for v in value)
        elif value == "":
            flags.append(f"--{dest}")
        else:
            flags.append(f"--{dest}={value}")
    tail = ("--", *args.forwarded) if args.forwarded is not None else ()
    return (*args.words, *flags, *tail)


def _cache_spec(spec: str | None) -> str | None:
    if spec is not None:
        from vx.run.cachespec import resolve_axes

        resolve_axes(spec, no_cache=False, force=False)  # refuse a bad spec at parse time
    return spec


def _shard(args: ParsedArgs, env: Mapping[str, str]) -> ShardSpec | None:
    """`--shard` and its companions, else the CI's node variables; None when not sharded."""
    given = args.given("shard") or args.given("shard-run") or args.given("shard-wait")
    if not given and not any(v in env for v in ("CI_NODE_TOTAL", "CIRCLE_NODE_TOTAL")):
        return None  # the common case pays no import
    from vx.shard.spec import resolve_shard

    wait = args.integer("shard-wait")
    return resolve_shard(
        args.text("shard"),
        env,
        run_flag=args.text("shard-run"),
        wait_s=None if wait is None else float(wait),
    )


def _tag(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UserError(ErrorCode.USAGE, f"--tag takes key=value, got {text!r}")
    return key, value


def make_renderer(settings: RunSettings, streams: Streams) -> Renderer:
    """The renderer a run's events go to, as the flags, CI and the terminal decide it.

    `vx watch` makes one per cycle through here, so its cycles look like `vx run`'s.
    """
    from vx import __version__
    from vx.output.console import Console
    from vx.output.render import Flow, OutputLogs, Renderer, RenderSettings

    env = settings.env
    json_out = settings.format is OutputFormat.JSON
    out = Console.for_stream(streams.err if json_out else streams.out, env=env)
    err = Console.for_stream(streams.err, env=env)
    ci = env.get("CI", "").strip().lower() not in ("", "0", "false")
    flow = Flow.CI if ci else (Flow.BROAD if settings.all else Flow.FOCUSED)
    gha = env.get("GITHUB_ACTIONS", "").strip().lower() not in ("", "0", "false")
    return Renderer(
        out,
        err,
        RenderSettings(
            flow=flow,
            version=__version__,
            output_logs=OutputLogs(settings.output_logs) if settings.output_logs else None,
            verbosity=settings.verbosity,
            github_actions=gha,
        ),
    )


def execute(settings: RunSettings, streams: Streams) -> int:
    """Hand the run to the engine, render its events as they come, die of a stop signal."""
    from vx.output.console import Console
    from vx.run.prepare import run

    env = settings.env
    json_out = settings.format is OutputFormat.JSON
    if settings.plans:
        from vx.cli.dry import plan_and_print

        wants_json = settings.dry == "json"
        planning = settings.options._replace(
            pick=lambda ws, cwd: _pick(ws, cwd, json_out=wants_json, streams=streams)
        )
        return plan_and_print(planning, settings, streams)
    err = Console.for_stream(streams.err, env=env)
    renderer = make_renderer(settings, streams)
    options = settings.options._replace(
        tick=lambda: renderer.tick(time.monotonic()),
        pick=lambda ws, cwd: _pick(ws, cwd, json_out=json_out, streams=streams),
    )
    wanted = settings.artifacts
    here = options.cwd or _cwd()
    sink: Callable[[Event], None] = renderer.handle
    if wanted is not None and wanted.wants_markdown:
        sink = _with_report(wanted, renderer, err, cwd=here)
    try:
        outcome = run(options, sink)
    finally:
        renderer.close()
    if wanted is not None and outcome.plan is not None:
        from vx.cli.artifacts import write_files

        for line in write_files(wanted, outcome, cwd=here):
            err.write(line + "\n")
    if json_out and outcome.plan is not None:
        from vx.run.summary import summary_document

        streams.out.write(json.dumps(summary_document(outcome.plan, outcome), indent=2) + "\n")
    if outcome.signal is not None:
        from vx.run.groups.signals import die_of_signal

        die_of_signal(outcome.signal, streams=(streams.out, streams.err))
    return outcome.exit_code


def _with_report(
    wanted: Artifacts, renderer: Renderer, err: Console, *, cwd: Path
) -> Callable[[Event], None]:
    """The renderer's sink, with the markdown report read off the events as they pass."""
    from vx.cli.artifacts import markdown_sink

    tap = markdown_sink(
        wanted,
        cwd=cwd,
        above_footer=renderer.above_footer,
        note=lambda line: err.write(line + "\n"),
    )

    def sink(event: Event) -> None:
        tap(event)
        renderer.handle(event)

    return sink


def _cwd() -> Path:
    from pathlib import Path

    return Path.cwd()


def _pick(ws: Workspace, cwd: Path, *, json_out: bool, streams: Streams) -> str:
    """No task named: ask on a terminal, refuse anywhere a person cannot answer."""
    from vx.cli.picker import pick_task

    return pick_task(ws, cwd, json_wanted=json_out, stdin=sys.stdin, prompt=streams.err)
