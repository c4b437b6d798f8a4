"""The workspace root in `vx init`: which root scripts become the root's own tasks, which are
left out (they run the members, or share a member's task name), the steps a fan-out script
runs beside the members, and a root that lists no members although packages sit below it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.adopt import script_words as sw
from vx.adopt.init_tasks import (
    LIFECYCLE,
    PackageDraft,
    TaskDraft,
    draft_package,
    hook_targets,
    script_table,
)
from vx.errors import ConfigError
from vx.util.fuzzy import listing
from vx.util.record import Record
from vx.util.text import clip
from vx.workspace.manifests import PACKAGE_JSON, load_json_object

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.workspace.script_host import ScriptHost

LISTED = 5
RUNS_MEMBERS = "runs the workspace's members"
SHARES_NAME = "a member's task has this name, so vx run --all would run it twice"


class Beside(Record):
    """A root script's steps beside its member fan-out: the root task keeps them and runs
    after the members' task of that name (`tsc && npm run build --workspaces && rollup -c`
    keeps `tsc && rollup -c`, after every member's build)."""

    script: str
    steps: str
    member_task: str


def unreached(root: Path) -> list[str]:
    """A root with no workspace list that has packages below it: say how to list them.

    Lerna-classic repos list packages in lerna.json, which package managers do not read.
    """
    globs: list[str] = ["packages/*"]
    lerna = root / "lerna.json"
    if lerna.is_file():
        try:
            listed = load_json_object(lerna, "lerna.json").get("packages")
        except ConfigError:
            listed = None
        if isinstance(listed, list) and all(isinstance(g, str) for g in listed) and listed:
            globs = listed
    below = sorted(
        p.parent.relative_to(root).as_posix()
        for glob in globs
        for p in root.glob(f"{glob.rstrip('/')}/{PACKAGE_JSON}")
        if "node_modules" not in p.parts
    )
    if not below and not lerna.is_file():
        return []
    spelled = ", ".join(f'"{g}"' for g in globs)
    have = "has its" if len(below) == 1 else "have their"
    where = f" ({listing(below, LISTED)} {have} own package.json)" if below else ""
    via = "lerna.json lists the packages, but " if lerna.is_file() else ""
    note = (
        f"{via}package.json declares no workspaces, so vx reads the root as one package{where}:"
        f' add "workspaces": [{spelled}] to package.json and re-run vx init'
    )
    return [note]


def _beside(
    name: str, command: str, members: tuple[str, ...], carried: Mapping[str, tuple[str, ...]]
) -> Beside | None:
    """The steps of a plain `&&` chain that are not its member fan-out, as written.

    None when every step fans out, or when the command is anything but `a && b && …` (a `;`,
    `||`, pipe or quote across `&&` could change what a step means once others are gone).
    """
    steps = [part.strip() for part in command.split("&&")]
    kept: list[str] = []
    target: str | None = None
    for step in steps:
        line = sw.read_line(step)
        if not line.readable or len(line.segments) != 1 or any(line.background):
            return None
        words = line.segments[0]
        if sw.workspace_part(words, members, "."):
            named = [w for w in words[1:] if w in carried]
            target = target or (named[0] if named else name)
            continue
        kept.append(step)
    if target is None or not kept or not carried.get(target):
        return None
    return Beside(name, " && ".join(kept), target)


def draft_root(
    manifest: Mapping[str, object],
    host: ScriptHost,
    members: tuple[str, ...],
    carried: Mapping[str, tuple[str, ...]],
) -> tuple[PackageDraft, list[tuple[str, str]], list[Beside]]:
    """The root's own tasks among several packages, the scripts left out with why, and the
    fan-out scripts whose other steps the root keeps.

    `carried` maps a task name to the `pkg#task` ids of the members that declare it.
    """
    scripts = script_table(manifest)
    out: dict[str, str] = {}
    beside: dict[str, Beside] = {}
    for name, command in scripts.items():
        if name in LIFECYCLE:
            continue
        line = sw.read_line(command)
        if any(sw.workspace_part(w, members, ".") for w in line.segments):
            found = _beside(name, command, members, carried)
            if found is None:
                out[name] = RUNS_MEMBERS
            else:
                beside[name] = found
    changed = True
    while changed:  # a script that runs a left-out script by name runs the members too
        changed = False
        for name, command in scripts.items():
            if name in out or name in beside or name in LIFECYCLE:
                continue
            runs = {
                s
                for w in sw.read_line(command).segments
                for s in sw.scripts_run(w, frozenset(scripts))
            }
            if runs & set(out):
                out[name] = RUNS_MEMBERS
                changed = True
    for name in scripts:
        if name not in out and name not in beside and name in carried and name not in LIFECYCLE:
            out[name] = SHARES_NAME
    kept = {k: beside[k].steps if k in beside else v for k, v in scripts.items() if k not in out}
    hooks = hook_targets(scripts, host)
    for hook, target in hooks.items():  # a hook goes where its script goes
        if target in out:
            kept.pop(hook, None)
    draft = draft_package(kept, host, manifest, members=members, here=".")
    tasks = tuple(
        _after_members(t, carried[beside[t.name].member_task]) if t.name in beside else t
        for t in draft.tasks
    )
    left_out = sorted(out.items(), key=lambda kv: list(scripts).index(kv[0]))
    return draft._replace(tasks=tasks), left_out, list(beside.values())


def _after_members(task: TaskDraft, member_ids: tuple[str, ...]) -> TaskDraft:
    """The root task runs where the fan-out ran: after each member's task, not after `^build`
    (the root depends on no member)."""
    deps = [d for d in task.depends_on if not d.startswith("^")]
    return task._replace(depends_on=(*member_ids, *deps))


def root_notes(
    left_out: list[tuple[str, str]], manifest: Mapping[str, object], beside: Sequence[Beside]
) -> list[str]:
    """The report's lines on root scripts left out or split, and how vx runs what they ran:
    quoting a script the root has, never an example of the manager's."""
    if not left_out and not beside:
        return []
    by_reason: dict[str, list[str]] = {}
    for name, reason in left_out:
        by_reason.setdefault(reason, []).append(name)
    notes = [
        f"root scripts left out ({reason}): {', '.join(names)}"
        for reason, names in by_reason.items()
    ]
    notes.extend(
        f"root script {b.script}: its own steps ({b.steps}) are the root's {b.script} task,"
        f" run after every member's {b.member_task}"
        for b in beside
    )
    fanned = by_reason.get(RUNS_MEMBERS, [])
    if fanned:
        name = "build" if "build" in fanned else fanned[0]
        ran = clip(script_table(manifest).get(name, ""), 120)
        notes.append(f"vx run {name} --all replaces what the root ran as {ran}")
    return notes
