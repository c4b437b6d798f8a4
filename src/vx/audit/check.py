"""Compare a traced task's reads and writes with its declared inputs, outputs and edges."""

from __future__ import annotations

import os
import posixpath
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from vx.events import AuditFinding, AuditReport
from vx.util.globs import compile_globs
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping

    from vx.trace.parse import Trace
    from vx.util.globs import Matcher
    from vx.workspace.model import Project, TaskDef, Workspace

# Top-level entries no config declares: git's, vx's, and the installed dependencies of Yarn
# Plug'n'Play and of a uv workspace (keyed through the lockfile, as node_modules is).
_SKIPPED_DIRS = frozenset(
    {".git", ".vx", ".yarn", ".venv", ".pnp.cjs", ".pnp.loader.mjs", ".pnp.data.json"}
)
# Directories skipped wherever they are: installed packages, Python's bytecode.
_BYPRODUCTS = frozenset({"__pycache__"})
_MODULES = "node_modules"
_IN = "cache.inputs.files"
_WS_IN = "cache.inputs.workspaceFiles"
_OUT = "cache.outputs.files"
_WS_OUT = "cache.outputs.workspaceFiles"


class _Producer(Record):
    task_id: str
    task: str
    outputs: Matcher
    ws_outputs: Matcher


class WorkspaceView:
    """What every audit of one run shares: the projects by directory, what each task of each
    produces, the files git tracks (read once, when the first audit needs them)."""

    def __init__(
        self,
        ws: Workspace,
        tracked: Callable[[], Collection[str]],
        *,
        ignored: Callable[[Iterable[str]], frozenset[str]] = lambda _paths: frozenset(),
        keyed: frozenset[str] = frozenset(),
    ) -> None:
        """`tracked` lists what git tracks (called once, when needed); `ignored` says which of
        some paths git ignores (so no input can key them); `keyed` names the root files every
        key holds whatever the config says (the lockfiles, the package-manager files)."""
        self.ws = ws
        self.root = os.fspath(ws.root)
        self.real_root = os.path.realpath(self.root)
        skipped = set(_SKIPPED_DIRS)
        if ws.config.cache_dir and not posixpath.isabs(ws.config.cache_dir):
            skipped.add(posixpath.normpath(ws.config.cache_dir).split("/")[0])
        self.skipped = frozenset(skipped)
        self._tracked_source = tracked
        self.ignored = ignored
        self.keyed = keyed
        self._tracked: Collection[str] | None = None
        self.by_base: dict[str, Project] = {_rel_dir(self.root, p): p for p in ws.projects}
        self._owners: dict[str, tuple[str, Project] | None] = {}
        self.producers: dict[str, list[_Producer]] = {}
        for project in ws.projects:
            tasks = project.config.tasks if project.config else {}
            self.producers[project.name] = [
                _Producer(
                    f"{project.name}#{name}",
                    name,
                    compile_globs(task.cache_spec.outputs.files),
                    compile_globs(task.cache_spec.outputs.workspace_files),
                )
                for name, task in tasks.items()
                if task.cache_spec is not None
            ]
        self.root_deps = _root_dependencies(ws)

    @property
    def tracked(self) -> Collection[str]:
        if self._tracked is None:
            self._tracked = self._tracked_source()
        return self._tracked

    def relative(self, path: str) -> str | None:
        """`path` relative to the root, or None outside it (or in .git, the cache)."""
        for root in (self.root, self.real_root):
            if path.startswith(root + "/"):
                rel = path[len(root) + 1 :]
                return None if rel.split("/", 1)[0] in self.skipped else rel
        return None

    def owner(self, rel: str) -> tuple[str, Project] | None:
        """The deepest project holding `rel`: its directories looked up, nearest first (and
        remembered: a task's reads crowd into a few directories)."""
        directory = rel.rpartition("/")[0]
        if directory in self._owners:
            return self._owners[directory]
        found: tuple[str, Project] | None = None
        head = rel
        while head:
            head = head.rpartition("/")[0]
            project = self.by_base.get(head)
            if project is not None:
                found = (head, project)
                break
        self._owners[directory] = found
        return found


class TaskView(Record):
    """The task being audited: its id, project, definition and every task it depends on."""

    task_id: str
    project: Project
    task: TaskDef
    upstream: frozenset[str]
    package_deps: frozenset[str]


def audit_task(trace: Trace, ws: WorkspaceView, view: TaskView) -> AuditReport:
    """The findings for one task's trace; a task with no cache block gets the block it needs."""
    return _Audit(trace, ws, view).report()


class _Audit:
    def __init__(self, trace: Trace, ws: WorkspaceView, view: TaskView) -> None:
        self.trace, self.ws, self.view = trace, ws, view
        self.base = _rel_dir(ws.root, view.project)
        spec = view.task.cache_spec
        self.cached = spec is not None
        self.inputs = compile_globs(spec.inputs.files or ()) if spec else None
        self.default_inputs = spec is not None and spec.inputs.files is None
        self.ws_inputs = compile_globs(spec.inputs.workspace_files if spec else ())
        self.outputs = compile_globs(spec.outputs.files if spec else ())
        self.ws_outputs = compile_globs(spec.outputs.workspace_files if spec else ())
        self.findings: dict[tuple[str, str], AuditFinding] = {}
        self.uncacheable: str | None = None
        self.read_local: set[str] = set()
        self.read_ws: set[str] = set()
        self.wrote_local: set[str] = set()
        self.wrote_ws: set[str] = set()
        self.written = {p for p in (ws.relative(w) for w in trace.writes) if p is not None}
        self.read_rel: set[str] = set()
        self.unkeyed: list[str] = []

    def report(self) -> AuditReport:
        for path in sorted(self.trace.reads | self.trace.execs):
            rel = self.ws.relative(path)
            if rel is not None:
                self.read_rel.add(rel)
                self._read(rel)
        for path in sorted(self.trace.writes):
            rel = self.ws.relative(path)
            if rel is not None and os.path.lexists(path):
                self._write(rel)
        self._ignored_reads()
        return AuditReport(
            traced=True,
            findings=tuple(self.findings[k] for k in sorted(self.findings)),
            suggested=() if self.cached or self.uncacheable else self._suggested(),
            uncacheable=self.uncacheable,
        )

    def _add(self, kind: str, path: str, field: str | None, value: str | None, line: str) -> None:
        finding = AuditFinding(kind, path, field, value, line)
        self.findings.setdefault((kind, value or path), finding)

    def _local(self, rel: str) -> str | None:
        if not self.base:
            return rel
        return rel[len(self.base) + 1 :] if rel.startswith(self.base + "/") else None

    def _read(self, rel: str) -> None:
        parts = rel.split("/")
        if not _BYPRODUCTS.isdisjoint(parts):
            return
        if _MODULES in parts:
            if parts[0] == _MODULES:
                self._toolchain(rel)
            real = self.ws.relative(os.path.realpath(posixpath.join(self.ws.root, rel)))
            if real is None or _MODULES in real.split("/"):
                return
            rel = real
        if rel in self.written and rel not in self.ws.tracked:
            return  # the task reads back what it wrote
        if rel in self.ws.keyed or rel == self.view.project.manifest:
            return  # in every key of the task already
        local = self._local(rel)
        owner = self.ws.owner(rel)
        if local is not None and (owner is None or owner[1].name == self.view.project.name):
            self.read_local.add(local)
            if not self.cached or self.outputs.match(local):
                return
            if self.default_inputs or (self.inputs is not None and self.inputs.match(local)):
                self.unkeyed.append(rel)
            elif not self._is_dir(rel):
                self._add(
                    "undeclared-read",
                    rel,
                    _IN,
                    local,
                    f"reads {rel}, which no input covers — add {_q(local)} to {_IN}",
                )
            return
        if owner is not None and owner[0]:
            base, project = owner
            producer = self._producer(project, rel[len(base) + 1 :], rel)
            if producer is not None:
                if producer.task_id not in self.view.upstream:
                    self._edge(rel, project, producer)
                return
        self.read_ws.add(rel)
        if not self.cached:
            return
        if self.ws_inputs.match(rel):
            self.unkeyed.append(rel)
        elif not self._is_dir(rel):
            self._add(
                "undeclared-read",
                rel,
                _WS_IN,
                rel,
                f"reads {rel}, outside its package, which no input covers —"
                f" add {_q(rel)} to {_WS_IN}",
            )

    def _ignored_reads(self) -> None:
        """A covered read git ignores is in no key: the key is built from what git sees."""
        candidates = [
            rel for rel in self.unkeyed if rel not in self.ws.tracked and not self._is_dir(rel)
        ]
        for rel in sorted(self.ws.ignored(candidates) if candidates else ()):
            local = self._local(rel)
            if local is None:
                field, command = "cache.inputs.workspaceRuntime", f"cat {shlex.quote(rel)}"
            else:
                field, command = "cache.inputs.runtime", f"cat {shlex.quote(local)}"
            self._add(
                "ignored-read",
                rel,
                field,
                command,
                f"reads {rel}, which git ignores, so no input can key it —"
                f" add {_q(command)} to {field}",
            )

    def _is_dir(self, rel: str) -> bool:
        """A directory opened plainly (`find` reopens `.` to walk back): no file read."""
        return Path(self.ws.root, rel).is_dir()

    def _covers_input(self, local: str) -> bool:
        """Declared inputs cover it; the default (every file) leaves the outputs out."""
        if self.default_inputs:
            return not self.outputs.match(local)
        return self.inputs is not None and self.inputs.match(local)

    def _producer(self, project: Project, local: str, rel: str) -> _Producer | None:
        for producer in self.ws.producers.get(project.name, ()):
            if producer.outputs.match(local) or producer.ws_outputs.match(rel):
                return producer
        return None

    def _edge(self, rel: str, project: Project, producer: _Producer) -> None:
        own = self.view.task.name
        if project.name in self.view.package_deps and producer.task == own:
            edge = f"^{own}"
        else:
            edge = producer.task_id
        self._add(
            "missing-edge",
            rel,
            "dependsOn",
            edge,
            f"reads {rel}, an output of {producer.task_id}, with no dependsOn edge to it —"
            f" add {_q(edge)} to dependsOn",
        )

    def _toolchain(self, rel: str) -> None:
        name = _provider(self.ws.root, rel)
        if name is None or name not in self.ws.root_deps:
            return
        self._add(
            "toolchain",
            rel,
            None,
            name,
            f"runs {rel} from the root dependency {name}",
        )

    def _write(self, rel: str) -> None:
        parts = rel.split("/")
        if _MODULES in parts or not _BYPRODUCTS.isdisjoint(parts):
            return
        tracked = rel in self.ws.tracked
        local = self._local(rel)
        owner = self.ws.owner(rel)
        if local is not None and (owner is None or owner[1].name == self.view.project.name):
            if tracked or (rel in self.read_rel and self._covers_input(local)):
                self.uncacheable = f"it rewrites {rel}, which it reads or git tracks"
                self._add(
                    "modifies-input",
                    rel,
                    None,
                    None,
                    f"rewrites its own input {rel} — a task that changes its inputs is not"
                    " cacheable",
                )
                return
            self.wrote_local.add(local)
            if self.cached and not self.outputs.match(local):
                glob = _dir_glob(local)
                self._add(
                    "undeclared-write",
                    rel,
                    _OUT,
                    glob,
                    f"writes {rel}, outside its declared outputs — add {_q(glob)} to {_OUT}",
                )
            return
        if tracked:
            self.uncacheable = f"it writes {rel}, a file git tracks outside its package"
            self._add(
                "undeclared-write",
                rel,
                None,
                None,
                f"writes {rel}, a file git tracks outside its package — not cacheable",
            )
            return
        self.wrote_ws.add(rel)
        if self.cached and not self.ws_outputs.match(rel):
            glob = _dir_glob(rel)
            self._add(
                "undeclared-write",
                rel,
                _WS_OUT,
                glob,
                f"writes {rel}, outside its package and its outputs — add {_q(glob)} to {_WS_OUT}",
            )

    def _suggested(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        base = f"{self.base}/" if self.base else ""
        self.read_local = {p for p in self.read_local if not self._is_dir(base + p)}
        self.read_ws = {p for p in self.read_ws if not self._is_dir(p)}
        inputs = _globs(self.read_local - self.wrote_local)
        outputs = _globs(self.wrote_local)
        fields = (
            (_IN, inputs),
            (_WS_IN, tuple(sorted(self.read_ws))),
            (_OUT, outputs),
            (_WS_OUT, tuple(sorted(_dir_glob(p) for p in self.wrote_ws))),
        )
        return tuple((name, entries) for name, entries in fields if entries or name == _IN)


def _root_dependencies(ws: Workspace) -> Mapping[str, str]:
    """The root package.json's dependencies (every field), whether or not the root is a
    project of the run: its toolchain is what the packages' scripts call."""
    root = next((p for p in ws.projects if p.is_root), None)
    if root is not None:
        return root.dependencies
    from vx.errors import ConfigError
    from vx.workspace.manifests import read_package_json

    manifest = ws.root / "package.json"
    try:
        return (
            read_package_json(manifest, "package.json").dependencies if manifest.is_file() else {}
        )
    except ConfigError:
        return {}


def _globs(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({_dir_glob(p) for p in paths}))


def _dir_glob(path: str) -> str:
    """`dist/a/b.js` → `dist/**`; a file at the top stays itself."""
    head, sep, _ = path.partition("/")
    return f"{head}/**" if sep else path


def _provider(root: str, rel: str) -> str | None:
    """The package under the root's node_modules a path belongs to (`.bin/x` followed)."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[1] == ".bin":
        real = os.path.realpath(posixpath.join(root, rel))
        marker = f"/{_MODULES}/"
        if marker not in real:
            return None
        parts = [_MODULES, *real.rsplit(marker, 1)[1].split("/")]
    if len(parts) < 2:
        return None
    if parts[1].startswith("@") and len(parts) >= 3:
        return f"{parts[1]}/{parts[2]}"
    return parts[1]


def _rel_dir(root: str, project: Project) -> str:
    rel = os.path.relpath(project.dir, root)
    return "" if rel == "." else rel.replace(os.sep, "/")


def _q(text: str) -> str:
    return f'"{text}"'
