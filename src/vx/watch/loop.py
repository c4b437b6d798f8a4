"""The watch loop: an initial run, then a run per settled edit, all through `vx.run.prepare.run`.

Watcher threads only route: an event is dropped by path or queued with its label. The main
thread owns everything else. It collects a batch (150 ms after the last event, at most 1 s
after the first), asks git once which of its paths are ignored, judges the rest by settled
state, and runs a cycle for the first real edit. Nothing is judged while a cycle runs: what
lands meanwhile waits in the queue and is judged one window after it ends.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from vx.errors import ErrorCode, UserError
from vx.watch.judge import SelfWrites, StateJudge
from vx.watch.keeper import Keeper
from vx.watch.observe import WatcherPool, fs_clock_now, is_probe
from vx.watch.route import route_event, wanted_slots
from vx.watch.targets import cache_dirs, fallback, from_plan

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import FrameType

    from vx.events import Event
    from vx.run.outcome import RunOutcome
    from vx.run.plan import RunPlan
    from vx.run.prepare import RunOptions
    from vx.watch.observe import Slot
    from vx.watch.targets import WatchSet

DEBOUNCE_S = 0.15
LONGEST_WAIT_S = 1.0
_IDLE_S = 0.25
_NAMES_SHOWN = 8
# An initial run refused for these is refused for good: watching would repeat the refusal.
_FATAL = frozenset(
    {
        ErrorCode.USAGE,
        ErrorCode.UNKNOWN_TASK,
        ErrorCode.UNKNOWN_PROJECT,
        ErrorCode.AMBIGUOUS,
        ErrorCode.NO_WORKSPACE,
    }
)
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class CycleOutput(NamedTuple):
    """Where one cycle's events go: a sink, the live display's tick, and its close."""

    sink: Callable[[Event], None]
    tick: Callable[[], None]
    close: Callable[[], None]


class WatchHooks(NamedTuple):
    """What the loop says and where: `say` for its own lines (stdout), `notice` for stderr,
    `output` for a fresh renderer per cycle."""

    say: Callable[[str], None]
    notice: Callable[[str], None]
    output: Callable[[], CycleOutput]


class _Interrupted(BaseException):
    """A stop signal arrived while a cycle was being prepared (no task running yet)."""


class _Heard(NamedTuple):
    path: str
    label: str
    shape: bool
    at: float


class WatchLoop:
    """One `vx watch`: `run()` returns its exit code (0 on a stop signal)."""

    def __init__(
        self,
        options: RunOptions,
        hooks: WatchHooks,
        *,
        env: Mapping[str, str],
        poll: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        self.hooks = hooks
        self.env = env
        self.poll = poll
        self.clock = clock
        self.stopping = threading.Event()
        self.signal: int | None = None
        self.keeper = Keeper()
        self._queue: queue.SimpleQueue[_Heard] = queue.SimpleQueue()
        self._preparing = False
        self._cycle_end = float("-inf")
        self._cycle_options = options
        self._set: WatchSet | None = None
        self._pool: WatcherPool | None = None
        self._slots: dict[tuple[str, str], Slot] = {}
        self._judge: StateJudge | None = None
        self._tracked: frozenset[str] = frozenset()
        self._self_writes = SelfWrites()

    # signals

    def _on_signal(self, signo: int, _frame: FrameType | None) -> None:
        if self.signal is None:
            self.signal = signo
        self.stopping.set()
        if self._preparing:
            self._preparing = False
            raise _Interrupted

    def _install(self) -> dict[int, object]:
        previous: dict[int, object] = {}
        if threading.current_thread() is threading.main_thread():
            for signo in _SIGNALS:
                previous[signo] = signal.signal(signo, self._on_signal)
        return previous

    # lifecycle

    def run(self) -> int:
        """Initial run, arm, then cycles until a stop signal; tears everything down after."""
        previous = self._install()
        try:
            self.hooks.say("vx watch: initial run...")
            outcome = self._run(self.options, initial=True)
            if not self.stopping.is_set():
                plan = outcome.plan if outcome is not None else None
                fixed = self.options.affected is not None or bool(self.options.filters)
                if plan is not None and fixed:
                    # the scope resolved at start is every cycle's: the diff is read once
                    nothing = _nothing_affected(plan) if self.options.affected is not None else None
                    if nothing is not None:
                        self.hooks.say(f"vx watch: {nothing}")
                        return 0
                    words = tuple(str(t) for t in sorted(plan.graph.requested))
                    if words:
                        self._cycle_options = self.options._replace(
                            tasks=words, affected=None, filters=(), all=False
                        )
                if plan is None and outcome is not None:  # a replayed warm run keeps none
                    plan = self._select()
                self.keeper.started_under(plan)
                self._arm(plan)
                self._idle()
        finally:
            self.keeper.stop(self._forwarded_signal())
            if self._pool is not None:
                self._pool.close()
            for signo, handler in previous.items():
                signal.signal(signo, handler)  # type: ignore[arg-type]
        self.hooks.say("vx watch: stopped")
        return 0

    def _forwarded_signal(self) -> int | None:
        """What the held servers hear: a Ctrl-C as SIGINT, SIGTERM and SIGHUP as SIGTERM."""
        if self.signal is None:
            return None
        return signal.SIGINT if self.signal == signal.SIGINT else signal.SIGTERM

    # running

    def _run(self, options: RunOptions, *, initial: bool = False) -> RunOutcome | None:
        """One pass through the engine's run path; a refusal becomes `cycle failed`."""
        from vx.run.prepare import run

        if self.stopping.is_set():
            return None
        out = self.hooks.output()
        options = options._replace(tick=out.tick, keep_servers=self.keeper.take)
        self._preparing = True
        try:
            outcome = run(options, _during(out.sink, self))
        except _Interrupted:
            return None
        except UserError as error:
            if initial and error.code in _FATAL:
                raise
            self.hooks.notice(f"vx watch: cycle failed: {error.message}")
            return None
        except Exception as error:  # noqa: BLE001 - a cycle that throws must not end the watch
            self.hooks.notice(f"vx watch: cycle failed: {type(error).__name__}: {error}")
            return None
        finally:
            self._preparing = False
            out.close()
        if outcome.signal is not None:
            if self.signal is None:
                self.signal = outcome.signal
            self.stopping.set()
        return outcome

    def _cycle(self) -> None:
        """Re-run what was asked; a kept server stands for itself and only its deps re-run."""
        from vx.run.prepare import select_plan

        options = self._cycle_options
        if self.keeper.holding:
            try:
                plan = select_plan(options)
            except UserError as error:
                self.hooks.notice(f"vx watch: cycle failed: {error.message}")
                return
            words = self.keeper.keeping_words(plan)
            if words is not None:
                if not words:
                    self.hooks.say("vx watch: the servers are up and depend on nothing to re-run")
                    return
                narrowed = options._replace(tasks=words, all=False, filters=(), affected=None)
                outcome = self._run(narrowed)
                if outcome is not None and outcome.exit_code != 0 and not self.stopping.is_set():
                    self.keeper.stop()
                return
            self.keeper.stop()
        outcome = self._run(options)
        if outcome is not None and self.keeper.holding:
            made: RunPlan | None = outcome.plan
            if made is None:
                with contextlib.suppress(UserError):
                    made = select_plan(options)
            self.keeper.started_under(made)

    # arming

    def _arm(self, plan: RunPlan | None) -> None:
        """Work out the watched set and watch it; print `watching` once every watcher proved."""
        from vx import git

        root = self._root(plan)
        if root is None:
            return
        cache = (
            cache_dirs(plan.workspace, cwd=self._cwd(), flag=self.options.cache_dir, env=self.env)
            if plan is not None
            else ()
        )
        wanted = from_plan(plan, cache=cache) if plan is not None else fallback(root, cache=cache)
        if self._pool is None:
            self._pool = WatcherPool(notice=self.hooks.notice, skip=self._skip_dir, poll=self.poll)
        try:
            self._tracked = frozenset(git.ls_files_stage(root, env=self.env))
        except UserError:
            self._tracked = frozenset()
        self._set = wanted
        if self._judge is None:
            armed_at = fs_clock_now(str(root))
            self._judge = StateJudge(wanted.rules, armed_at=armed_at, tracked=self._is_tracked)
        else:
            self._judge.rules = wanted.rules
        self._place(wanted)
        self._pool.prove(stopping=self.stopping)
        if self.stopping.is_set():
            return
        if wanted.wide:
            reason = "a task reads workspaceFiles" if wanted.watched else "no plan yet"
            self.hooks.say(f"vx watch: watching the whole workspace ({reason})")
        else:
            names = ", ".join(p.name for p in wanted.watched[:_NAMES_SHOWN])
            count = len(wanted.watched)
            if count > _NAMES_SHOWN:
                names += f" and {count - _NAMES_SHOWN} more"
            noun = "project" if count == 1 else "projects"
            self.hooks.say(f"vx watch: watching {count} {noun}: {names}")

    def _root(self, plan: RunPlan | None) -> Path | None:
        if plan is not None:
            return plan.workspace.root
        from vx.workspace.discover import find_root

        try:
            return find_root(self._cwd()).root
        except UserError:
            return None

    def _cwd(self) -> Path:
        return Path(self.options.cwd) if self.options.cwd is not None else Path.cwd()

    def _is_tracked(self, rel: str) -> bool:
        return rel in self._tracked

    def _skip_dir(self, path: str) -> bool:
        current = self._set
        return current is not None and (is_probe(path) or current.rules.ignored(path))

    def _place(self, wanted: WatchSet) -> None:
        """Arm what the set wants and is not armed; drop what it no longer wants, and what
        watches a directory that was removed (and maybe made again)."""
        if self._pool is None:
            return
        want = wanted_slots(wanted)
        for key in [k for k in self._slots if k not in want or self._slots[k].stale()]:
            self._pool.drop(self._slots.pop(key))
        for key, recursive in want.items():
            if key in self._slots:
                continue
            role, directory = key
            slot = self._pool.arm(directory, self._router(role, directory), recursive=recursive)
            if slot is not None:
                self._slots[key] = slot

    def _router(self, role: str, directory: str) -> Callable[[str], None]:
        """The watcher-thread side: drop by path, label what is kept, queue it."""

        def route(path: str) -> None:
            current = self._set
            if current is None or is_probe(path) or current.rules.ignored(path):
                return
            heard = route_event(current, role, directory, path)
            if heard is not None:
                label, shape = heard
                self._queue.put(_Heard(path, label, shape, self.clock()))

        return route

    # idling and judging

    def _idle(self) -> None:
        """Wait for edits, judge them, run cycles, until a stop signal."""
        after_run = False
        while not self.stopping.is_set():
            for line in self.keeper.deaths():
                self.hooks.notice(line)
            try:
                first = self._queue.get(timeout=_IDLE_S)
            except queue.Empty:
                continue
            batch = self._collect(first, after_run=after_run)
            if self.stopping.is_set():
                return
            trigger = self._judge_batch(batch)
            after_run = False
            if trigger is None:
                continue
            path, label, shape = trigger
            self._blame(path, after_run=any(h.at <= self._cycle_end for h in batch.values()))
            if shape:
                self._rearm()
            if self.stopping.is_set():
                return
            self.hooks.say(f"\nvx watch: {label}; re-running...")
            try:
                self._cycle()
            finally:
                self._cycle_end = self.clock()
                after_run = True

    def _collect(self, first: _Heard, *, after_run: bool) -> dict[str, _Heard]:
        """Everything heard until 150 ms pass quietly, or 1 s after the first event.

        Right after a cycle, the window counts from its end: what it wrote has settled.
        """
        start = self.clock() if after_run else first.at
        batch = {first.path: first}
        last = max(first.at, start)
        while not self.stopping.is_set():
            wait = min(last + DEBOUNCE_S, start + LONGEST_WAIT_S) - self.clock()
            if wait <= 0:
                break
            try:
                heard = self._queue.get(timeout=wait)
            except queue.Empty:
                break
            batch.setdefault(heard.path, heard)
            last = self.clock()
        return batch

    def _judge_batch(self, batch: Mapping[str, _Heard]) -> tuple[str, str, bool] | None:
        """The first edited path still there (else the first deletion), with its label."""
        from vx import git

        current, judge = self._set, self._judge
        if current is None or judge is None:
            return None
        rels = {p: current.rules.relative(p) for p in batch}
        try:
            ignored = git.check_ignore(Path(current.root), [r for r in rels.values() if r])
        except UserError:
            ignored = frozenset()
        present: tuple[str, str, bool] | None = None
        gone: tuple[str, str, bool] | None = None
        shape = False
        for path, heard in batch.items():
            if rels[path] in ignored or not judge.edited(path):
                continue
            shape = shape or heard.shape
            if path in current.workspace_imports:
                self.hooks.notice(
                    f"vx watch: {rels[path]} is imported by the workspace config, which is"
                    " loaded once per process: restart vx watch to use the edit"
                )
            if os.path.lexists(path):
                present = present or (path, heard.label, shape)
            else:
                gone = gone or (path, heard.label, shape)
        found = present or gone
        return None if found is None else (found[0], found[1], shape)

    def _blame(self, path: str, *, after_run: bool) -> None:
        """The third cycle in a row a path heard during a cycle starts: name it, once."""
        current = self._set
        if current is None:
            return
        streak = self._self_writes.cycle(path, after_run=after_run)
        if streak < 3:
            return
        rel = current.rules.relative(path) or path
        server = self.keeper.holding
        if server and rel in self._tracked:
            return  # a tracked file is the user's to edit, not the server's doing
        line = self._self_writes.notice(path, rel, server=server)
        if line:
            self.hooks.notice(line)

    def _rearm(self) -> None:
        """After an edit that can change what is watched: read the set again before the cycle."""
        plan = self._select()
        if plan is not None:  # else the cycle says why, and the set stays as it was
            self._arm(plan)

    def _select(self) -> RunPlan | None:
        """The plan a cycle would run (no keys), or None when it cannot be made."""
        from vx.run.prepare import select_plan

        try:
            return select_plan(self._cycle_options)
        except UserError:
            return None


def _during(sink: Callable[[Event], None], loop: WatchLoop) -> Callable[[Event], None]:
    """The cycle's sink; its first event means the run is past preparing (a signal then
    belongs to the run's own handlers, and stops its tasks)."""

    def forward(event: Event) -> None:
        loop._preparing = False  # the loop's own flag, set by its own sink
        sink(event)

    return forward


def _nothing_affected(plan: RunPlan) -> str | None:
    """`nothing affected since <ref>` when --affected selected nothing to run."""
    if plan.nodes:
        return None
    for note in plan.notes:
        if note.startswith("nothing affected since"):
            return note.split(" — ")[0]
    return "nothing affected"
