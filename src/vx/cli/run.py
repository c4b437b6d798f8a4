"""`vx run`: parse the flags, resolve them once into RunSettings, select, plan, run, render."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Number, Percent, Section, Takes
from vx.cli.settings import FORMAT_FLAG, OutputFormat, output_format
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.cache.index import Index
    from vx.cache.lock import RunLock
    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.events import Notice
    from vx.output.console import Console
    from vx.run.localcache import LocalCache
    from vx.run.plan import RunPlan
    from vx.run.session import RunOutcome, RunSession
    from vx.util.stopwatch import Stopwatch
    from vx.workspace.model import Workspace

CONTINUE_MODES = ("never", "deps-ok", "always")
OUTPUT_LOGS = ("full", "errors-only", "hash-only", "none")
_LARGEST_TIMER_MS = 2**31 - 1

COMMAND = Command(
    "run",
    flags=(
        Flag("--all", "select every project that declares the task"),
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
            "per-layer reads and writes, e.g. local:r or local:rw,remote:",
            Takes.VALUE,
            metavar="<spec>",
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
            "--tag",
            "label this run in the history (repeatable)",
            Takes.VALUE,
            metavar="<k=v>",
            repeat=True,
        ),
        FORMAT_FLAG,
    ),
    words="task",
    most_words=None,
    forwards=True,
    sections=(
        Section(
            "Selection",
            (
                ("(default)", "the project holding the current directory, and its dependsOn"),
                ("PKG#TASK", "that project's task; //#TASK is the root project's"),
                ("--all", "every project that declares the task"),
                ("-- ARGS", "forwarded, shell-quoted, to the requested tasks' commands"),
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
                ("VX_CACHE_DIR", "the cache directory, below --cache-dir and cacheDir"),
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
            ),
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything `vx run` was asked, resolved once from args, environment and workspace."""

    words: tuple[str, ...]
    forward: tuple[str, ...]
    all: bool
    exclude_all: bool
    exclude_names: frozenset[str] | None
    concurrency: int
    continue_mode: str
    retry: int
    timeout_ms: int | None
    output_logs: str | None
    verbosity: int
    format: OutputFormat
    cwd: Path
    env: Mapping[str, str]
    workspace: Workspace
    kill_grace_ms: int
    ready_notice_ms: int
    force: bool
    no_cache: bool
    cache_spec: str | None
    cache_dir: str | None
    summarize: str | None
    tags: tuple[tuple[str, str], ...]
    command: str
    watch: Stopwatch


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> RunSettings:
    """Load the workspace (its config sets defaults) and fold flags over env over config."""
    from vx.run.signals import kill_grace_ms
    from vx.run.taskenv import nested_run_refusal
    from vx.util.cpu import cpu_budget
    from vx.util.stopwatch import Stopwatch
    from vx.workspace.load import load_workspace

    watch = Stopwatch()
    ws = load_workspace(cwd)
    watch.mark("load workspace")
    refusal = nested_run_refusal(env, ws.root)
    if refusal:
        raise UserError(ErrorCode.REFUSED, refusal)
    exclude = args.text("exclude-dependencies")
    if exclude is not None and args.given("exclude-dependencies") and exclude == "":
        exclude_all, names = True, None
    elif exclude:
        exclude_all = False
        names = frozenset(n.strip() for n in exclude.split(",") if n.strip())
    else:
        exclude_all, names = False, None
    cpus = cpu_budget().count
    amount = args.amount("concurrency")
    if amount is None:
        configured = ws.config.concurrency
        amount = _config_amount(configured) if configured is not None else cpus
    return RunSettings(
        words=args.words,
        forward=args.forwarded or (),
        all=args.switch("all"),
        exclude_all=exclude_all,
        exclude_names=names,
        concurrency=_workers(amount, cpus),
        continue_mode=args.text("continue") or "deps-ok",
        retry=args.integer("retry") or 0,
        timeout_ms=_timeout(args.integer("timeout"), env, ws.config.timeout_ms),
        output_logs=args.text("output-logs"),
        verbosity=args.integer("verbosity") or 0,
        format=output_format(args),
        cwd=cwd,
        env=env,
        workspace=ws,
        kill_grace_ms=kill_grace_ms(env),
        ready_notice_ms=_positive_ms(env.get("VX_READY_NOTICE_MS"), 10_000),
        force=args.switch("force"),
        no_cache=args.switch("no-cache"),
        cache_spec=_cache_spec(args.text("cache")),
        cache_dir=args.text("cache-dir"),
        summarize=args.text("summarize") if args.given("summarize") else None,
        tags=tuple(_tag(t) for t in args.texts("tag")),
        command=" ".join(("vx", "run", *args_words(args))),
        watch=watch,
    )


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
    from vx.run.cachespec import resolve_axes

    if spec is not None:
        resolve_axes(spec, no_cache=False, force=False)  # refuse a bad spec at parse time
    return spec


def _tag(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UserError(ErrorCode.USAGE, f"--tag takes key=value, got {text!r}")
    return key, value


def _config_amount(value: int | str) -> int | Percent:
    if isinstance(value, str) and value.endswith("%"):
        return Percent(int(value[:-1]))
    return int(value)


def _workers(amount: int | Percent, cpus: int) -> int:
    if isinstance(amount, Percent):
        return max(1, round(cpus * amount.value / 100))
    return max(1, amount)


def _positive_ms(text: str | None, default: int) -> int:
    try:
        value = int(text or "")
    except ValueError:
        return default
    return value if 0 < value <= _LARGEST_TIMER_MS else default


def _timeout(flag: int | None, env: Mapping[str, str], configured: int | None) -> int | None:
    """`--timeout` > `VX_TASK_TIMEOUT` (a bad value is ignored, a huge one clamped) > config."""
    if flag is not None:
        return min(flag, _LARGEST_TIMER_MS)
    raw = env.get("VX_TASK_TIMEOUT", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return min(int(raw), _LARGEST_TIMER_MS)
    return configured


def execute(settings: RunSettings, streams: Streams) -> int:
    """Select, plan and run; render events as they come; die of a stop signal at the end."""
    from vx.run.signals import die_of_signal

    plan = _plan(settings, streams)
    settings.watch.mark("plan")
    code, signal = _run(settings, plan, streams)
    if signal is not None:
        die_of_signal(signal, streams=(streams.out, streams.err))
    return code


def _plan(settings: RunSettings, streams: Streams) -> RunPlan:
    from vx.graph.build import ExcludeDeps, build_graph
    from vx.graph.select import ScopeKind, resolve_requests
    from vx.run.plan import make_plan

    ws = settings.workspace
    words = settings.words or (_pick(settings, streams),)
    if settings.all:
        scope, kind = None, ScopeKind.ALL
    else:
        scope, kind = _cwd_scope(settings, words), ScopeKind.CWD
    selection = resolve_requests(ws, words, scope=scope, scope_kind=kind)
    exclude = None
    if settings.exclude_all or settings.exclude_names:
        exclude = ExcludeDeps(all=settings.exclude_all, names=settings.exclude_names or frozenset())
    graph = build_graph(ws, selection.roots, exclude=exclude)
    return make_plan(ws, graph, settings.forward)


def _cwd_scope(settings: RunSettings, words: tuple[str, ...]) -> frozenset[str] | None:
    """The cwd project's name; outside any project only `pkg#task` words can run."""
    from vx.ids import is_task_id
    from vx.workspace.load import cwd_project

    project = cwd_project(settings.workspace, settings.cwd)
    if project is not None:
        return frozenset({project.name})
    bare = [w for w in words if not is_task_id(w)]
    if not bare:
        return frozenset()
    hint = " ".join(bare)
    raise UserError(
        ErrorCode.USAGE,
        f"vx run: {settings.cwd} is inside no project, so {hint} has no project to run in"
        f" — pass --all (vx run {hint} --all), or name one as pkg#task",
    )


def _pick(settings: RunSettings, streams: Streams) -> str:
    """No task named: ask on a terminal, refuse anywhere a person cannot answer."""
    from vx.cli.picker import pick_task

    return pick_task(
        settings.workspace,
        settings.cwd,
        json_wanted=settings.format is OutputFormat.JSON,
        stdin=sys.stdin,
        prompt=streams.err,
    )


def _run(settings: RunSettings, plan: RunPlan, streams: Streams) -> tuple[int, int | None]:
    from vx import __version__
    from vx.events import Notice
    from vx.output.console import Console
    from vx.output.render import Flow, OutputLogs, Renderer, RenderSettings
    from vx.run.context import RunOptions
    from vx.run.scheduler import ContinueMode
    from vx.run.session import RunSession

    env = settings.env
    json_out = settings.format is OutputFormat.JSON
    out = Console.for_stream(streams.err if json_out else streams.out, env=env)
    err = Console.for_stream(streams.err, env=env)
    ci = env.get("CI", "").strip().lower() not in ("", "0", "false")
    flow = Flow.CI if ci else (Flow.BROAD if settings.all else Flow.FOCUSED)
    gha = env.get("GITHUB_ACTIONS", "").strip().lower() not in ("", "0", "false")
    prepared = _prepare_cache(settings, plan, err)
    settings.watch.mark("git, keys, cache")
    renderer = Renderer(
        out,
        err,
        RenderSettings(
            flow=flow,
            version=__version__,
            output_logs=OutputLogs(settings.output_logs) if settings.output_logs else None,
            verbosity=settings.verbosity,
            github_actions=gha,
            workers=settings.concurrency,
            cache_label=prepared.label,
        ),
    )
    options = RunOptions(
        concurrency=settings.concurrency,
        continue_mode=ContinueMode(settings.continue_mode),
        retry=settings.retry,
        timeout_ms=settings.timeout_ms,
        kill_grace_ms=settings.kill_grace_ms,
        ready_notice_ms=settings.ready_notice_ms,
    )
    session = RunSession(
        plan,
        options,
        cache=prepared.cache,
        emit=renderer.handle,
        env=env,
        root=settings.workspace.root,
        tick=lambda: renderer.tick(time.monotonic()),
    )
    with prepared.lock, session:
        for notice in prepared.notices:
            renderer.handle(notice)
        outcome = session.run()
        settings.watch.mark("run")
        for notice in _after_run(settings, plan, outcome, prepared):
            renderer.handle(notice)
        settings.watch.mark("history")
        if env.get("VX_TIMING"):
            renderer.handle(Notice(settings.watch.table().rstrip("\n")))
        session.finish(outcome)
        if session.held_servers():
            outcome = _hold(session, outcome, err)
            _rerecord(settings, plan, outcome, prepared)
        closing_note = prepared.cache.close()
        if closing_note:
            renderer.handle(Notice(f"[vx] {closing_note}"))
        renderer.close()
    if json_out:
        from vx.run.summary import summary_document

        streams.out.write(json.dumps(summary_document(plan, outcome), indent=2) + "\n")
    return outcome.exit_code, session.signals.signal


def _hold(session: RunSession, outcome: RunOutcome, err: Console) -> RunOutcome:
    """Keep vx in the foreground for the requested servers; their exit can turn the verdict."""
    import dataclasses

    held = session.hold()
    if held is None:
        return outcome
    sid, server_code, others = held
    line = f"vx: {sid} exited with code {server_code}"
    if others:
        noun = "task" if others == 1 else "tasks"
        line += f"; stopping {others} other persistent {noun}"
    err.write(line + "\n")
    if not server_code:
        return outcome
    return dataclasses.replace(outcome, exit_code=1, ended_at=time.time())


def _rerecord(
    settings: RunSettings, plan: RunPlan, outcome: RunOutcome, prepared: _Prepared
) -> None:
    """After a hold, the history and `--summarize` carry the verdict the server gave."""
    with contextlib.suppress(OSError):
        prepared.index.finish_invocation(
            outcome.run_id,
            exit_code=outcome.exit_code,
            ended_at_ms=int(outcome.ended_at * 1000),
        )
    _write_summary(settings, plan, outcome, prepared)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """What a run's cache needs, opened before any task: keys, store, index, the lock."""

    cache: LocalCache
    index: Index
    cache_dir: Path
    head: str
    branch: str | None
    notices: tuple[Notice, ...]
    lock: RunLock
    label: str


def _prepare_cache(settings: RunSettings, plan: RunPlan, err: Console) -> _Prepared:
    """Snapshot git once, key every task, open the cache, take the workspace's run lock."""
    from vx import git
    from vx.cache.fileids import FileTable
    from vx.cache.index import open_index
    from vx.cache.location import ensure_writable, remembered_identity, resolve_location
    from vx.cache.lock import acquire_run_lock
    from vx.cache.runtime import RuntimeProbe
    from vx.cache.store import Store
    from vx.events import Notice
    from vx.run.cachespec import names_remote, resolve_axes
    from vx.run.keys import check_outputs, derive_keys
    from vx.run.localcache import LocalCache

    root = settings.workspace.root
    snap = git.snapshot(root, env=settings.env)
    check_outputs(plan)
    home = Path(settings.env.get("HOME") or Path.home())
    location = resolve_location(
        root=root,
        identity=lambda: remembered_identity(
            snap.common_dir, home=home, compute=lambda: git.root_commits(snap, env=settings.env)
        ),
        home=home,
        cwd=settings.cwd,
        flag=settings.cache_dir,
        config=settings.workspace.config,
        env=settings.env,
    )
    inside = [
        os.path.relpath(d, root)
        for d in {location.store, location.directory}
        if str(d).startswith(str(root) + os.sep)
    ]
    keys = derive_keys(
        plan,
        files=FileTable(snap, exclude=inside),
        env=settings.env,
        runtime=RuntimeProbe(env=settings.env),
    )
    ensure_writable(location.store)
    index = open_index(location.store)
    notices: list[Notice] = []
    if index.notice:
        notices.append(Notice(f"[vx] {index.notice}"))
    axes = resolve_axes(settings.cache_spec, no_cache=settings.no_cache, force=settings.force)
    if names_remote(settings.cache_spec):
        notices.append(
            Notice("[vx] --cache names a remote layer, but no plugin supplies one: it is inert")
        )

    def waiting(pid: int) -> None:
        err.write(f"[vx] waiting for another vx run (pid {pid}) on this workspace to finish…\n")

    lock = acquire_run_lock(root, on_wait=waiting)
    cache = LocalCache(plan, keys, store=Store(location.store), index=index, axes=axes)
    label = "local cache" if axes.answers else "cache off"
    return _Prepared(
        cache,
        index,
        location.directory,
        snap.head,
        git.head_branch(snap),
        tuple(notices),
        lock,
        label,
    )


def _after_run(
    settings: RunSettings, plan: RunPlan, outcome: RunOutcome, prepared: _Prepared
) -> list[Notice]:
    """Record the history, keep failures, write --summarize: each may fail with one line."""
    from vx.events import Notice
    from vx.run.record import keep_failures, record_run

    notes: list[Notice] = []
    try:
        note = record_run(
            prepared.index,
            plan,
            outcome,
            command=settings.command,
            git_sha=prepared.head,
            git_branch=prepared.branch,
            env=settings.env,
            tags=settings.tags,
        )
        if note:
            notes.append(Notice(f"[vx] {note}"))
        if prepared.index.off is None:  # else its one notice said the history is not kept
            keep_failures(prepared.cache_dir, plan, outcome)
    except OSError as error:
        notes.append(Notice(f"vx: failed to write the run history: {error.strerror or error}"))
    note = _write_summary(settings, plan, outcome, prepared)
    if note:
        notes.append(Notice(note))
    return notes


def _write_summary(
    settings: RunSettings, plan: RunPlan, outcome: RunOutcome, prepared: _Prepared
) -> str | None:
    """Write `--summarize`'s file; the line to print about it (None when not asked)."""
    from vx.run.summary import summary_document

    if settings.summarize is None:
        return None
    target = (
        settings.cwd / settings.summarize
        if settings.summarize
        else prepared.cache_dir / "runs" / f"{outcome.run_id}.json"
    )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(summary_document(plan, outcome), indent=2) + "\n")
    except OSError as error:
        return f"vx: failed to write {target}: {error.strerror or error}"
    return f"[vx] run summary written to {target}"
