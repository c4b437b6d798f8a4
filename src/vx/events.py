"""The frozen events a run emits; `output/` renders them and `run/` never imports `output/`."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from vx.ids import TaskId


class TaskStatus(StrEnum):
    """How a task ended (the task axis of a row: the glyph's colour and the status word)."""

    SUCCESS = "success"
    FAILED = "failed"
    SKIPPED = "skipped"
    ABORTED = "aborted"
    NOT_RUN = "not run"
    RUNNING = "running"


class CacheOutcome(StrEnum):
    """What the cache did for a task (the cache axis of a row: the glyph's shape)."""

    MISS = "miss"
    NO_CACHE = "no-cache"
    UP_TO_DATE = "up-to-date"
    LOCAL = "local"
    REMOTE = "remote"


class PlanStatus(StrEnum):
    """What a plan predicts the cache does for a task (`--dry`, `--graph`, `plan_run`)."""

    HIT_LOCAL = "hit-local"  # an entry for its key is in the local cache: it would restore
    MISS = "miss"  # cached, no entry to read (or reads are off): it would execute and save
    NO_CACHE = "no-cache"  # no `cache` block, or the run's cache is off: it would execute
    GROUP = "group"  # runs nothing; stands for its dependencies
    EXCLUDED = "excluded"  # dropped by --exclude-dependencies: keyed, never run
    NOT_STARTED = "not-started"  # an unrequested server whose every dependant would restore


class AffectedReason(Record):
    """Why `--affected` kept a task, as a plan shows it.

    `kind` is `input`, `project`, `package`, `named` or `selected`; `change` says what changed
    and how it reached the task (`packages/lib/src/a.ts changed (an input)`); `via` is the
    `dependsOn` chain, nearest first, to the task the change reached.
    """

    kind: str
    change: str
    via: tuple[TaskId, ...] = ()


class Stream(StrEnum):
    """Which pipe a chunk of task output came from."""

    STDOUT = "stdout"
    STDERR = "stderr"


class PlannedTask(Record):
    """A task as the run announces it before anything executes.

    `requested` is true for what the user named (and the real tasks a requested group
    surfaces); `group` tasks run nothing and never get a row; an `interactive` task is handed
    the terminal while it runs.
    """

    id: TaskId
    command: str | None
    requested: bool
    group: bool = False
    persistent: bool = False
    cached: bool = False
    interactive: bool = False


class RunStarted(Record):
    """Emitted once, after planning and before the first task starts.

    `cache_label` names the cache the footer credits (`local cache`, `cache off`).
    """

    run_id: str
    tasks: tuple[PlannedTask, ...]
    projects_in_run: int
    projects_total: int
    concurrency: int
    cache_label: str = "local cache"


class TaskStarted(Record):
    """A task's process is about to be spawned; `command` is what runs, forwarded args included."""

    id: TaskId
    command: str
    attempt: int = 1


class TaskOutput(Record):
    """A chunk of what a task wrote, in arrival order; a hit's replay comes as these too."""

    id: TaskId
    stream: Stream
    text: str


class TaskReady(Record):
    """A persistent task's output matched its `readyWhen` (or it has none and started)."""

    id: TaskId


EMPTY_OUTPUTS = "outputs matched no file"
"""The `reason` of a cached task's success whose declared outputs matched no file: the
history mark that `vx info` lists."""
NOT_SAVED = "nothing saved"
"""The `reason` of a cached task's success that left no entry (a strict audit refused it, or
the save failed): a later miss of it is then no prune's doing."""


class TaskFinished(Record):
    """A task's final word. `key` is its cache key (16 hex) when it has one.

    `blocked_by` names the failed task at the root of a skip's chain; `reason` is the extra
    label of a failure (`timed out`, `never ready: exited`), or `EMPTY_OUTPUTS` or `NOT_SAVED` on
    a success. On
    a hit, `restored` says whether outputs were written (False: already up to date), `saved_ms`
    and `stored_cpu_ms` what the producing execution cost. `not_ready` is why a persistent task
    never became ready (`timeout`, `exited`, `spawn`). `miss` says why a cached task executed.
    `withheld` names (never values) the variables vx had and a failed task was not given.
    `flaky` is `(passes, failures)` on record for the key, this run included, when this run
    showed the task flaky (a plain pair: every row loads this class, and most carry None).
    `tainted` marks an execution behind a failed or excluded dependency: its key vouches for
    inputs it did not run on, so the history keeps the row but no flaky judgement counts it.
    `not_started` marks a `NOT_RUN` server the run had no use for (every dependant restored):
    not a stop, not a failure.
    """

    id: TaskId
    status: TaskStatus
    cache: CacheOutcome
    duration_ms: float = 0.0
    exit_code: int | None = None
    key: str | None = None
    timed_out: bool = False
    blocked_by: TaskId | None = None
    reason: str | None = None
    cpu_ms: float | None = None
    peak_rss_bytes: int | None = None
    saved_ms: float = 0.0
    attempts: int = 1
    restored: bool | None = None
    stored_cpu_ms: float | None = None
    not_ready: str | None = None
    miss: MissReason | None = None
    withheld: tuple[str, ...] = ()
    flaky: tuple[int, int] | None = None
    tainted: bool = False
    audit: AuditReport | None = None
    not_started: bool = False


class AuditFinding(Record):
    """One thing a traced task did that its declaration does not say (`vx run --audit`).

    `kind` is `undeclared-read`, `ignored-read` (covered, but git ignores it, so no key holds
    it), `missing-edge`, `undeclared-write`, `modifies-input` or `toolchain` (a note: the root
    dependency a task ran, never a misdeclaration); `path` is
    root-relative; `field` and `value` the config entry to add (`cache.inputs.files`,
    `"src/gen.txt"`), None when nothing declared fixes it; `line` the sentence said about it.
    """

    kind: str
    path: str
    field: str | None
    value: str | None
    line: str


class AuditReport(Record):
    """What the audit of one executed task found, or that it could not look (`traced` False,
    `reason` why: never a clean result for a task nobody watched). A task with no cache block
    gets `suggested`, the block it would need as (field, entries) pairs, unless `uncacheable`
    says why no block can be right (it writes tracked files, or rewrites what it reads)."""

    traced: bool
    reason: str | None = None
    findings: tuple[AuditFinding, ...] = ()
    suggested: tuple[tuple[str, tuple[str, ...]], ...] = ()
    uncacheable: str | None = None

    @property
    def faults(self) -> tuple[AuditFinding, ...]:
        """The findings that are misdeclarations (what `audit: strict` refuses to save)."""
        return tuple(f for f in self.findings if f.kind != "toolchain")


class MissReason(Record):
    """Why a cached task executed: the first key component that moved against the task's last
    cache entry, or `first run` when it has none. `kind` is a component kind (`file`, `env`,
    `upstream`, …), `first run`, `pruned` (runs of it saved entries, and none is left), or
    `same key` (the last entry holds this very key: the run did not read it); `how` is
    `changed`, `added` or `removed`."""

    kind: str
    name: str = ""
    how: str = "changed"

    def describe(self) -> str:
        """The words a miss row and `vx why` print: `src/index.ts changed`, `env API_URL`,
        `via core#build`; control characters in a name print as `\\xNN`."""
        from vx.util.text import escape_controls

        name = escape_controls(self.name)
        words = {
            "first run": "first run",
            "pruned": "pruned or evicted",
            "same key": "key unchanged",
            "file": f"{name} {self.how}",
            "workspace": f"{name} {self.how}",
            "lockfile": f"{name}: its packages moved",
            "toolchain": f"{name}: a root dependency moved",
            "package": f"{name} {self.how}",
            "env": f"env {name}",
            "runtime": f"runtime {name}",
            "ws-runtime": f"ws-runtime {name}",
            "forward": "forwarded args",
            "config": "config changed",
            "upstream": f"via {name}",
            "format": "vx key format",
        }
        return words.get(self.kind, f"{self.kind} {name}")


class Notice(Record):
    """A status line about the run (not a task): printed above the footer, on stderr."""

    text: str


class RunFinished(Record):
    """Emitted once, last: the verdict the process exits with and the wall time."""

    exit_code: int
    wall_ms: float
    interrupted: bool = False


Event = RunStarted | TaskStarted | TaskOutput | TaskReady | TaskFinished | Notice | RunFinished
