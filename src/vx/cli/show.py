"""`vx show`: the workspace's projects and their resolved tasks, as a run would load them now."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vx.cli.parser import Command, Section
from vx.cli.settings import (
    AFFECTED_FLAG,
    FILTER_FLAG,
    FORMAT_FLAG,
    OutputFormat,
    ShowSettings,
    ci_bases,
    output_format,
)
from vx.errors import ErrorCode, UserError
from vx.ids import ROOT, TaskId, is_task_id
from vx.util.fuzzy import did_you_mean, listing
from vx.util.text import clip

if TYPE_CHECKING:
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.workspace.model import Project, TaskDef, Workspace

COMMAND = Command(
    "show",
    flags=(FILTER_FLAG, AFFECTED_FLAG, FORMAT_FLAG),
    words="target",
    most_words=None,
    sections=(
        Section(
            "Targets",
            (
                ("(none)", "every project: its directory, how many tasks, its tags"),
                ("PROJECT", "that project's tasks, every field a run reads (// is the root),"),
                ("", "and the variable names each task receives from vx's environment"),
                ("PROJECT#TASK", "one task of one project"),
                ("TASK", "that task in every project that declares it"),
                ("--filter P", "only the projects vx run --filter P selects (the list, or TASK)"),
                ("--affected[=BASE]", "TASK: the projects whose TASK vx run TASK --affected runs;"),
                ("", "no TASK: the changed projects and their dependents"),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx show", ""),
                ("vx show app", ""),
                ("vx show app#build", ""),
                ("vx show test --format json", ""),
                ("vx show --filter '...@acme/core'", "core and every project that depends on it"),
            ),
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Shown:
    """One project as `vx show` presents it: its tasks, the default build when a run loads it."""

    project: Project
    tasks: tuple[TaskDef, ...]

    @property
    def has_default(self) -> bool:
        """A run gives this project the default build."""
        return any(t.default for t in self.tasks)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> ShowSettings:
    """One target at most; Nx's `show project NAME` is answered with ours."""
    words = args.words
    if len(words) == 2 and words[0] == "project":
        raise UserError(
            ErrorCode.USAGE, f"vx show takes the project's name alone: vx show {words[1]}"
        )
    if len(words) > 1:
        raise UserError(
            ErrorCode.USAGE,
            f"vx show takes one target, got {len(words)}: {' '.join(words)}",
            "see vx show --help",
        )
    target = words[0] if words else None
    if target is not None and not target.strip():
        raise UserError(
            ErrorCode.USAGE, "vx show: the target is empty — omit it to list every project"
        )
    filters = args.texts("filter")
    if filters and target is not None and is_task_id(target):
        raise UserError(
            ErrorCode.USAGE,
            f"vx show: --filter narrows a list; {clip(target)} is one task already — drop --filter",
        )
    affected = args.text("affected") if args.given("affected") else None
    if affected is not None and target is not None and is_task_id(target):
        raise UserError(
            ErrorCode.USAGE,
            f"vx show: --affected narrows a list; {clip(target)} is one task already"
            " — drop --affected",
        )
    return ShowSettings(target, output_format(args), cwd, filters, env, affected, ci_bases(env))


def execute(settings: ShowSettings, streams: Streams) -> int:
    """Load the workspace, pick what the target names, print it."""
    from vx.loader.assemble import load_workspace

    ws = load_workspace(settings.cwd)
    for note in ws.notes:
        streams.err.write(f"note: {note}\n")
    for warning in ws.warnings:
        streams.err.write(f"warning: {warning}\n")
    full = _shown(ws)
    shown = _filtered(ws, full, settings) if settings.filters else full
    if settings.affected is not None:
        shown = _affected(ws, shown, settings)
    as_json = settings.format is OutputFormat.JSON
    if settings.target is None:
        doc: Any = [_list_entry(s) for s in shown.values()]
        text = _list_text(tuple(shown.values()))
    elif (one := _project(ws, shown, settings.target)) is not None:
        doc = {
            "name": one.project.name,
            "dir": one.project.rel_dir,
            "config": _config(one),
            "env": _env_doc(ws, one),
        }
        text = _project_text(one, ws.root) + _env_text(ws, one)
    else:
        target = settings.target
        declared = any(t.name == target for s in full.values() for t in s.tasks)
        narrowed_away = declared and not any(
            t.name == target for s in shown.values() for t in s.tasks
        )
        picked = [] if narrowed_away else _tasks(ws, shown, target)
        entries = [_task_entry(s.project, t) for s, t in picked]
        doc = entries[0] if is_task_id(settings.target) else entries
        text = "\n".join(_header(s.project) + "\n" + _task_text(t) for s, t in picked)
    streams.out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n" if as_json else text)
    return 0


def _shown(ws: Workspace) -> dict[str, Shown]:
    from vx.graph.build import default_build

    reached = _default_builds(ws)
    default = default_build()
    out: dict[str, Shown] = {}
    for p in ws.projects:
        tasks = tuple(p.tasks[name] for name in sorted(p.tasks))
        if p.name in reached and default.name not in p.tasks:
            tasks = tuple(sorted((*tasks, default), key=lambda t: t.name))
        out[p.name] = Shown(p, tasks)
    return out


def _filtered(ws: Workspace, shown: dict[str, Shown], settings: ShowSettings) -> dict[str, Shown]:
    """The projects `vx run --filter` would select. Beside a task name, one of them must
    declare it, unless a `[<ref>]` chose them (then nothing changed may be the answer)."""
    from vx.graph.select import filter_scope

    target = settings.target
    if target is not None and (target == ROOT or target in shown):
        raise UserError(
            ErrorCode.USAGE,
            f"vx show: --filter narrows a list; {clip(target)} is one project"
            " — drop --filter, or name a task",
        )
    chosen = filter_scope(ws, settings.filters, env=settings.env)
    kept = {name: s for name, s in shown.items() if name in chosen.projects}
    if target is None:
        return kept
    declares = sorted(n for n, s in shown.items() if any(t.name == target for t in s.tasks))
    if declares and not chosen.by_ref and not any(n in kept for n in declares):
        raise UserError(
            ErrorCode.UNKNOWN_TASK,
            f'vx show: no project the filters select declares "{clip(target)}";'
            f" declared by: {listing(declares)}",
        )
    return kept if declares else shown


def _affected(ws: Workspace, shown: dict[str, Shown], settings: ShowSettings) -> dict[str, Shown]:
    """Beside a task, the projects whose task `vx run <task> --affected` keeps; alone, the run's
    candidates: the changed projects and their dependents (`--filter "...[<base>]"`)."""
    from vx.run.affected import affected_projects, affected_reach

    target = settings.target
    if target is not None and (target == ROOT or target in shown):
        raise UserError(
            ErrorCode.USAGE,
            f"vx show: --affected narrows a list; {clip(target)} is one project"
            " — drop --affected, or name a task",
        )
    found = affected_reach(ws, settings.affected, settings.ci_bases, settings.env)
    among = [name for name, s in shown.items() if target is not None and target in s.project.tasks]
    picked = affected_projects(ws, found, task=target, among=among)
    return {name: s for name, s in shown.items() if name in picked}


def _default_builds(ws: Workspace) -> frozenset[str]:
    """Projects whose default build the graph loads for some declared task's dependsOn.

    One graph of every declared task answers it; a workspace whose graph does not build (a
    cycle, a dangling edge: `vx run` names those) is asked one task at a time instead, so the
    list still shows what the good part reaches.
    """
    from vx.graph.build import build_graph

    roots = [TaskId(p.name, name) for p in ws.projects for name in sorted(p.tasks)]
    try:
        graphs = [build_graph(ws, roots)]
    except UserError:
        graphs = []
        for root in roots:
            try:
                graphs.append(build_graph(ws, [root]))
            except UserError:
                continue
    return frozenset(
        node.project.name for g in graphs for node in g.nodes.values() if node.task.default
    )


def _project(ws: Workspace, shown: Mapping[str, Shown], target: str) -> Shown | None:
    if target == ROOT:
        root = ws.root_project
        if root is None:
            raise UserError(
                ErrorCode.UNKNOWN_PROJECT,
                f'unknown project: "{ROOT}" — this workspace\'s root is not a project; '
                f"projects: {listing(shown)}",
            )
        return shown[root.name]
    return shown.get(target)


def _tasks(ws: Workspace, shown: Mapping[str, Shown], target: str) -> list[tuple[Shown, TaskDef]]:
    """The (project, task) pairs a `pkg#task` or bare task name names, or a refusal."""
    if is_task_id(target):
        return [_one_task(ws, shown, target)]
    found = [(s, t) for s in shown.values() for t in s.tasks if t.name == target and not t.default]
    if found:
        return found
    if target == "projects":
        raise UserError(
            ErrorCode.UNKNOWN_PROJECT,
            'unknown project or task: "projects" — vx show alone lists every project',
        )
    tasks = sorted({t.name for s in shown.values() for t in s.tasks if not t.default})
    names = [*shown, *tasks]
    near = _guess(target, names)
    tail = f" — did you mean {clip(near)}?" if near else f"; projects and tasks: {listing(names)}"
    raise UserError(ErrorCode.UNKNOWN_PROJECT, f'unknown project or task: "{clip(target)}"{tail}')


def _one_task(ws: Workspace, shown: Mapping[str, Shown], target: str) -> tuple[Shown, TaskDef]:
    try:
        tid = TaskId.parse(target)
    except ValueError:
        raise UserError(
            ErrorCode.USAGE,
            f'"{clip(target)}" is not a task of a project: write PROJECT#TASK, e.g. app#build',
        ) from None
    owner = ws.root_project if tid.project == ROOT else ws.project(tid.project)
    one = shown.get(owner.name) if owner is not None else None
    if one is not None:
        for task in one.tasks:
            if task.name == tid.task:
                return one, task
    specs = [f"{s.project.name}#{t.name}" for s in shown.values() for t in s.tasks]
    near = did_you_mean(target, specs)
    if one is None and near is None:
        scoped = _guess(tid.project, list(shown))
        near = f"{scoped}#{tid.task}" if f"{scoped}#{tid.task}" in specs else None
    if one is None:
        tail = f" — did you mean {clip(near)}?" if near else f"; projects: {listing(shown)}"
        raise UserError(ErrorCode.UNKNOWN_PROJECT, f'unknown project: "{clip(tid.project)}"{tail}')
    own = [f"{one.project.name}#{t.name}" for t in one.tasks]
    if near:
        tail = f" — did you mean {clip(near)}?"
    elif own:
        tail = f"; its tasks: {listing(own)}"
    else:
        tail = f"; {one.project.name} has no tasks"
    raise UserError(ErrorCode.UNKNOWN_TASK, f'unknown task: "{clip(target)}"{tail}')


def _guess(word: str, names: list[str]) -> str | None:
    """The name `word` most likely meant: a scoped package it is the short name of (`web`
    for `@acme/web`), else one within two edits, else the one name that holds it."""
    for matches in (
        [n for n in names if n.startswith("@") and n.endswith("/" + word)],
        [near] if (near := did_you_mean(word, names)) else [],
        [n for n in names if len(word) >= 3 and word in n],
    ):
        if len(matches) == 1:
            return matches[0]
    return None


def _list_entry(s: Shown) -> dict[str, Any]:
    p = s.project
    return {
        "name": p.name,
        "dir": p.rel_dir,
        "tags": list(p.tags),
        "tasks": [t.name for t in s.tasks],
    }


def _config(s: Shown) -> dict[str, Any]:
    return {"tags": list(s.project.tags), "tasks": {t.name: _plain(t.resolved) for t in s.tasks}}


def _task_entry(p: Project, t: TaskDef) -> dict[str, Any]:
    return {"name": p.name, "dir": p.rel_dir, "task": t.name, "config": _plain(t.resolved)}


def _plain(value: object) -> Any:
    """A resolved config (read-only mappings, tuples) as plain JSON values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _count(s: Shown) -> str:
    n = len(s.tasks)
    tasks = f"{n} task" + ("" if n == 1 else "s")
    if s.project.config is None:
        return f"{tasks} (no vx config; default build)" if s.has_default else "(no vx config)"
    if s.project.config.live:
        return f"{tasks} (no vx config; from {s.project.config.live})"
    return f"{tasks} (with the default build)" if s.has_default else tasks


def _list_text(rows: tuple[Shown, ...]) -> str:
    cells = [(s.project.name, s.project.rel_dir, _count(s), _tags(s.project.tags)) for s in rows]
    width = [max((len(cell[i]) for cell in cells), default=0) for i in range(3)]
    return "".join(
        f"{name.ljust(width[0])}  {where.ljust(width[1])}  {count.ljust(width[2])}  {tags}".rstrip()
        + "\n"
        for name, where, count, tags in cells
    )


def _tags(tags: tuple[str, ...]) -> str:
    return f"[{', '.join(tags)}]" if tags else ""


def _header(p: Project) -> str:
    return f"{p.name} — {p.rel_dir}\n"


def _project_text(s: Shown, root: Path) -> str:
    p = s.project
    head = _header(p)
    if p.tags:
        head += f"tags: {', '.join(p.tags)}\n"
    if p.config is None:
        head += (
            "no vx config: a run gives it the default build, for a dependant's ^build\n"
            if s.has_default
            else "no vx config, and no tasks\n"
        )
        head += _adoption(p, root)
    elif p.config.live:
        head += f"no vx config: its tasks are read live from {p.config.path}\n"
    elif not s.tasks:
        head += "no tasks\n"
    return head + "".join("\n" + _task_text(t) for t in s.tasks)


def _adoption(p: Project, root: Path) -> str:
    """A config-less package with package.json scripts: the way to make tasks of them."""
    from vx.adopt.init_runner import adoption_advice
    from vx.foreign.driver import read_scripts

    scripts = read_scripts(p.dir, ".") if (p.dir / "package.json").is_file() else {}
    if not scripts:
        return ""
    return f"package.json scripts: {listing(list(scripts))} — {adoption_advice(root)}\n"


def _task_env(t: TaskDef) -> tuple[str, ...]:
    """A task's own names beyond the baseline; a group runs nothing and receives none."""
    from vx.run.taskenv import own_names

    if t.exec_spec is None:
        return ()
    return own_names(t.exec_spec, t.cache_spec.inputs.env if t.cache_spec else ())


def _env_doc(ws: Workspace, s: Shown) -> dict[str, Any]:
    """The variable names (never values) each task of the project receives from vx's env."""
    from vx.run.taskenv import BASELINE, SET_BY_VX

    return {
        "baseline": list(BASELINE),
        "workspace": list(ws.config.pass_through),
        "setByVx": list(SET_BY_VX),
        "tasks": {t.name: list(_task_env(t)) for t in s.tasks if t.exec_spec is not None},
    }


def _env_text(ws: Workspace, s: Shown) -> str:
    """What a task is given: names vx passes from its own environment, never their values."""
    from vx.run.taskenv import BASELINE, NETWORK, SET_BY_VX

    runs = [t for t in s.tasks if t.exec_spec is not None]
    if not runs:
        return ""
    plain = [n for n in BASELINE if n not in NETWORK]
    upper = [n for n in NETWORK if n.isupper()]
    lines = [
        "",
        "environment each task receives (names; a value is never shown):",
        f"  baseline:  {', '.join(plain)}",
        f"  network:   {', '.join(upper[:4])},",
        f"             {', '.join(upper[4:])} (each in either case)",
    ]
    if ws.config.pass_through:
        lines.append(f"  workspace: {', '.join(ws.config.pass_through)} ({ws.config.path})")
    lines.append(f"  set by vx: {', '.join(SET_BY_VX)}")
    for t in runs:
        own = _task_env(t)
        lines.append(f"  {t.name}: {', '.join(own) if own else 'nothing more'}")
    return "\n".join(lines) + "\n"


def _task_text(t: TaskDef) -> str:
    fields = _fields(t)
    width = max((len(label) for label, _ in fields), default=0) + 2
    lines = [f"{t.name} (default)" if t.default else t.name]
    for label, value in fields:
        first, *more = value.split("\n")
        lines.append(f"  {(label + ':').ljust(width)}{first}".rstrip())
        lines += [f"  {' ' * width}{line}".rstrip() for line in more]
    return "\n".join(lines) + "\n"


def _fields(t: TaskDef) -> list[tuple[str, str]]:
    """Every field the run reads that the task sets, in the order a config lists them."""
    out: list[tuple[str, str]] = []

    def add(label: str, value: object) -> None:
        if value is None or value == () or value is False:
            return
        if value is True:
            out.append((label, "yes"))
        elif isinstance(value, tuple):
            out.append((label, ", ".join(value) if value else "(none)"))
        else:
            out.append((label, str(value)))

    add("description", t.description)
    ex = t.exec_spec
    add("command", ex.command if ex else "(group)")
    add("dependsOn", t.depends_on)
    if ex is not None:
        add("timeout", f"{ex.timeout_ms} ms" if ex.timeout_ms is not None else None)
        add("retries", ex.retries)
        add("env.passThrough", ex.env.pass_through)
        add("env.define", tuple(f"{k}={v}" for k, v in sorted(ex.env.define.items())))
        add("env.secret", ex.env.secret)
        add("persistent", ex.persistent)
        add("readyWhen", ex.ready_when)
        add("interactive", ex.interactive)
    cache = t.cache_spec
    if cache is not None:
        before = len(out)
        ins, outs = cache.inputs, cache.outputs
        if ins.files is not None:
            out.append(("inputs.files", ", ".join(ins.files) or "(none)"))
        add("inputs.workspaceFiles", ins.workspace_files)
        add("inputs.env", ins.env)
        if ins.tasks is not None:
            out.append(("inputs.tasks", ", ".join(ins.tasks) or "(none)"))
        add("inputs.runtime", ins.runtime)
        add("inputs.workspaceRuntime", ins.workspace_runtime)
        add("outputs.files", outs.files)
        add("outputs.workspaceFiles", outs.workspace_files)
        if len(out) == before:
            out.append(("cache", "on: keyed on every file of the project, no outputs"))
    return out
