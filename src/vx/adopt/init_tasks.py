"""One package's package.json scripts → the tasks `vx init` writes for it (the mapping rules).

Scripts are copied verbatim except where copying would lose what the package manager did:
`pre`/`post` hooks are folded into their script, a bare `npm run x` becomes a group over
`x`, `$npm_package_*` is defined, servers and watchers are persistent, and `build` waits
on the builds below it. What cannot be decided is a TODO the file and the report carry.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from vx.adopt import script_words as sw
from vx.adopt.script_outputs import outdir
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.workspace.script_host import ScriptHost

BUILD = "build"
# npm runs these around install, pack, publish and version: they are never tasks, and a
# `pre`/`post` of them is the manager's, never a hook vx folds.
LIFECYCLE = frozenset(
    {
        "preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare",
        "postprepare", "prepublishOnly", "prepack", "postpack", "publish",
        "postpublish", "preversion", "version", "postversion", "dependencies",
        "preuninstall", "uninstall", "postuninstall", "prerestart", "postrestart",
    }
)  # fmt: skip
WAITS_FOR_BUILD = frozenset({"test", "typecheck", "type-check", "check-types", "types"})
BUILDERS = re.compile(r"\b(tsc|tsup|bob build|rollup|vite build|babel|unbuild|webpack|esbuild|"
                      r"microbundle|pkgroll|tshy|swc|bunchee)\b")  # fmt: skip
LIVE_FIELDS = {"npm_package_name": "name", "npm_package_version": "version"}
_TASK_NAME = re.compile(r"[^#^\s][^#\s]*")

CACHE_REASON = (
    "no cache block, so this task always runs; add one naming its real inputs and outputs"
    " to cache it"
)
HOOKS_REASON = (
    "its pre/post scripts are folded in as npm ran them (a vx_script function: each part in"
    " a subshell, forwarded args to the script alone)"
)
MEMBER_REASON = (
    "it runs another member's work: name that task under dependsOn and drop it from the"
    " command, so the graph runs it once"
)
OWN_REASON = (
    "it runs this package's own scripts inside its command, beside their own tasks, so they"
    " run twice: list them under dependsOn instead if their order does not matter"
)
READY_REASON = (
    "another task waits on this server: add exec.readyWhen, a pattern its output prints once"
    " it is ready, so the waiter starts then"
)
NPM_VAR_REASON = "it reads npm variables vx does not set: define them under exec.env.define"
COPY_REASON = "exec.env.define copies package.json's name/version: update it when they change"
PNP_REASON = (
    "it runs through `yarn run`: Plug'n'Play keeps bins in .pnp.cjs, where vx's PATH finds"
    " none; with nodeLinker: node-modules in .yarnrc.yml, write the script's command instead"
)


class Todo(Record):
    """Something the user must decide: the reason (shared across tasks) and this task's part."""

    reason: str
    detail: str = ""


class TaskDraft(Record):
    """One task as `vx init` will write it. `command` None is a group; `define` maps a
    variable to its value (`live` names the package.json field a `.py` config reads it from);
    `outputs` is the suggested cache block's outputs, shown under the cache TODO; `cache` a
    block written as a field (uv's build, or what `vx init --observe` saw), and `uncached` why
    an observed task was left without one, written as a comment above it."""

    name: str
    depends_on: tuple[str, ...] = ()
    command: str | None = None
    persistent: bool = False
    define: tuple[tuple[str, str, str | None], ...] = ()  # (variable, value, live field)
    todos: tuple[Todo, ...] = ()
    outputs: tuple[str, ...] | None = None
    cache: Mapping[str, object] | None = None
    uncached: str | None = None


class Skipped(Record):
    """A script left out, and why (for the report)."""

    script: str
    reason: str


class PackageDraft(Record):
    """What `vx init` makes of one package's scripts."""

    tasks: tuple[TaskDraft, ...]
    skipped: tuple[Skipped, ...] = ()
    builder_hook: str | None = None  # a lifecycle script that builds, when there is no build


def valid_task_name(name: str) -> bool:
    """A name a config may carry: no `#`, no leading `^`, no whitespace, not empty."""
    return bool(_TASK_NAME.fullmatch(name))


def hook_targets(scripts: Mapping[str, str], host: ScriptHost) -> dict[str, str]:
    """`pre<x>`/`post<x>` names folded into `x`: hook name → `x`. None under a manager that
    runs no hooks, and never around a lifecycle verb."""
    if not host.hooks:
        return {}
    folded: dict[str, str] = {}
    for name in scripts:
        for prefix in ("pre", "post"):
            target = name[len(prefix) :]
            hook = name.startswith(prefix) and target in scripts
            if hook and target not in LIFECYCLE and name not in LIFECYCLE:
                folded[name] = target
    return folded


class _Mapper:
    """The rules over one package's scripts; `members`/`here` let it spot other members' work."""

    def __init__(
        self,
        scripts: Mapping[str, str],
        host: ScriptHost,
        manifest: Mapping[str, object],
        members: tuple[str, ...],
        here: str,
    ) -> None:
        self.scripts = scripts
        self.host = host
        self.manifest = manifest
        self.members = members
        self.here = here
        self.hooks = hook_targets(scripts, host)
        self.names = frozenset(
            n for n in scripts if n not in LIFECYCLE and n not in self.hooks and valid_task_name(n)
        )
        self._persistent: dict[str, bool] = {}

    def persistent(self, name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Serves or watches: by its name, its command, or a script of that kind it runs."""
        if name in self._persistent:
            return self._persistent[name]
        found = sw.watch_name(name)
        line = sw.read_line(self.scripts.get(name, ""))
        for words, background in zip(line.segments, line.background, strict=True):
            if found or background:
                continue
            if sw.watches_or_serves(words):
                found = True
            for other in sw.scripts_run(words, self.names):
                if other not in seen | {name} and self.persistent(other, seen | {name}):
                    found = True
        self._persistent[name] = found
        return found

    def delegate(self, name: str) -> str | None:
        if any(self.hooks.get(h) == name for h in self.hooks):
            return None
        target = sw.delegate(self.scripts[name], self.names)
        return target if target != name else None

    def build_chain(self) -> tuple[str, ...]:
        """`build` and the groups it delegates through, ending at the task that does the work."""
        chain = [BUILD]
        while (target := self.delegate(chain[-1])) is not None and target not in chain:
            chain.append(target)
        return tuple(chain)

    def draft(self) -> PackageDraft:
        chain = self.build_chain() if BUILD in self.names else ()
        tasks = _await_servers([self._task(n, chain) for n in self.scripts if n in self.names])
        skipped = [
            Skipped(n, "no task may carry that name (no #, no leading ^, no spaces)")
            for n in self.scripts
            if not valid_task_name(n) and n not in LIFECYCLE
        ]
        builder = None
        if BUILD not in self.names:
            builder = next(
                (
                    h
                    for h in ("prepack", "prepublishOnly", "prepublish", "prepare")
                    if BUILDERS.search(self.scripts.get(h, ""))
                ),
                None,
            )
        return PackageDraft(tuple(tasks), tuple(skipped), builder)

    def _task(self, name: str, chain: tuple[str, ...]) -> TaskDraft:
        command = self.scripts[name]
        target = self.delegate(name)
        deps: list[str] = []
        todos: list[Todo] = []
        if chain and name == chain[-1]:
            deps.append(f"^{BUILD}")
        if name in WAITS_FOR_BUILD and chain and name not in chain:
            deps.append(BUILD)
        if target is not None:
            return TaskDraft(name, (target, *deps))
        persistent = self.persistent(name)
        todos.extend(self._command_todos(command, name, persistent=persistent))
        shell = self._folded(name, command)
        if shell != command:
            todos.append(Todo(HOOKS_REASON))
        define, var_todos = self._defines(command, name)
        todos.extend(var_todos)
        if self.host.pnp:
            todos.append(Todo(PNP_REASON, f"the script runs: {command}"))
            shell = f"yarn run {name}"
        elif self.host.berry:
            shell = re.sub(r"(^|[;&|(]\s*)run(?=\s)", r"\1yarn run", shell)
        outputs = None
        if chain and name == chain[-1]:
            outputs = outdir(command) or ("dist/**",)
            todos.insert(0, Todo(CACHE_REASON))
        return TaskDraft(name, tuple(deps), shell, persistent, define, tuple(todos), outputs)

    def _folded(self, name: str, command: str) -> str:
        pre = self.scripts.get(f"pre{name}") if self.hooks.get(f"pre{name}") == name else None
        post = self.scripts.get(f"post{name}") if self.hooks.get(f"post{name}") == name else None
        if pre is None and post is None:
            return command
        parts = [f'({command} "$@")']
        if pre is not None:
            parts.insert(0, f"(set --; {pre})")
        if post is not None:
            parts.append(f"(set --; {post})")
        return f"vx_script() {{ {' && '.join(parts)}; }}; vx_script"

    def _command_todos(self, command: str, name: str, *, persistent: bool) -> list[Todo]:
        todos: list[Todo] = []
        line = sw.read_line(command)
        parts = [p for w in line.segments if (p := sw.workspace_part(w, self.members, self.here))]
        if parts and self.here != ".":
            todos.append(Todo(MEMBER_REASON, "; ".join(parts)))
        own = [
            s
            for w in line.segments
            if not sw.workspace_part(w, self.members, self.here)
            for s in sw.scripts_run(w, self.names)
            if s != name
        ]
        runner = any(sw.uses_runner(w) for w in line.segments)
        if own and not (persistent and runner):
            todos.append(Todo(OWN_REASON, ", ".join(dict.fromkeys(own))))
        return todos

    def _defines(
        self, command: str, name: str
    ) -> tuple[tuple[tuple[str, str, str | None], ...], list[Todo]]:
        define: list[tuple[str, str, str | None]] = []
        others: list[str] = []
        for var in sw.npm_variables(command):
            if var == "npm_lifecycle_event":
                define.append((var, name, None))
            elif var in LIVE_FIELDS:
                value = self.manifest.get(LIVE_FIELDS[var])
                define.append((var, value if isinstance(value, str) else "", LIVE_FIELDS[var]))
            else:
                others.append(f"${var}")
        todos = [Todo(NPM_VAR_REASON, ", ".join(others))] if others else []
        if any(live for _, _, live in define):
            todos.append(Todo(COPY_REASON))
        return tuple(define), todos


def _await_servers(tasks: list[TaskDraft]) -> list[TaskDraft]:
    """A server another task waits on gets a TODO: without `readyWhen` the waiter starts as
    soon as the server is spawned, before it listens."""
    awaited = {d for t in tasks if t.command is not None for d in t.depends_on}
    return [
        t._replace(todos=(*t.todos, Todo(READY_REASON)))
        if t.persistent and t.name in awaited
        else t
        for t in tasks
    ]


def draft_package(
    scripts: Mapping[str, str],
    host: ScriptHost,
    manifest: Mapping[str, object],
    *,
    members: tuple[str, ...] = (),
    here: str = ".",
) -> PackageDraft:
    """The tasks one package's scripts become, in script order."""
    return _Mapper(scripts, host, manifest, members, here).draft()


def script_table(manifest: Mapping[str, object]) -> dict[str, str]:
    """The package.json `scripts` whose values are strings (anything else is no script)."""
    raw = manifest.get("scripts")
    if not isinstance(raw, dict):
        return {}
    return {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}
