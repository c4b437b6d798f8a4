"""`vx-lock.json`: every project's evaluated config frozen with its file's hash; writing it,
auditing it against a fresh evaluation, and serving it to `vx run --frozen`.

A config is a program (a `.py` config reads the environment, imports helpers), so a byte
hash alone cannot say it still evaluates to what was locked: the audit evaluates again and
compares values. `--frozen` does no such check; it trusts the lock, as CI runs it after
`vx lock --check`.
"""

from __future__ import annotations

import hashlib
import json
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.errors import ConfigError, ErrorCode, UserError
from vx.util.record import Record
from vx.util.secrets import maskable, secret_name
from vx.workspace.config_fields import Site
from vx.workspace.config_load import PROJECT_STEM, find_config, load_project_config
from vx.workspace.config_schema import parse_project_config

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

    from vx.workspace.model import ProjectConfig, Workspace

LOCK_FILE = "vx-lock.json"
LOCK_VERSION = 1

_NONE: Mapping[str, object] = MappingProxyType({})


class LockedProject(Record):
    """One project's frozen config: where its file is, the file's hash, what it evaluated to."""

    name: str
    dir: str  # root-relative POSIX, `.` for the root
    config: str  # root-relative path of its vx.config.*
    hash: str
    imports: tuple[str, ...]
    resolved: object


class Evaluated(Record):
    """The workspace loaded live, each configured project's lock entry, and the names of the
    projects with no config (their tasks are never frozen)."""

    workspace: Workspace
    entries: tuple[LockedProject, ...]
    configless: tuple[str, ...]


class Problem(Record):
    """One finding of the audit; `project` is None for the lock as a whole."""

    project: str | None
    kind: str  # missing-lock, unreadable-lock, not-locked, changed-file, drift, stale
    message: str


class Audit(Record):
    """`vx lock --check`'s answer."""

    audited: tuple[str, ...]
    not_audited: tuple[str, ...]
    problems: tuple[Problem, ...]

    @property
    def up_to_date(self) -> bool:
        """No problem found."""
        return not self.problems


def file_hash(path: Path) -> str:
    """`sha256:<hex>` of a config file's bytes."""
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _plain(value: object) -> object:
    """The value as JSON holds it (tuples → lists), so a locked and a fresh one compare."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise UserError(
            ErrorCode.CONFIG, f"a config value cannot be locked as JSON: {exc}"
        ) from None


def evaluate(cwd: Path) -> Evaluated:
    """Load the workspace live, keeping what each config file evaluated to."""
    from vx.loader.assemble import load_workspace

    raw: dict[str, object] = {}

    def keep(
        directory: Path, root: Path, /, *, shared: Mapping[str, object] = _NONE
    ) -> ProjectConfig | None:
        seen: list[tuple[str, object]] = []
        config = load_project_config(directory, root=root, raw_values=seen, shared=shared)
        raw.update(seen)
        return config

    ws = load_workspace(cwd, configs=keep)
    entries = []
    for project in ws.projects:
        if project.config is None or not _own_file(project.config, ws):
            continue
        shown = project.config.path
        entries.append(
            LockedProject(
                name=project.name,
                dir=project.rel_dir,
                config=shown,
                hash=file_hash(ws.root / shown),
                imports=project.config.imports,
                resolved=_plain(raw[shown]),
            )
        )
    configless = tuple(
        p.name for p in ws.projects if p.config is None or not _own_file(p.config, ws)
    )
    return Evaluated(ws, tuple(entries), configless)


def _own_file(config: ProjectConfig, ws: Workspace) -> bool:
    """Whether the config is a `vx.config.*` of the package's own, the file a lock freezes.

    Tasks read live from turbo.json / nx.json are read live under --frozen too, and so are the
    workspace-wide tasks a package with no config takes from `vx.workspace.*`.
    """
    return not config.live and config.path != ws.config.path


def _strings(value: object, pointer: str) -> Iterator[tuple[str, str]]:
    """Every string in a config value with its dotted field path."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{pointer}.{key}" if pointer else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{pointer}[{i}]")


def _declared_secrets(resolved: object) -> tuple[str, ...]:
    """The `exec.env.secret` names (or globs) any task of a config lists."""
    names: list[str] = []
    tasks = resolved.get("tasks") if isinstance(resolved, dict) else None
    for task in tasks.values() if isinstance(tasks, dict) else ():
        spec = task.get("exec") if isinstance(task, dict) else None
        env = spec.get("env") if isinstance(spec, dict) else None
        secret = env.get("secret") if isinstance(env, dict) else None
        names.extend(s for s in secret or () if isinstance(s, str))
    return tuple(names)


def secret_places(entries: tuple[LockedProject, ...], env: Mapping[str, str]) -> list[str]:
    """`project: field holds $NAME` for each place a config evaluated to a secret's value."""
    places: list[str] = []
    for entry in entries:
        declared = _declared_secrets(entry.resolved)
        secrets = {
            name: value
            for name, value in env.items()
            if maskable(value)
            and (secret_name(name) or any(fnmatchcase(name, pattern) for pattern in declared))
        }
        for pointer, text in _strings(entry.resolved, ""):
            for name, value in sorted(secrets.items()):
                if value in text:
                    places.append(f"{entry.name}: {pointer} holds ${name}")
    return places


def lock_document(entries: tuple[LockedProject, ...]) -> dict[str, object]:
    """The lock file's JSON value: projects by name, sorted, each with its frozen config."""
    return {
        "version": LOCK_VERSION,
        "projects": {
            e.name: {
                "dir": e.dir,
                "config": e.config,
                "hash": e.hash,
                "imports": list(e.imports),
                "resolved": e.resolved,
            }
            for e in sorted(entries, key=lambda e: e.name)
        },
    }


def write_lock(cwd: Path, env: Mapping[str, str]) -> Evaluated:
    """Evaluate every config and write vx-lock.json; refuse, writing nothing, when the lock
    would hold a secret's value (it is committed)."""
    from vx.util.atomic import write_atomic

    found = evaluate(cwd)
    places = secret_places(found.entries, env)
    if places:
        raise UserError(
            ErrorCode.REFUSED,
            f"vx lock: the lock is committed, and configs evaluated to secret values:"
            f" {'; '.join(places)} — let the shell expand it ($NAME in the command, NAME"
            f" under exec.env.passThrough); nothing written",
        )
    text = json.dumps(lock_document(found.entries), indent=2, ensure_ascii=False) + "\n"
    write_atomic(found.workspace.root / LOCK_FILE, text)
    return found


def read_lock(root: Path) -> dict[str, LockedProject] | None:
    """The lock's projects by name; None when there is no lock. A malformed one is refused."""
    path = root / LOCK_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(LOCK_FILE, f"cannot be read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ConfigError(LOCK_FILE, f"is not valid JSON ({exc}) — run vx lock") from None
    projects = doc.get("projects") if isinstance(doc, dict) else None
    if (
        not isinstance(doc, dict)
        or doc.get("version") != LOCK_VERSION
        or not isinstance(projects, dict)
    ):
        raise ConfigError(LOCK_FILE, f"is not a version {LOCK_VERSION} lock — run vx lock")
    out: dict[str, LockedProject] = {}
    for name, item in projects.items():
        fields = ("dir", "config", "hash")
        if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in fields):
            raise ConfigError(LOCK_FILE, "a project entry is malformed — run vx lock", name)
        imports = item.get("imports", [])
        out[name] = LockedProject(
            name,
            item["dir"],
            item["config"],
            item["hash"],
            tuple(i for i in imports if isinstance(i, str)) if isinstance(imports, list) else (),
            item.get("resolved"),
        )
    return out


def _first_difference(old: object, new: object, pointer: str = "") -> str:
    """The dotted path of the first field where two config values differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            if old.get(key) != new.get(key):
                return _first_difference(
                    old.get(key), new.get(key), f"{pointer}.{key}" if pointer else key
                )
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{pointer}[{i}]")
    return pointer or "(the whole config)"


def check_lock(cwd: Path) -> Audit:
    """Compare the lock with the repo: each file's hash, and a fresh evaluation's value."""
    found = evaluate(cwd)
    root = found.workspace.root
    audited = tuple(e.name for e in found.entries)
    try:
        locked = read_lock(root)
    except ConfigError as exc:
        return Audit(audited, found.configless, (Problem(None, "unreadable-lock", exc.message),))
    if locked is None:
        missing = Problem(None, "missing-lock", f"no {LOCK_FILE} at {root} — run vx lock")
        return Audit(audited, found.configless, (missing,))
    problems: list[Problem] = []
    for entry in found.entries:
        old = locked.get(entry.name)
        if old is None:
            problems.append(
                Problem(
                    entry.name, "not-locked", f"{entry.name}: {entry.config} is not in the lock"
                )
            )
            continue
        if old.config != entry.config or old.hash != entry.hash:
            problems.append(
                Problem(
                    entry.name,
                    "changed-file",
                    f"{entry.name}: {entry.config} changed since the lock",
                )
            )
        if old.resolved != entry.resolved:
            where = _first_difference(old.resolved, entry.resolved)
            problems.append(
                Problem(
                    entry.name,
                    "drift",
                    f"{entry.name}: {entry.config} now evaluates differently at {where}",
                )
            )
    live = {e.name for e in found.entries}
    problems.extend(
        Problem(name, "stale", f"{name}: locked, but the workspace has no such project config")
        for name in sorted(set(locked) - live)
    )
    return Audit(audited, found.configless, tuple(problems))


class FrozenConfigs:
    """The config source `vx run --frozen` loads with: each project's locked value, never an
    evaluation. A config file the lock lacks, a locked file that is gone, or no lock at all is
    a refusal; a directory with no config and no entry has no config, as in a live run."""

    __slots__ = ("_by_dir",)

    def __init__(self) -> None:
        self._by_dir: dict[str, LockedProject] | None = None

    def _lock(self, root: Path) -> dict[str, LockedProject]:
        if self._by_dir is None:
            locked = read_lock(root)
            if locked is None:
                raise UserError(
                    ErrorCode.CONFIG,
                    f"vx run --frozen: no {LOCK_FILE} at {root} — run vx lock and commit it",
                )
            for entry in locked.values():
                if not (root / entry.config).is_file():
                    raise ConfigError(
                        LOCK_FILE,
                        f"locks {entry.name}'s {entry.config}, which is gone — run vx lock",
                    )
            self._by_dir = {e.dir: e for e in locked.values()}
        return self._by_dir

    def __call__(
        self, directory: Path, root: Path, /, *, shared: Mapping[str, object] = _NONE
    ) -> ProjectConfig | None:
        """`directory`'s locked config (validated as its file would be, merged over the
        workspace-wide tasks in `shared`), or None."""
        from vx.workspace.config_load import display_path

        by_dir = self._lock(root)
        rel = display_path(directory, root)
        path = find_config(directory, PROJECT_STEM, root=root)
        entry = by_dir.get(rel)
        if path is None:
            return None
        shown = display_path(path, root)
        if entry is None or entry.config != shown:
            raise ConfigError(shown, f"is not in {LOCK_FILE} — run vx lock and commit it")
        # The value is the lock's, not the file's: a refusal points into the lock entry.
        site = Site(LOCK_FILE).key("projects").key(entry.name).key("resolved")
        try:
            config = parse_project_config(entry.resolved, shown, top=site, shared=shared)
        except ConfigError as err:
            raise ConfigError(err.path, f"{err.detail} — run vx lock", err.pointer) from None
        return config._replace(imports=entry.imports) if entry.imports else config
