"""The watch loop: an initial run, then a run per settled edit, all through `vx.run.prepare.run`.

Watcher threads only route: an event is dropped by path or queued with its label. The main
thread owns everything else. It collects a batch (150 ms after the last event, at most 1 s
after the first), asks git once which of its paths are ignored, judges the rest by settled
state, and runs a cycle for the first real edit. Nothing is judged while a cycle runs: what
lands meanwhile waits in the queue and is judged one window after it ends, unless the cycle
comes to wait only on servers not yet ready (`vx.watch.serverwait`): an edit then ends the
wait and starts the next cycle. What is watched is `vx.watch.arming`'s; the batches and their
verdicts are `vx.watch.batch`'s.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.util.record import Record
from vx.watch.arming import Arming
from vx.watch.batch import Batches
from vx.watch.keeper import Keeper
from vx.watch.serverwait import ServerWait

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import FrameType

    from vx.events import Event
    from vx.run.outcome import RunOutcome
    from vx.run.plan import RunPlan
    from vx.run.prepare import RunOptions
    from vx.watch.arming import Heard
    from vx.watch.batch import Trigger

_IDLE_S = 0.25
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


class CycleOutput(Record):
    """Where one cycle's events go: a sink, the live display's tick, and its close."""

    sink: Callable[[Event], None]
    tick: Callable[[], None]
    close: Callable[[], None]


class WatchHooks(Record):
    """What the loop says and where: `say` for its own lines (stdout), `notice` for stderr,
    `output` for a fresh renderer per cycle."""

    say: Callable[[str], None]
    notice: Callable[[str], None]
    output: Callable[[], CycleOutput]


class _Interrupted(BaseException):
    """A stop signal arrived while a cycle was being prepared (no task running yet)."""


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
        own_files: tuple[str, ...] = (),
    ) -> None:
        self.options = options
        self.hooks = hooks
        self.env = env
        self.poll = poll
        self.clock = clock
        self.stopping = threading.Event()
        self.signal: int | None = None
        self.keeper = Keeper()
        self._preparing = False
        self._cycle_end = float("-inf")
        self._cycle_options = options
        self._cut: Trigger | None = None  # the edit that ended a cycle's wait on a server
        self.arming = Arming(
            heard=self._heard,
            say=hooks.say,
            notice=hooks.notice,
            clock=clock,
            cwd=Path(options.cwd) if options.cwd is not None else Path.cwd(),
            cache_dir=options.cache_dir,
            env=env,
            poll=poll,
            own_files=own_files,
        )
        self.batches = Batches(self.arming, clock=clock, notice=hooks.notice)

    def _heard(self, heard: Heard) -> None:
        self.batches.put(heard)

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
                if not self.arming.armed:  # else armed while it waited on a server
                    self.arming.arm(plan, stopping=self.stopping)
                self._idle()
        finally:
            self.keeper.stop(self._forwarded_signal())
            self.arming.close()
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
        wait = ServerWait(
            self.batches,
            clock=self.clock,
            on_wait=self._arm_while_waiting if initial else lambda: None,
        )
        options = options._replace(
            tick=out.tick, keep_servers=self.keeper.take, release=wait.release
        )
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
            wait.close()
            if wait.trigger is not None and not self.stopping.is_set():
                self._cut = wait.trigger
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

    def _arm_while_waiting(self) -> None:
        """The initial run waits only on a server's readiness: watch from now, so an edit (a
        fix for a server stuck before ready) is heard and ends the wait. Without a plan the
        arm waits for the run's end, as it would have."""
        plan = self._select()
        if plan is not None:
            self.arming.arm(plan, stopping=self.stopping)

    # idling and judging

    def _idle(self) -> None:
        """Wait for edits, judge them, run cycles, until a stop signal."""
        after_run = False
        while not self.stopping.is_set():
            for line in self.keeper.deaths():
                self.hooks.notice(line)
            trigger, self._cut = self._cut, None
            if trigger is None:
                trigger = self._next_edit(after_run=after_run)
                after_run = False
                if trigger is None:
                    continue
            else:  # it ended the last cycle's wait on a server, so it was heard during it
                self.batches.blame(trigger.path, after_run=True, server=True)
            if trigger.shape:
                self._rearm()
            if self.stopping.is_set():
                return
            self.hooks.say(f"\nvx watch: {trigger.label}; re-running...")
            try:
                self._cycle()
            finally:
                self._cycle_end = self.clock()
                after_run = True

    def _next_edit(self, *, after_run: bool) -> Trigger | None:
        """The next batch heard, judged; its edit (with the self-write notice) or None."""
        first = self.batches.next(_IDLE_S)
        if first is None:
            return None
        batch = self.batches.collect(first, after_run=after_run, stopping=self.stopping)
        if self.stopping.is_set():
            return None
        trigger = self.batches.verdict(batch)
        if trigger is not None:
            during = any(h.at <= self._cycle_end for h in batch.values())
            self.batches.blame(trigger.path, after_run=during, server=self.keeper.holding)
        return trigger

    def _rearm(self) -> None:
        """After an edit that can change what is watched: read the set again before the cycle.

        When no plan can be made (the cycle says why), the set stays, but the member globs are
        walked again: a package directory made meanwhile is watched all the same.
        """
        plan = self._select()
        if plan is not None:
            self.arming.arm(plan, stopping=self.stopping)
        else:
            self.arming.place(stopping=self.stopping)

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
