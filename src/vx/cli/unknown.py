"""What vx answers a word that is no verb: a typo, a task where the verb goes, another tool's verb.

Every answer is a refusal (VX_E_UNKNOWN_COMMAND) that names what to type instead; none runs
anything, so a verb added later with the same name never changes what an old command did.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, NoReturn

from vx.cli import verbs
from vx.errors import ErrorCode, UserError
from vx.ids import ROOT, TaskId, is_task_id
from vx.util.fuzzy import did_you_mean, distance, listing
from vx.util.text import clip

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from vx.workspace.model import Workspace

TASK_FLAGS = frozenset({"-t", "--targets", "--target"})
PROJECT_FLAGS = frozenset({"-p", "--projects"})
SCOPE_FLAGS = frozenset({"--all"})
_PLAIN = re.compile(r"[\w@%+=:,./-][\w@%+=:,./#-]*")


def refuse_unknown(
    word: str, rest: Sequence[str], *, cwd: Path, plugin_verbs: Sequence[str] = ()
) -> NoReturn:
    """Refuse `vx <word> <rest…>` with the nearest thing that would work."""
    raise UserError(
        ErrorCode.UNKNOWN_COMMAND, explain(word, rest, cwd=cwd, plugin_verbs=plugin_verbs)
    )


def explain(word: str, rest: Sequence[str], *, cwd: Path, plugin_verbs: Sequence[str] = ()) -> str:
    """The one line that refuses `word` as a verb.

    The workspace is loaded only here, to tell a task from a typo; a workspace that does not
    load leaves the verb-only answer. The verbs the workspace's plugins declare are near
    words too, and listed after core's.
    """
    head = f'unknown command: "{clip(word)}"'
    foreign = FOREIGN.get(word)
    if foreign is not None:
        return f"{head} — {foreign(rest)}"
    verb = did_you_mean(word, (*verbs.names(), *plugin_verbs))
    task = _as_task(word, rest, cwd, verb) if not word.startswith("-") else None
    if task is not None:
        return f"{head} — {task}"
    if verb is not None:
        return f"{head} — did you mean {clip(verb)}?"
    if plugin_verbs:
        return (
            f"{head}; commands: {listing(verbs.names())}; plugin commands:"
            f" {listing(plugin_verbs)} (vx help describes them)"
        )
    return f"{head}; commands: {listing(verbs.names())} (vx help describes them)"


def _as_task(word: str, rest: Sequence[str], cwd: Path, verb: str | None) -> str | None:
    from vx.loader.assemble import load_workspace

    try:
        ws = load_workspace(cwd)
    except UserError:
        return None
    declared = sorted({name for p in ws.projects for name in p.tasks})
    if is_task_id(word):
        try:
            tid = TaskId.parse(word)
        except ValueError:
            return None
        project = ws.root_project if tid.project == ROOT else ws.project(tid.project)
        if project is None or tid.task not in project.tasks:
            return None
        return f"to run the task, use {_command(['vx', 'run', word, *rest])}"
    if word in declared:
        return f"to run the task, use {_run_line(ws, word, rest, cwd)}"
    near = did_you_mean(word, declared)
    if near is None or (verb is not None and distance(word, verb) <= distance(word, near)):
        return None
    return f"did you mean the task {clip(near)}? To run it, use {_run_line(ws, near, rest, cwd)}"


def _run_line(ws: Workspace, task: str, rest: Sequence[str], cwd: Path) -> str:
    """The `vx run` that does what `vx <task> <rest…>` meant, as Turbo and Nx read it.

    Leading words name projects (`vx build app` → `vx run app#build`); flags pass as they
    are. With no project named, the line runs the task where `vx run` would find it: the
    cwd's project when it declares the task, else every project (`--all`).
    """
    at = next((i for i, w in enumerate(rest) if w.startswith("-")), len(rest))
    names, flags = rest[:at], rest[at:]
    if names:
        anchored = [f"{_project_name(ws, n)}#{task}" for n in names]
        return _command(["vx", "run", *anchored, *flags])
    line = ["vx", "run", task]
    if not any(f.partition("=")[0] in SCOPE_FLAGS for f in flags):
        from vx.loader.assemble import cwd_project

        here = cwd_project(ws, cwd)
        if here is None or here.is_root or task not in here.tasks:
            line.append("--all")
    return _command([*line, *flags])


def _command(words: Sequence[str]) -> str:
    """Words as a shell line, quoting only what a shell reads differently (`#` mid-word is not).

    A word too long to read in a one-line answer is cut: the line shows the way, and the user
    has the whole word in the command they typed.
    """
    words = [clip(w) for w in words]
    return " ".join(w if _PLAIN.fullmatch(w) else shlex.quote(w) for w in words)


def _project_name(ws: Workspace, word: str) -> str:
    """`word` as a project: itself, or the one scoped package it ends (`cart`, `@acme/cart`)."""
    if ws.project(word) is not None:
        return word
    tails = [p.name for p in ws.projects if p.name.startswith("@") and p.name.endswith("/" + word)]
    return tails[0] if len(tails) == 1 else word


def _nx_words(rest: Sequence[str]) -> tuple[list[str], list[str]]:
    """Task and project names out of Nx's `-t build test -p app,lib` (either flag form)."""
    tasks: list[str] = []
    projects: list[str] = []
    into: list[str] | None = None
    for token in rest:
        if token.startswith("-"):
            name, eq, value = token.partition("=")
            into = tasks if name in TASK_FLAGS else projects if name in PROJECT_FLAGS else None
            if eq and into is not None:
                into.extend(v for v in value.split(",") if v)
                into = None
            continue
        if into is not None:
            into.extend(v for v in token.split(",") if v)
    return tasks, projects


def _run_with(*flags: str) -> Callable[[Sequence[str]], str]:
    def answer(rest: Sequence[str]) -> str:
        tasks, projects = _nx_words(rest)
        names = tasks or ["TASK"]
        if projects:
            return "use vx run " + _command([f"{p}#{t}" for p in projects for t in names])
        return f"use vx run {_command([*names, *flags])}"

    return answer


def _affected(rest: Sequence[str]) -> str:
    """Nx's `affected -t T [--base B]`: T where files changed since B's merge base, and in what
    depends on those projects."""
    tasks, _ = _nx_words(rest)
    base = "main"
    for i, token in enumerate(rest):
        name, eq, value = token.partition("=")
        if name == "--base":
            base = value if eq else (rest[i + 1] if i + 1 < len(rest) else base)
    return f"use vx run {_command([*(tasks or ['TASK']), '--filter', f'...[{base}]'])}"


def _say(text: str) -> Callable[[Sequence[str]], str]:
    return lambda _rest: text


FOREIGN: dict[str, Callable[[Sequence[str]], str]] = {
    "run-many": _run_with("--all"),
    "affected": _affected,
    "graph": _say(
        "use vx run TASK --graph[=<file>.dot] for the task graph as Graphviz DOT"
        " (vx show TASK prints each project's task with its dependsOn edges)"
    ),
    "query": _say(
        "use vx run TASK --dry=json for the planned tasks as JSON"
        " (vx show --format json prints every project and its tasks)"
    ),
    "ls": _say("vx show lists every project"),
    "reset": _say(
        "use vx cache prune --older-than <age> or --max-size <size> to evict cache entries;"
        " to wipe the cache, delete the cache store vx info names"
    ),
    "daemon": _say("vx runs no daemon: drop it"),
    "login": _say(
        "vx has no account to log in to: the turbo remote-cache plugin reads TURBO_TOKEN"
        " (docs/plugins.md)"
    ),
    "logout": _say("vx has no account to log out of: drop it"),
    "link": _say(
        "a remote cache is a plugin named in vx.workspace.* (docs/plugins.md): nothing to link"
    ),
    "unlink": _say("a remote cache is a plugin named in vx.workspace.*: remove it there to unlink"),
}
