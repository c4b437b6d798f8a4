"""The one orchestration of a run, called by the CLI, `vx watch` and the public API.

`plan_run` stops before anything executes (what `--dry` and `--graph` print), `prepare_run`
also keys every task and opens the cache, and `run` executes: it first asks the warm path
whether the last identical run still holds, and only when it cannot prove that does it load
the workspace and walk the graph. Everything returns data; events go to the caller's sink.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.cache.index import Index
    from vx.cache.location import CacheLocation
    from vx.events import Event, Notice
    from vx.git import GitSnapshot
    from vx.ids import TaskId
    from vx.plugins.model import Plugin
    from vx.run.context import ExecOptions
    from vx.run.keys import KeySet
    from vx.run.localcache import LocalCache
    from vx.run.outcome import RunOutcome
    from vx.run.plan import RunPlan
    from vx.run.remote.cache import LayeredCache
    from vx.run.remote.sharding import ShardCut
    from vx.run.servers import HeldServers, Release
    from vx.run.session import RunSession
    from vx.shard.spec import ShardSpec
    from vx.util.stopwatch import Stopwatch
    from vx.workspace.config_reads import ConfigReads
    from vx.workspace.model import Workspace

    Sink = Callable[[Event], None]
    Handed = Callable[[TaskId, tuple[TaskId, ...]], Mapping[str, str]]

__all__ = [
    "PlanWitness",
    "PreparedRun",
    "RunOptions",
    "plan_run",
    "prepare_run",
    "run",
    "select_plan",
    "witnessed_plan",
]

_LARGEST_TIMER_MS = 2**31 - 1


class RunOptions(Record):
    """What a run is asked to do, before the workspace is read.

    `tasks` are words as `vx run` takes them (`build`, `app#test`); with none, `pick` is
    asked for one. `concurrency` is a count, a share of the CPUs (`"50%"`) or None for the
    workspace's setting; `exclude_dependencies` is True for every edge or a set of task names.
    `filters` are `--filter` values as typed (`"...app"`, `"!docs"`, `"[main]"`), evaluated
    once the workspace is loaded; with them the filters, not the cwd or `all`, choose where
    bare task names run.
    `affected` is `--affected`'s base (`""`: the default one), None without the flag;
    `ci_bases` are the refs the CI names as the change's base (a pull request's base branch,
    a push's `before`), which the default base tries after the workspace's `affectedBase`.
    `env` is the environment keys and tasks see (the process's when None). `tick` is called
    regularly while tasks run, for a live display. `command` is what the history records.
    `frozen` loads project configs from vx-lock.json instead of evaluating them.
    `keep_servers`, when given, is handed the requested servers that became ready, still
    running, and the run returns instead of holding them (`vx watch` keeps them across cycles).
    `release` hears, as the run goes, whether only servers that have not printed their
    `readyWhen` line are in flight, and once set ends the wait for them: each is left running
    as it is (handed over with the ready ones when requested, held like them otherwise), and
    what depends on it is skipped, naming it, without failing the run (`vx watch` sets it for
    an edit that should not wait for a server stuck before ready).
    `shard` makes the run one shard of several (`--shard K/N`): it executes the tasks the deal
    gives it, and awaits from the remote cache the dependencies other shards own.
    `executor` is `--executor` (`local` or `reapi`), None for the workspace's `executor`.
    """

    tasks: tuple[str, ...] = ()
    cwd: Path | None = None
    all: bool = False
    filters: tuple[str, ...] = ()
    affected: str | None = None
    ci_bases: tuple[str, ...] = ()
    forward: tuple[str, ...] = ()
    exclude_dependencies: bool | frozenset[str] = False
    concurrency: int | str | None = None
    continue_mode: str = "deps-ok"
    retry: int = 0
    timeout_ms: int | None = None
    force: bool = False
    no_cache: bool = False
    cache: str | None = None
    download: str = "all"
    cache_dir: str | None = None
    summarize: str | None = None
    tags: tuple[tuple[str, str], ...] = ()
    command: str = "vx run"
    env: Mapping[str, str] | None = None
    pick: Callable[[Workspace, Path], str] | None = None
    tick: Callable[[], None] | None = None
    timing: bool = False
    warm: bool = True
    frozen: bool = False
    keep_servers: Callable[[HeldServers], None] | None = None
    release: Release | None = None
    audit: str | None = None  # `--audit`'s mode; None takes the workspace's `audit` (else off)
    shard: ShardSpec | None = None
    executor: str | None = None


class PreparedRun(Record):
    """A run keyed and ready to execute: the plan, its keys, the open cache, resolved knobs.

    `git`, `store`, `started_ns`, `config_modules` (files a `.py` config imported),
    `config_reads` (the variables and files `.py` configs read while they ran) and
    `refs_seen` (the refs a selection read from git, and what git said they named just
    before it read them) are what the warm path needs to prove a later run would find everything as
    this one did.
    """

    options: RunOptions
    plan: RunPlan
    keys: KeySet
    exec_options: ExecOptions
    cache: LocalCache
    cache_index: Index
    cache_dir: Path
    head: str
    branch: str | None
    notices: tuple[Notice, ...]
    label: str
    env: Mapping[str, str]
    cwd: Path
    watch: Stopwatch
    git: GitSnapshot
    store: Path
    started_ns: int
    config_modules: tuple[str, ...]
    config_reads: ConfigReads | None = None
    refs_seen: tuple[tuple[str, ...], bytes | None] | None = None
    remote: LayeredCache | None = None  # `cache`, when a plugin supplies a remote layer
    telemetry: tuple[tuple[str, Callable[[Event], None]], ...] = ()
    task_env: tuple[tuple[str, Handed], ...] = ()

    def close(self) -> str | None:
        """Mark the entries the run used and let go of the index; a line to print, if any."""
        return self.cache.close()


def _env(options: RunOptions) -> Mapping[str, str]:
    return os.environ if options.env is None else options.env


def _cwd(options: RunOptions) -> Path:
    return Path.cwd() if options.cwd is None else Path(options.cwd)


def plan_run(options: RunOptions, *, watch: Stopwatch | None = None) -> RunPlan:
    """Load the workspace, select, build the graph, key every task and predict; run nothing.

    The plan's `keys` are the ones a run derives, and its `predictions` say what that run's
    cache would do under the same cache flags: the index is opened for reading only, and
    nothing is written (no entry, no history row, no warm-path snapshot, no output cleaned).
    """
    return witnessed_plan(options, watch=watch, reads=False)[0]


class PlanWitness(Record):
    """What `plan_run` read, for the stored plan's proof (`vx.run.warmplan`): the fields
    `PreparedRun` carries for the warm path, with the store whose index the plan consulted."""

    options: RunOptions
    plan: RunPlan
    keys: KeySet
    git: GitSnapshot
    env: Mapping[str, str]
    store: Path
    started_ns: int
    config_modules: tuple[str, ...]
    config_reads: ConfigReads | None
    refs_seen: tuple[tuple[str, ...], bytes | None] | None


def witnessed_plan(
    options: RunOptions, *, watch: Stopwatch | None = None, reads: bool = True
) -> tuple[RunPlan, PlanWitness]:
    """`plan_run`'s plan, with what it read to make it; `reads=False` leaves out what `.py`
    configs read (a caller that keeps no proof need not record it)."""
    from vx.cache.index import INDEX_NAME, read_index
    from vx.run.cachespec import resolve_axes
    from vx.run.gitahead import GitAhead
    from vx.run.predict import predict
    from vx.util.stopwatch import Stopwatch
    from vx.workspace.config_reads import ConfigReads

    watch = watch or Stopwatch()
    started_ns = time.time_ns()
    env = _env(options)
    axes = resolve_axes(options.cache, no_cache=options.no_cache, force=options.force)
    ahead = GitAhead(_cwd(options), env)
    try:
        seen_reads = ConfigReads() if reads and _may_replay(options) else None
        plan, modules, refs_seen = _plan(options, watch, seen_reads)
        if options.download != "all":
            from vx.run.remote.download import Download, deferral

            mode = Download(options.download)
            note = deferral(plan, mode).note(mode)
            plan = plan._replace(notes=(*plan.notes, *((note,) if note else ())))
        snap = ahead.take(plan.workspace.root)
    finally:
        ahead.wait()  # a no-op once taken; else git is let finish, leaving no child
    location = _locate(options, plan.workspace, snap, keep=False)
    keys = _keys(plan, snap, location, env, write=False)
    index = read_index(location.store)
    try:
        history = _history(index, plan, absent=not (location.store / INDEX_NAME).exists())
        planned = predict(
            plan,
            keys,
            axes,
            has_entry=_entries(index, keys).__contains__,
            history=history,
        )
    finally:
        if index is not None:
            index.close()
    watch.mark("git, keys, predict")
    if options.shard is not None:
        from vx.run.remote.sharding import shard_plan

        planned = planned._replace(shards=shard_plan(planned, options.shard, options))
    seen = PlanWitness(
        options=options,
        plan=planned,
        keys=keys,
        git=snap,
        env=env,
        store=location.store,
        started_ns=started_ns,
        config_modules=modules,
        config_reads=seen_reads,
        refs_seen=refs_seen,
    )
    return planned, seen


def _entries(index: Index | None, keys: KeySet) -> set[str]:
    """The plan's keys the index holds an entry for, looked up together, not task by task."""
    return set() if index is None else index.readable_entries(list(set(keys.keys.values())))


def select_plan(options: RunOptions) -> RunPlan:
    """Load the workspace, select and build the graph, as a run would; no keys, no git."""
    from vx.util.stopwatch import Stopwatch

    return _plan(options, Stopwatch())[0]


def _history(
    index: Index | None, plan: RunPlan, *, absent: bool
) -> dict[tuple[str, str], tuple[float, ...]] | None:
    """Each real task's recent successful execution times; {} with no index yet, None when the
    history is there but cannot be read (a plan then forecasts nothing)."""
    import sqlite3  # loaded with the index; named for its error type

    if index is None:
        return {} if absent else None
    ids = [(t.project, t.task) for t in plan.order if not plan.nodes[t].task.is_group]
    try:
        return index.executed_durations(ids)
    except sqlite3.Error:
        return None


def _locate(
    options: RunOptions, ws: Workspace, snap: GitSnapshot, *, keep: bool = True
) -> CacheLocation:
    """Where the run's cache lives; `keep=False` finds it without remembering anything."""
    from vx.cache.location import locate_cache

    env = _env(options)
    return locate_cache(
        ws.root,
        ws.config,
        cwd=_cwd(options),
        env=env,
        flag=options.cache_dir,
        snap=snap,
        keep=keep,
    )


def _keys(
    plan: RunPlan,
    snap: GitSnapshot,
    location: CacheLocation,
    env: Mapping[str, str],
    *,
    write: bool = True,
) -> KeySet:
    """Every task's key; a cache kept inside the work tree is no input of the root project."""
    from vx.cache.fileids import FileTable
    from vx.run.keys import check_outputs, derive_keys, toolchain_uses
    from vx.run.runtime import RuntimeProbe

    root = plan.workspace.root
    inside = [
        os.path.relpath(d, root)
        for d in {location.store, location.directory}
        if str(d).startswith(str(root) + os.sep)
    ]
    files = FileTable(snap, exclude=inside)
    check_outputs(plan, files=files, tracked=snap.index)
    return derive_keys(
        plan,
        files=files,
        env=env,
        runtime=RuntimeProbe(env=env),
        store=location.store,
        write=write,
        audited=lambda: toolchain_uses(location.store),
    )


def _plan(
    options: RunOptions, watch: Stopwatch, reads: ConfigReads | None = None
) -> tuple[RunPlan, tuple[str, ...], tuple[tuple[str, ...], bytes | None] | None]:
    """The plan, the files of the modules loading the workspace imported (`.py` configs), and
    for a warm-path run whose selection reads refs, those refs with what they named before
    the selection read them (a snapshot is kept only if they still name the same after)."""

    from vx.graph.build import ExcludeDeps, build_graph
    from vx.graph.select import ScopeKind, resolve_requests
    from vx.loader.assemble import load_workspace
    from vx.run.plan import make_plan
    from vx.run.taskenv import nested_run_refusal

    cwd = _cwd(options)
    before = set(sys.modules)
    if options.frozen:
        from vx.loader.lockconfig import FrozenConfigs

        ws = load_workspace(cwd, configs=FrozenConfigs())
    else:
        from vx.workspace.config_reads import session

        with session(reads):
            ws = load_workspace(cwd)
    imported = tuple(
        sorted(
            str(path)
            for name in set(sys.modules) - before
            if not name.startswith("vx.") and (path := getattr(sys.modules[name], "__file__", None))
        )
    )
    watch.mark("load workspace")
    refusal = nested_run_refusal(_env(options), ws.root)
    if refusal:
        raise UserError(ErrorCode.REFUSED, refusal)
    refs_seen = _refs_seen(options, ws) if _may_replay(options) else None
    notes: list[str] = list(ws.warnings)  # what a live turbo.json / nx.json holds unhonoured
    notes.extend(f"note: {note}" for note in ws.notes)  # what discovery passed by, and why
    excl = options.exclude_dependencies
    exclude = None
    if excl is True or (isinstance(excl, frozenset) and excl):
        exclude = ExcludeDeps(
            all=excl is True, names=excl if isinstance(excl, frozenset) else frozenset()
        )
    if options.affected is not None:
        from vx.run.affected import affected_roots

        words = options.tasks
        if not words:
            if options.pick is None:
                raise UserError(ErrorCode.USAGE, "vx run: name a task to run (vx run build)")
            words = (options.pick(ws, cwd),)
        picked = affected_roots(ws, options, words, exclude=exclude, env=_env(options))
        notes.extend(picked.notes)
        graph = build_graph(ws, picked.roots, exclude=exclude)
        plan = make_plan(ws, graph, options.forward)
        plan = plan._replace(notes=tuple(notes), reasons=picked.reasons)
        watch.mark("plan")
        return plan, imported, refs_seen
    chosen = None
    if options.filters:
        from vx.graph.select import filter_scope

        chosen = filter_scope(ws, options.filters, env=_env(options))
        notes.extend(chosen.notes)
    words = options.tasks
    if not words and (chosen is None or chosen.projects):
        if options.pick is None:
            raise UserError(ErrorCode.USAGE, "vx run: name a task to run (vx run build)")
        # the picker offers only what the filters selected
        offered = ws if chosen is None else _narrowed(ws, chosen.projects)
        words = (options.pick(offered, cwd),)
    scope: frozenset[str] | None
    if chosen is not None:
        scope = chosen.projects
        kind = ScopeKind.AFFECTED if chosen.by_ref else ScopeKind.FILTER
    elif options.all:
        scope, kind = None, ScopeKind.ALL
    else:
        scope, kind = _cwd_scope(ws, cwd, words), ScopeKind.CWD
    selection = resolve_requests(ws, words, scope=scope, scope_kind=kind)
    if selection.undeclared and scope:
        names = ", ".join(selection.undeclared)
        notes.append(f"no project the filters selected declares {names}: nothing to run for it")
    graph = build_graph(ws, selection.roots, exclude=exclude)
    plan = make_plan(ws, graph, options.forward)._replace(notes=tuple(notes))
    watch.mark("plan")
    return plan, imported, refs_seen


def _refs_seen(options: RunOptions, ws: Workspace) -> tuple[tuple[str, ...], bytes | None] | None:
    """The refs this run's selection will read, and what git says they name right now."""
    from vx import git
    from vx.run.warm import selection_refs

    refs = selection_refs(options, ws.config.affected_base)
    if not refs:
        return None
    return tuple(refs), git.refs_output(ws.root, refs, _env(options))


def _narrowed(ws: Workspace, names: frozenset[str]) -> Workspace:

    return ws._replace(projects=tuple(p for p in ws.projects if p.name in names))


def _cwd_scope(ws: Workspace, cwd: Path, words: tuple[str, ...]) -> frozenset[str] | None:
    """The cwd project's name; outside any project only `pkg#task` words can run."""
    from vx.ids import is_task_id
    from vx.loader.assemble import cwd_project
    from vx.util.text import clip

    project = cwd_project(ws, cwd)
    if project is not None:
        return frozenset({project.name})
    bare = [w for w in words if not is_task_id(w)]
    if not bare:
        return frozenset()
    from vx.graph.build import ProjectIndex
    from vx.graph.select import nx_spelling

    index = ProjectIndex(ws)
    for word in bare:
        spelled = nx_spelling(index, word)
        if spelled is not None:
            raise UserError(
                ErrorCode.UNKNOWN_TASK,
                f'vx run: "{clip(word)}" is Nx\'s project:target — vx writes it {spelled}:'
                f" vx run {spelled}",
            )
    hint = clip(" ".join(bare))
    raise UserError(
        ErrorCode.USAGE,
        f"vx run: {cwd} is inside no project, so {hint} has no project to run in"
        f" — pass --all (vx run {hint} --all), or name one as pkg#task",
    )


def prepare_run(options: RunOptions, *, watch: Stopwatch | None = None) -> PreparedRun:
    """Workspace → graph → keys → cache: everything a run decides before a task executes.

    The caller owns the result's index: `run` closes it, a direct caller calls `close()`.
    """

    from vx import git
    from vx.cache.index import open_index_or_off
    from vx.cache.location import ensure_writable
    from vx.cache.store import Store
    from vx.events import Notice
    from vx.run.cachespec import names_remote, resolve_axes
    from vx.run.gitahead import GitAhead
    from vx.run.localcache import LocalCache
    from vx.util.stopwatch import Stopwatch
    from vx.workspace.config_reads import ConfigReads

    watch = watch or Stopwatch()
    started_ns = time.time_ns()
    env = _env(options)
    cwd = _cwd(options)
    axes = resolve_axes(options.cache, no_cache=options.no_cache, force=options.force)
    ahead = GitAhead(cwd, env)
    try:
        reads = ConfigReads() if _may_replay(options) else None
        plan, modules, refs_seen = _plan(options, watch, reads)
        ws = plan.workspace
        exec_options = _exec_options(options, ws, env)
        snap = ahead.take(ws.root)
    finally:
        ahead.wait()  # a no-op once taken; else git is let finish, leaving no child
    location = _locate(options, ws, snap)
    keys = _keys(plan, snap, location, env)
    ensure_writable(location.store)
    index = open_index_or_off(location.store)
    notices: list[Notice] = []
    if index.notice:
        notices.append(Notice(f"[vx] {index.notice}"))
    plugins = _load_plugins(ws)
    from vx.plugins.load import remote_cache

    off: list[str] = []
    remote = remote_cache(plugins, root=ws.root, env=env, config_path=ws.config.path, notes=off)
    notices.extend(Notice(f"[vx] {note}") for note in off)
    if remote is None and names_remote(options.cache):
        notices.append(
            Notice("[vx] --cache names a remote layer, but no plugin supplies one: it is inert")
        )
    notices.extend(Notice(f"[vx] {note}") for note in plan.notes)
    notices.extend(Notice(f"[vx] {note}") for note in keys.notes)
    shard: ShardCut | None = None
    if options.shard is not None:
        from vx.run.remote.sharding import settle_shard

        usable = index.off is None
        shard, said = settle_shard(
            options.shard,
            options,
            plan._replace(keys=keys),
            axes,
            history=_history(index, plan, absent=False) if usable else {},
            entries=_entries(index, keys) if usable else set(),
            remote=remote,
        )
        plan = shard.plan
        notices.extend(Notice(f"[vx] {note}") for note in said)
    cache: LocalCache
    layered = None
    if remote is None:
        cache = LocalCache(
            plan, keys, store=Store(location.store), index=index, axes=axes, tracked=snap.index
        )
    else:
        from vx.cache.remote.envelope import unpack
        from vx.cache.remote.layered import RemoteLayer
        from vx.run.remote.cache import LayeredCache
        from vx.run.remote.download import Download, deferrable

        cache = layered = LayeredCache(
            plan,
            keys,
            store=Store(location.store),
            index=index,
            axes=axes,
            layer=RemoteLayer(
                remote, decode=unpack, read=axes.remote_read, write=axes.remote_write
            ),
            deferred=deferrable(plan, Download(options.download)),
            tracked=snap.index,
            awaited=shard.awaited if shard is not None else {},
            await_s=options.shard.wait_s if options.shard is not None else 0.0,
        )
        layered.start()
    watch.mark("git, keys, cache")
    return PreparedRun(
        options=options,
        plan=plan._replace(keys=keys),
        keys=keys,
        exec_options=exec_options,
        cache=cache,
        cache_index=index,
        cache_dir=location.directory,
        head=snap.head,
        branch=git.head_branch(snap),
        notices=tuple(notices),
        label=_label(cache, layered),
        env=env,
        cwd=cwd,
        watch=watch,
        git=snap,
        store=location.store,
        started_ns=started_ns,
        config_modules=modules,
        config_reads=reads,
        refs_seen=refs_seen,
        remote=layered,
        telemetry=tuple((p.name, p.telemetry) for p in plugins if p.telemetry is not None),
        task_env=tuple((p.name, p.task_env) for p in plugins if p.task_env is not None),
    )


def _load_plugins(ws: Workspace) -> tuple[Plugin, ...]:
    """The workspace's plugins, loaded; () without paying an import when it declares none."""
    if not ws.config.plugins:
        return ()
    from vx.plugins.load import load_plugins

    return load_plugins(
        ws.config.plugins, config_path=ws.config.path or "vx.workspace", root=ws.root
    )


def _label(cache: LocalCache, layered: LayeredCache | None) -> str:
    """What the run's header calls its cache."""
    local = cache.axes.answers and cache.index.off is None
    if layered is None or not (layered.remote_read or layered.remote_write):
        return "local cache" if local else "cache off"
    remote = f"remote cache ({layered.layer.remote.label})"
    return f"local + {remote}" if local else remote


def _exec_options(options: RunOptions, ws: Workspace, env: Mapping[str, str]) -> ExecOptions:
    """The session's knobs: options over environment over the workspace config."""
    from vx.run.context import ExecOptions
    from vx.run.groups.signals import kill_grace_ms
    from vx.run.scheduler import ContinueMode
    from vx.util.cpu import cpu_budget, workers

    amount = options.concurrency
    if amount is None:
        amount = ws.config.concurrency
    return ExecOptions(
        concurrency=workers(amount, cpu_budget().usable),
        continue_mode=ContinueMode(options.continue_mode),
        retry=options.retry,
        timeout_ms=_timeout(options.timeout_ms, env, ws.config.timeout_ms),
        kill_grace_ms=kill_grace_ms(env),
        ready_notice_ms=_positive_ms(env.get("VX_READY_NOTICE_MS"), 10_000),
        audit=options.audit or ws.config.audit or "off",
    )


def _positive_ms(text: str | None, default: int) -> int:
    try:
        value = int(text or "")
    except ValueError:
        return default
    return value if 0 < value <= _LARGEST_TIMER_MS else default


def _timeout(given: int | None, env: Mapping[str, str], configured: int | None) -> int | None:
    """`--timeout` > `VX_TASK_TIMEOUT` (a bad value is ignored, a huge one clamped) > config."""
    if given is not None:
        return min(given, _LARGEST_TIMER_MS)
    raw = env.get("VX_TASK_TIMEOUT", "").strip()
    if raw.isdigit() and int(raw) > 0:
        return min(int(raw), _LARGEST_TIMER_MS)
    return configured


def run(options: RunOptions, sink: Sink | None = None) -> RunOutcome:
    """Run what `options` asks for and return how it went; events go to `sink` as they come.

    A stop signal ends the run early: the outcome's `signal` says which, and the caller decides
    whether to die of it (the CLI does). Requested servers hold the call until one exits.
    """
    emit: Sink = sink or (lambda _event: None)
    hooks, handed = _env_tracing(options)
    if _may_replay(options):
        from vx.run.warm import replay

        replayed = replay(options, _tee(emit, hooks))
        if replayed is not None:
            return replayed
    prepared = prepare_run(options)
    declared = bool(prepared.telemetry)  # a replay would not feed the workspace's plugins
    if hooks and hooks[0][0] not in {name for name, _ in prepared.telemetry}:
        prepared = prepared._replace(
            telemetry=(*prepared.telemetry, *hooks), task_env=(*prepared.task_env, *handed)
        )
    emit = _tee(emit, prepared.telemetry)
    try:
        return _execute(prepared, emit, rememberable=not declared)
    finally:
        note = prepared.close()
        if note:
            from vx.events import Notice

            emit(Notice(f"[vx] {note}"))


def _env_tracing(
    options: RunOptions,
) -> tuple[tuple[tuple[str, Sink], ...], tuple[tuple[str, Handed], ...]]:
    """The tracing plugin's hooks when the environment turns tracing on (`vx-runner[otel]` installed
    and an OTLP endpoint set); made before the warm path, so a replay is traced too."""
    from vx.otel.switch import wanted

    env = _env(options)
    if not wanted(env):
        return (), ()
    from vx.plugins.otel import plugin

    made = plugin(env=env)
    if made.telemetry is None or made.task_env is None:
        raise AssertionError("the tracing plugin fills both telemetry hooks")
    return ((made.name, made.telemetry),), ((made.name, made.task_env),)


def _tee(emit: Sink, hooks: tuple[tuple[str, Sink], ...]) -> Sink:
    if not hooks:
        return emit
    from vx.run.telemetry import tee

    return tee(emit, hooks)


def _may_replay(options: RunOptions) -> bool:
    """The warm path may answer when asked to, and not under `--frozen`, whose configs come
    from the lock the snapshot's fingerprints do not cover. A selection read from git
    (`--affected`, a `[<ref>]` filter) is replayed too: its snapshot proves the refs it read
    still name the same commits. A shard is never replayed: its record is checked first."""
    return options.warm and not options.frozen and options.shard is None


def _execute(prepared: PreparedRun, emit: Sink, *, rememberable: bool = True) -> RunOutcome:
    """Run the prepared plan; `rememberable` False keeps the warm path from standing in for a
    later run (a workspace telemetry plugin must see every run execute)."""
    from vx.cache.runlock import acquire_run_lock
    from vx.cache.staging import sweep as sweep_staging
    from vx.events import Notice
    from vx.run.session import RunSession
    from vx.run.taskhistory import TaskHistory

    options = prepared.options
    plan = prepared.plan

    def waiting(pid: int) -> None:
        emit(Notice(f"[vx] waiting for another vx run (pid {pid}) on this workspace to finish…"))

    offload = None
    if (options.executor or plan.workspace.config.executor) == "reapi":
        from vx.run.remote.offload import open_offload

        offload = open_offload(plan, prepared.keys, prepared.cache, prepared.env)
    lock = acquire_run_lock(plan.workspace.root, on_wait=waiting)
    handed = None
    if prepared.task_env:
        from vx.run.telemetry import handed_env

        handed = handed_env(emit, prepared.task_env)
    session = RunSession(
        plan,
        prepared.exec_options,
        cache=prepared.cache,
        history=TaskHistory(prepared.cache_index, prepared.keys, cached=prepared.cache.cached),
        emit=emit,
        env=prepared.env,
        root=plan.workspace.root,
        tick=options.tick or (lambda: None),
        cache_label=prepared.label,
        release=options.release,
        task_env=handed,
        remote=offload,
        tracked=prepared.git.index,
    )
    with lock, session:
        sweep_staging((plan.workspace.root, *(p.dir for p in plan.workspace.projects)))
        for notice in prepared.notices:
            emit(notice)
        if prepared.remote is not None:
            prepared.remote.attach(session.ctx.emit, stopping=session.signals.stopping)
        outcome = session.run()
        if prepared.remote is not None:
            prepared.remote.layer.drain()  # uploads finish before the verdict is printed
        prepared.watch.mark("run")
        for notice in _after_run(prepared, outcome):
            emit(notice)
        prepared.watch.mark("history")
        if options.timing:
            emit(Notice(prepared.watch.table().rstrip("\n")))
        session.finish(outcome)
        if session.held_servers() and options.keep_servers is not None:
            options.keep_servers(session.hand_over())
        elif session.held_servers():
            outcome = _hold(session, outcome, emit)
            _rerecord(prepared, outcome)
        elif _may_replay(options) and rememberable:
            from vx.run.warm import remember

            remember(prepared, outcome)
    # A stop signal that landed after the verdict (between the footer and the session's end)
    # is still one the caller must honour.
    return outcome._replace(plan=plan, signal=outcome.signal or session.signals.signal)


def _hold(session: RunSession, outcome: RunOutcome, emit: Sink) -> RunOutcome:
    """Keep the run open for the requested servers; their exit can turn the verdict."""
    from vx.events import Notice

    held = session.hold()
    if held is None:
        return outcome
    sid, server_code, others = held
    line = f"vx: {sid} exited with code {server_code}"
    if others:
        noun = "task" if others == 1 else "tasks"
        line += f"; stopping {others} other persistent {noun}"
    emit(Notice(line))
    if not server_code:
        return outcome
    return outcome._replace(exit_code=1, ended_at=time.time())


def _rerecord(prepared: PreparedRun, outcome: RunOutcome) -> None:
    """After a hold, the history and `--summarize` carry the verdict the server gave."""
    with contextlib.suppress(OSError):
        prepared.cache_index.finish_invocation(
            outcome.run_id,
            exit_code=outcome.exit_code,
            ended_at_ms=int(outcome.ended_at * 1000),
        )
    _write_summary(prepared, outcome)


def _after_run(prepared: PreparedRun, outcome: RunOutcome) -> list[Notice]:
    """Record the history, keep failures, write --summarize: each may fail with one line."""
    from vx.events import Notice
    from vx.run.record import keep_failures, record_run

    notes: list[Notice] = []
    options = prepared.options
    try:
        note = record_run(
            prepared.cache_index,
            outcome,
            groups=frozenset(t for t, n in prepared.plan.nodes.items() if n.task.is_group),
            command=options.command,
            git_sha=prepared.head,
            git_branch=prepared.branch,
            env=prepared.env,
            tags=options.tags,
        )
        if note:
            notes.append(Notice(f"[vx] {note}"))
        if prepared.cache_index.off is None:  # else its one notice said the history is not kept
            keep_failures(prepared.cache_dir, prepared.plan, outcome)
    except OSError as error:
        notes.append(Notice(f"vx: failed to write the run history: {error.strerror or error}"))
    note = _retain(prepared)
    if note:
        notes.append(Notice(note))
    note = _write_summary(prepared, outcome)
    if note:
        notes.append(Notice(note))
    return notes


def _retain(prepared: PreparedRun) -> str | None:
    """Apply the workspace's `cacheRetention` when it is due; a line to print if it failed.

    The entries this run used are marked first, so an old entry it just hit is not the
    policy's first victim.
    """
    import sqlite3

    kept = prepared.plan.workspace.config.cache_retention
    if kept is None or prepared.cache_index.off is not None:
        return None
    from vx.cache.evict import Policy, apply_retention, retention_due

    policy = Policy.of_retention(kept.older_than, kept.max_size)
    if policy is None:
        return None
    try:
        prepared.cache.mark_used()
        if retention_due(prepared.store, policy, prepared.cache_index):
            apply_retention(prepared.store, policy, prepared.cache_index)
    except (OSError, sqlite3.Error) as error:
        return f"vx: cacheRetention could not prune {prepared.store}: {error}"
    return None


def _write_summary(prepared: PreparedRun, outcome: RunOutcome) -> str | None:
    """Write `--summarize`'s file; the line to print about it (None when not asked)."""
    from vx.run.summary import summary_document

    summarize = prepared.options.summarize
    if summarize is None:
        return None
    target = (
        prepared.cwd / summarize
        if summarize
        else prepared.cache_dir / "runs" / f"{outcome.run_id}.json"
    )
    import json

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(summary_document(prepared.plan, outcome), indent=2) + "\n")
    except OSError as error:
        return f"vx: failed to write {target}: {error.strerror or error}"
    return f"[vx] run summary written to {target}"
