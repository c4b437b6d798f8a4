"""`vx why`'s answer: a task's latest run against its previous one, component by component.

Read-only over the index: the runs' keys come from `runs`, each key's components from
`entry_inputs` (kept with every saved entry), and an upstream component's digest is the
dependency's key, so the root-cause walk follows keys alone, never the workspace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cache.diff import diff_components, own_changes, unchanged_count
from vx.cache.key import Kind
from vx.errors import ErrorCode, UserError
from vx.events import CacheOutcome, TaskStatus
from vx.util.fuzzy import did_you_mean
from vx.util.record import Record
from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from vx.cache.diff import Change
    from vx.cache.index import Index
    from vx.cache.runlog import InvocationRow, RunRow

MAX_ROOTS = 5
_LOOKBACK = 50
"""How many older rows of the task a failed previous run is looked past for a saved entry."""
_HITS = frozenset({CacheOutcome.LOCAL, CacheOutcome.REMOTE, CacheOutcome.UP_TO_DATE})

# What to do about each kind of changed component: the lines `vx why` ends with.
ADVICE: dict[Kind, str] = {
    Kind.FILE: "an edit re-runs by design; a file the task does not read belongs out of"
    " cache.inputs.files",
    Kind.ENV: "a declared variable took another value; one the task does not read belongs out"
    " of cache.inputs.env",
    Kind.WORKSPACE: "a lockfile or root manifest changed (an install): every task keys on it",
    Kind.LOCKFILE: "a package this project installs moved in the lockfile (an install or update)",
    Kind.TOOLCHAIN: "a root dependency moved in the lockfile (a toolchain upgrade): every task"
    " keys on the root's own dependencies",
    Kind.PACKAGE: "the project's manifest changed: every task of the project keys on it",
    Kind.CONFIG: "the task's config changed: vx show {task} prints it as it is now",
    Kind.RUNTIME: "a declared command printed something else (a tool upgrade); drop it from"
    " cache.inputs.runtime if the output does not matter",
    Kind.WS_RUNTIME: "a declared command printed something else (a tool upgrade); drop it from"
    " cache.inputs.workspaceRuntime if the output does not matter",
    Kind.FORWARD: "the args after -- changed; only the tasks a run names receive and key on them",
    Kind.UPSTREAM: "a dependency's key moved: vx why {dep} explains it",
    Kind.FORMAT: "vx changed its own key format (an upgrade): every task re-keys once",
}


class Side(Record):
    """One run of the task: its row and when its run started (ms since the epoch)."""

    row: RunRow
    started_ms: int


class Root(Record):
    """A chain from the task down to a dependency whose own inputs moved, and those inputs."""

    chain: tuple[str, ...]
    changes: tuple[Change, ...]


class Explanation(Record):
    """Everything `vx why` prints, as data; `changes` None when no component diff is there."""

    task_id: str
    latest: Side
    previous: Side | None
    compared: Side | None
    verdict: str
    changes: tuple[Change, ...] | None
    unchanged: int
    roots: tuple[Root, ...]
    more_roots: int
    unresolved: tuple[str, ...]


def resolve_task(index: Index, target: str, cwd_project: str | None) -> str:
    """`PKG#TASK` as given, or the one project that ran a bare task name."""
    known = index.task_ids()
    if not known and not index.invocations(limit=1):
        raise UserError(ErrorCode.NO_HISTORY, "vx why: nothing has run yet — run something first")
    if not known:
        raise UserError(
            ErrorCode.NO_HISTORY,
            "vx why: no run executed a task yet (a group records no row) — ask about a task"
            " the group depends on",
        )
    ids = [f"{p}#{t}" for p, t in known]
    if "#" in target:
        if target in ids:
            return target
        near = did_you_mean(target, ids)
        tail = f" — did you mean {near}?" if near else " — vx last --list shows the runs"
        raise UserError(ErrorCode.NO_HISTORY, f"vx why: no recorded run of {clip(target)}{tail}")
    projects = [p for p, t in known if t == target]
    if len(projects) == 1:
        return f"{projects[0]}#{target}"
    if projects:
        if cwd_project in projects:
            return f"{cwd_project}#{target}"
        listed = ", ".join(f"{p}#{target}" for p in projects)
        raise UserError(
            ErrorCode.AMBIGUOUS,
            f"vx why: {clip(target)} ran in several projects; name one: {listed}",
        )
    names = sorted({t for _, t in known})
    near = did_you_mean(target, names)
    if near is None:
        near = " or ".join([n for n in names if target.lower() in n.lower()][:3]) or None
    tail = f" — did you mean {near}?" if near else " — vx last --list shows the runs"
    raise UserError(ErrorCode.NO_HISTORY, f"vx why: no recorded run of {clip(target)}{tail}")


def explain(
    index: Index, task_id: str, run_id: str | None, *, store: Path | None = None
) -> Explanation:
    """The task's run (RUNID's, else its latest) against the one before it.

    `store` is the cache directory, where the lockfile closures the keys digested are kept:
    with it, a `lockfile` change names the packages that moved.
    """
    project, _, task = task_id.partition("#")
    rows = index.task_runs(project, task, limit=_LOOKBACK if run_id is None else 10**9)
    if not rows:  # its rows are there but none reads: a damaged history, read as a shorter one
        raise UserError(
            ErrorCode.NO_HISTORY,
            f"vx why: no readable recorded run of {clip(task_id)} — vx last --list shows the runs",
        )
    at = 0
    if run_id is not None:
        at = next((i for i, (r, _) in enumerate(rows) if r.run_id.startswith(run_id)), -1)
        if at < 0:
            runs = index.invocations(limit=2, prefix=run_id)
            what = (
                f"run {runs[0].run_id} did not run {task_id}"
                if len(runs) == 1
                else f"{len(runs)} runs have an id starting {clip(run_id)}; give more of it"
                if runs
                else f"no run has an id starting {clip(run_id)}"
            )
            raise UserError(ErrorCode.NO_HISTORY, f"vx why: {what} — vx last --list shows the runs")
    latest = Side(*rows[at])
    # A skipped row never ran the task: the run before is the one it ran in.
    older = [
        Side(*r) for r in rows[at + 1 : at + 1 + _LOOKBACK] if r[0].status is not TaskStatus.SKIPPED
    ]
    previous = older[0] if older else None
    if latest.row.key is None or latest.row.status is TaskStatus.SKIPPED:
        blocked = f" (blocked by {latest.row.blocked_by})" if latest.row.blocked_by else ""
        verdict = f"skipped{blocked}: the task never ran, so there is no re-run to explain"
        return _plain(task_id, latest, previous, verdict)
    if previous is None:
        return _plain(task_id, latest, None, "first recorded run of the task: nothing to compare")
    if previous.row.key == latest.row.key:
        return _plain(task_id, latest, previous, _same_key(index, latest, previous))
    compared = previous
    if previous.row.status is not TaskStatus.SUCCESS:
        saved = index.entry_keys([s.row.key for s in older if s.row.key])
        compared = next((s for s in older if s.row.key in saved), previous)
    new = index.entry_inputs(latest.row.key)
    old = index.entry_inputs(compared.row.key or "")
    if not new or not old:
        return Explanation(
            task_id,
            latest,
            previous,
            compared if compared is not previous else None,
            "cache key changed: (inputs differ)",
            None,
            0,
            (),
            0,
            (),
        )
    changes = _detailed(diff_components(old, new), store)
    roots, unresolved = _roots(index, task_id, changes, store)
    shown = ", ".join(f"{c.kind} {c.name}" for c in changes[:3])
    more = f", +{len(changes) - 3} more" if len(changes) > 3 else ""
    return Explanation(
        task_id,
        latest,
        previous,
        compared if compared is not previous else None,
        f"cache key changed: {shown}{more}",
        changes,
        unchanged_count(old, new),
        tuple(roots[:MAX_ROOTS]),
        max(len(roots) - MAX_ROOTS, 0),
        tuple(unresolved),
    )


def _plain(task_id: str, latest: Side, previous: Side | None, verdict: str) -> Explanation:
    return Explanation(task_id, latest, previous, None, verdict, None, 0, (), 0, ())


_SAME = "cache key unchanged: re-executed — "
_TAINT = "a task run past a failed dependency under --continue is never cached"


def _same_key(index: Index, latest: Side, previous: Side) -> str:
    """Which of an unchanged key's three endings this run had, and the cause of a re-execution
    where the history shows one.

    The history keeps no run's cache policy, only the command typed, so reads turned off are
    named from that command; a run on a key with an entry that read the cache would have hit.
    """
    row, before = latest.row, previous.row
    if row.cache in _HITS and row.status is TaskStatus.SUCCESS:
        return "cache key unchanged: served from cache, nothing re-ran"
    if row.cache is CacheOutcome.NO_CACHE:
        return (
            "cache key unchanged: this run recorded no cache outcome (the task has no cache"
            " block, or the run used --no-cache), so there is no re-run to explain"
        )
    if before.status is TaskStatus.FAILED:
        return _SAME + "the previous run on this key failed and saved nothing"
    reads_off = _reads_off(index, row.run_id)
    if reads_off:
        return _SAME + f"the run did not read the cache ({reads_off})"
    held = bool(index.entry_keys([row.key or ""]))
    if before.cache is CacheOutcome.MISS and _beside_failure(before):
        if not held and _beside_failure(row):
            return _SAME + f"neither run saved it: both ran beside a failed task ({_TAINT})"
        return _SAME + f"the previous run ran beside a failed task and was not saved ({_TAINT})"
    if before.cache is CacheOutcome.NO_CACHE:
        return _SAME + "the previous run wrote no cache (no cache block, or --no-cache)"
    if before.cache is CacheOutcome.MISS:
        return (
            _SAME + "the previous run executed, and no entry held the key when this one ran"
            " (its save failed, or a prune took it)"
        )
    if before.cache in _HITS:
        return _SAME + "no entry for the key was there when it ran (pruned or evicted)"
    return _SAME + "vx cannot name the cause: the run read the cache and found no entry"


def _invocation(index: Index, run_id: str) -> InvocationRow | None:
    found = index.invocations(limit=1, prefix=run_id)
    return found[0] if found and found[0].run_id == run_id else None


def _reads_off(index: Index, run_id: str) -> str:
    """`--force`, `--no-cache` or the `--cache` spec the run's command turned local reads off
    with; empty when its command did not (or is not on record)."""
    import shlex

    inv = _invocation(index, run_id)
    if inv is None:
        return ""
    try:
        words = shlex.split(inv.command)
    except ValueError:
        return ""
    words = words[: words.index("--")] if "--" in words else words
    if "--no-cache" in words:
        return "--no-cache"
    if "--force" in words:
        return "--force"
    for i, word in enumerate(words):
        spec = word.removeprefix("--cache=") if word.startswith("--cache=") else None
        if word == "--cache" and i + 1 < len(words):
            spec = words[i + 1]
        if spec is not None and _local_unread(spec):
            return f"--cache={spec}"
    return ""


def _local_unread(spec: str) -> bool:
    """Whether a `--cache` spec leaves the local layer without `r`."""
    for segment in spec.split(","):
        layer, _, flags = segment.partition(":")
        if layer.strip() == "local" and "r" not in flags:
            return True
    return False


def _beside_failure(row: RunRow) -> bool:
    """The row's run executed it behind a failed or excluded dependency (`--continue`), which
    the history records on the row: such a run is never saved."""
    return row.tainted


def _detailed(changes: tuple[Change, ...], store: Path | None) -> tuple[Change, ...]:
    """`changes` with each changed lockfile's moved packages filled in, where they were kept;
    a moved root dependency reads `root dependency esbuild 0.20.1 → 0.21.0`."""
    kinds = (Kind.LOCKFILE, Kind.TOOLCHAIN)
    if store is None or not any(c.kind in kinds for c in changes):
        return changes
    from vx.cache.lockfilekeys import describe_move

    def lines(c: Change, old: str, new: str) -> tuple[str, ...]:
        moved = describe_move(store, old, new)
        if c.kind is Kind.TOOLCHAIN:
            return tuple(f"root dependency {line}" for line in moved)
        return moved

    return tuple(
        c._replace(detail=lines(c, c.old, c.new))
        if c.kind in kinds and c.old is not None and c.new is not None
        else c
        for c in changes
    )


def _roots(
    index: Index, task_id: str, changes: Sequence[Change], store: Path | None
) -> tuple[list[Root], list[str]]:
    """Follow every upstream key that moved down to the dependencies whose own inputs moved."""
    roots: list[Root] = []
    unresolved: list[str] = []
    seen: set[tuple[str, str]] = set()

    def walk(chain: tuple[str, ...], moved: Sequence[Change]) -> None:
        for change in moved:
            if change.kind is not Kind.UPSTREAM:
                continue
            dep = change.name
            if change.old is None or change.new is None or (dep, change.new) in seen:
                continue
            seen.add((dep, change.new))
            new, old = index.entry_inputs(change.new), index.entry_inputs(change.old)
            if not new or not old:
                unresolved.append(dep)
                continue
            theirs = _detailed(diff_components(old, new), store)
            own = own_changes(theirs)
            if own:
                roots.append(Root((*chain, dep), own))
            walk((*chain, dep), theirs)

    walk((task_id,), changes)
    return roots, unresolved


def todo_lines(explanation: Explanation) -> list[tuple[str, str]]:
    """(kind, what to do) per kind that moved: the roots' kinds when the walk found roots."""
    e = explanation
    if e.changes is None:
        return []
    moved = [*own_changes(e.changes), *(c for root in e.roots for c in root.changes)]
    if not e.roots:
        moved = list(e.changes)
    out: list[tuple[str, str]] = []
    kinds = dict.fromkeys(c.kind for c in moved if c.kind is not Kind.UPSTREAM or not e.roots)
    for kind in kinds:
        if kind is Kind.UPSTREAM:
            deps = [c.name for c in moved if c.kind is Kind.UPSTREAM]
            out.extend(("upstream", ADVICE[kind].format(dep=d)) for d in deps)
        else:
            out.append((str(kind), ADVICE[kind].format(task=e.task_id)))
    out.extend(("upstream", ADVICE[Kind.UPSTREAM].format(dep=d)) for d in e.unresolved)
    return out
