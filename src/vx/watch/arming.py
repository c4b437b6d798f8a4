"""The watchers the loop holds: the watched set read off a plan, armed, proved and kept current.

`Arming.arm` works out what a cycle can touch, arms what is not armed yet, drops what is no
longer wanted (or watches a directory that was removed and made again), and says
`vx watch: watching …` once every watcher has proved it delivers. Events are routed on the
watcher threads into the loop's queue; the judge of settled state is made at the first arm,
whose time is the one first sightings are measured against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.errors import UserError
from vx.util.record import Record
from vx.watch.judge import StateJudge
from vx.watch.observe import WatcherPool, fs_clock_now, is_probe
from vx.watch.route import route_event, wanted_slots
from vx.watch.targets import cache_dirs, fallback, from_plan

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from vx.run.plan import RunPlan
    from vx.watch.observe import Slot
    from vx.watch.targets import WatchSet

_NAMES_SHOWN = 8
_SETTLE_ROUNDS = 4  # arm again while the disk grows what is wanted under the new watchers


class Heard(Record):
    """One routed event: the path, the label a cycle would be named by, whether it can change
    the watched set, and when it was heard (the loop's clock)."""

    path: str
    label: str
    shape: bool
    at: float


class Arming:
    """The watched set and its watchers, for one `vx watch`.

    `heard` receives each routed event (on a watcher thread); `say` and `notice` are the
    loop's lines. `cwd`, `cache_dir` and `env` locate the cache directory to leave out;
    `own_files` are files vx itself writes (its stdout or stderr sent to a file), never edits.
    """

    def __init__(
        self,
        *,
        heard: Callable[[Heard], None],
        say: Callable[[str], None],
        notice: Callable[[str], None],
        clock: Callable[[], float],
        cwd: Path,
        cache_dir: str | None,
        env: Mapping[str, str],
        poll: bool,
        own_files: tuple[str, ...] = (),
    ) -> None:
        self._heard = heard
        self._say = say
        self._notice = notice
        self._clock = clock
        self._cwd = cwd
        self._cache_dir = cache_dir
        self._env = env
        self._poll = poll
        self._own_files = own_files
        self.current: WatchSet | None = None
        self.judge: StateJudge | None = None
        self.tracked: frozenset[str] = frozenset()
        self._pool: WatcherPool | None = None
        self._slots: dict[tuple[str, str], Slot] = {}

    @property
    def armed(self) -> bool:
        """Some set has been armed."""
        return self.current is not None

    def arm(self, plan: RunPlan | None, *, stopping: threading.Event) -> None:
        """Work out the watched set and watch it; print `watching` once every watcher proved."""
        from vx import git

        root = self._root(plan)
        if root is None:
            return
        cache = (
            *(
                cache_dirs(plan.workspace, cwd=self._cwd, flag=self._cache_dir, env=self._env)
                if plan is not None
                else ()
            ),
            *self._own_files,
        )
        wanted = from_plan(plan, cache=cache) if plan is not None else fallback(root, cache=cache)
        if self._pool is None:
            self._pool = WatcherPool(notice=self._notice, skip=self._skip_dir, poll=self._poll)
        try:
            self.tracked = frozenset(git.ls_files_stage(root, env=self._env))
        except UserError:
            self.tracked = frozenset()
        self.current = wanted
        if self.judge is None:
            armed_at = fs_clock_now(str(root))
            self.judge = StateJudge(wanted.rules, armed_at=armed_at, tracked=self.is_tracked)
        else:
            self.judge.rules = wanted.rules
        self.place(stopping=stopping)
        if stopping.is_set():
            return
        if wanted.wide:
            reason = "a task reads workspaceFiles" if wanted.watched else "no plan yet"
            self._say(f"vx watch: watching the whole workspace ({reason})")
        else:
            names = ", ".join(p.name for p in wanted.watched[:_NAMES_SHOWN])
            count = len(wanted.watched)
            if count > _NAMES_SHOWN:
                names += f" and {count - _NAMES_SHOWN} more"
            noun = "project" if count == 1 else "projects"
            self._say(f"vx watch: watching {count} {noun}: {names}")

    def place(self, *, stopping: threading.Event | None = None) -> None:
        """Arm what the set wants and is not armed; drop what it no longer wants, and what
        watches a directory that was removed (and maybe made again). A member directory made
        while the new watchers went up is wanted too, so this goes again until none is."""
        wanted, pool = self.current, self._pool
        if wanted is None or pool is None:
            return
        for _ in range(_SETTLE_ROUNDS):
            want = wanted_slots(wanted)
            for key in [k for k in self._slots if k not in want or self._slots[k].stale()]:
                pool.drop(self._slots.pop(key))
            added = False
            for key, recursive in want.items():
                if key in self._slots:
                    continue
                role, directory = key
                slot = pool.arm(directory, self._router(role, directory), recursive=recursive)
                if slot is not None:
                    self._slots[key] = slot
                    added = True
            pool.prove(stopping=stopping)
            if not added:
                break
        self._missed_members(wanted)

    def _missed_members(self, wanted: WatchSet) -> None:
        """A package that landed after the plan read the members and before its watcher was up
        is heard as if its manifest had just been written (the judge still weighs it)."""
        if wanted.members is None or not wanted.projects:
            return
        for manifest in wanted.members.unknown(p.dir for p in wanted.projects):
            rel = wanted.rules.relative(manifest)
            if rel is not None and not wanted.rules.ignored(manifest):
                self._heard(Heard(manifest, f"// {rel}", shape=True, at=self._clock()))

    def _root(self, plan: RunPlan | None) -> Path | None:
        if plan is not None:
            return plan.workspace.root
        from vx.workspace.discover import find_root

        try:
            return find_root(self._cwd).root
        except UserError:
            return None

    def is_tracked(self, rel: str) -> bool:
        """Git listed `rel` at the last arm."""
        return rel in self.tracked

    def relative(self, path: str) -> str | None:
        """`path` relative to the root, once a set is armed."""
        return self.current.rules.relative(path) if self.current is not None else None

    def _skip_dir(self, path: str) -> bool:
        current = self.current
        return current is not None and (is_probe(path) or current.rules.ignored(path))

    def _router(self, role: str, directory: str) -> Callable[[str], None]:
        """The watcher-thread side: drop by path, label what is kept, hand it to the loop."""

        def route(path: str) -> None:
            current = self.current
            if current is None or is_probe(path) or current.rules.ignored(path):
                return
            heard = route_event(current, role, directory, path)
            if heard is not None:
                label, shape = heard
                self._heard(Heard(path, label, shape, self._clock()))

        return route

    def close(self) -> None:
        """Stop every watcher."""
        if self._pool is not None:
            self._pool.close()
