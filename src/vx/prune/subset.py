"""`vx prune`: a copy of the workspace cut down to some projects, for a Docker build.

The named projects and the workspace packages they depend on (transitively) are copied with
their files (tracked, and untracked ones git would add), with the root's manifests and vx
configs; the root manifest's workspace list is rewritten to the subset and each lockfile is
pruned to what the subset installs, so `npm ci` / `pnpm install --frozen-lockfile` accept it;
a uv workspace's pyproject.toml and uv.lock are cut in prune/uv.py, for `uv sync --locked`.
With `docker`, `json/` holds only what the install reads (manifests and lockfiles) and
`full/` the whole subset, so a Dockerfile can install in a layer that source edits keep.

The root's `turbo.json` / `nx.json` come too (a repo adopted with `vx init --keep` reads them on
every run), and so does every root file a kept task reads through `workspaceFiles` (turbo's
`globalDependencies`). An untracked file git does not ignore (a `.env.production`, an `.npmrc`
holding a token) is left out unless asked for, and named, so nothing private reaches a Docker
context unseen.

The output is built in a temp directory beside `out_dir` and moved into place whole; an
existing `out_dir` is replaced only when an earlier prune made it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vx import git
from vx.errors import ErrorCode, UserError
from vx.graph.algo import closure
from vx.lockfiles.model import LockfileError
from vx.lockfiles.prune import PRUNABLE, prune_lockfile
from vx.lockfiles.read import LOCKFILES
from vx.util.fuzzy import did_you_mean
from vx.util.globs import compile_globs
from vx.util.record import Record
from vx.workspace.manifests import PACKAGE_JSON, PNPM_WORKSPACE, PYPROJECT
from vx.workspace.model import Manager

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from vx.workspace.model import Project, Workspace

MARKER = ".vx-prune"
# Root files a pruned workspace needs besides its lockfiles: manifests, manager settings,
# and the vx workspace config (a root project's own config comes with the root project).
ROOT_FILES = (
    PACKAGE_JSON,
    PNPM_WORKSPACE,
    PYPROJECT,
    ".npmrc",
    ".yarnrc.yml",
    "bunfig.toml",
    "uv.toml",
    ".python-version",
    ".gitignore",
    "vx.workspace.json",
    "vx.workspace.toml",
    "vx.workspace.py",
    "vx.config.json",
    "vx.config.toml",
    "vx.config.py",
    "turbo.json",
    "turbo.jsonc",
    "nx.json",
)
INSTALL_FILES = frozenset(
    {PACKAGE_JSON, PNPM_WORKSPACE, PYPROJECT, ".npmrc", ".yarnrc.yml", "uv.toml", ".python-version"}
)
# Root directories an install reads: patches a lockfile names, Yarn's own release and plugins.
INSTALL_DIRS = ("patches/", ".yarn/patches/", ".yarn/releases/", ".yarn/plugins/")
_DEV = "devDependencies"
_PROD = ("dependencies", "optionalDependencies", "peerDependencies")


class PruneResult(Record):
    """What a prune wrote: where, which projects, which lockfiles, how many files, and what
    the user should know about it (a uv.lock bound that moved)."""

    out_dir: Path
    projects: tuple[str, ...]
    lockfiles: tuple[str, ...]
    files: int
    notes: tuple[str, ...] = ()
    untracked: tuple[str, ...] = ()  # untracked files left out (or, when asked for, copied)


def prune(
    ws: Workspace,
    names: Sequence[str],
    *,
    out_dir: Path,
    docker: bool,
    production: bool,
    untracked: bool = False,
    env: Mapping[str, str] | None = None,
) -> PruneResult:
    """Write the pruned workspace for `names` into `out_dir`; `untracked` copies the untracked
    files git does not ignore too."""
    if ws.manager is Manager.SINGLE:
        raise UserError(
            ErrorCode.USAGE,
            f"vx prune: {ws.root} is a single package, not a workspace; there is nothing to cut",
        )
    chosen = _resolve(ws, names)
    if ws.manager is Manager.UV:
        from vx.prune.uv import plan

        found = plan(ws, chosen, production=production)
        kept, written, lockfiles = found.kept, found.rendered, list(found.lockfiles)
        notes, sources = found.notes, found.sources
        _check_out_dir(ws, out_dir)
        projects = [p for p in ws.projects if p.name in kept and not p.is_root]
    else:
        manifests = _manifests(ws)
        kept, strike = _subset(ws, chosen, manifests, production=production)
        lockfiles = [n for n in LOCKFILES if (ws.root / n).is_file()]
        refused = [n for n in lockfiles if n not in PRUNABLE]
        if refused:
            raise UserError(
                ErrorCode.USAGE,
                f"vx prune: cannot prune {', '.join(refused)} in a {ws.manager} workspace —"
                " vx prunes package-lock.json, pnpm-lock.yaml, yarn.lock and bun.lock there",
            )
        _check_out_dir(ws, out_dir)
        projects = [p for p in ws.projects if p.name in kept and not p.is_root]
        dirs = sorted(p.rel_dir for p in projects)
        written = _render(ws, projects, dirs, strike, manifests, lockfiles)
        notes, sources = (), ()
    files, unseen = _project_files(ws, projects, env, sources)
    if not untracked:
        left = set(unseen)
        files = [f for f in files if f not in left]
    count = 0
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        layers = [("json", True), ("full", False)] if docker else [("", False)]
        for layer, install_only in layers:
            base = staging / layer if layer else staging
            count += _write_layer(ws, base, written, files, install_only=install_only)
        (staging / MARKER).write_text("written by vx prune; the next prune replaces it\n")
        _swap(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return PruneResult(out_dir, tuple(sorted(kept)), tuple(lockfiles), count, notes, tuple(unseen))


def _resolve(ws: Workspace, names: Sequence[str]) -> list[Project]:
    if not names:
        raise UserError(ErrorCode.USAGE, "vx prune: name the projects to keep, e.g. vx prune app")
    out: list[Project] = []
    for name in names:
        project = ws.project(name)
        if project is None or project.is_root:
            near = did_you_mean(name, [p.name for p in ws.projects if not p.is_root])
            hint = f" — did you mean {near}?" if near else " — vx show lists the projects"
            raise UserError(ErrorCode.UNKNOWN_PROJECT, f"vx prune: no project {name}{hint}")
        out.append(project)
    return out


def _manifests(ws: Workspace) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for project in ws.projects:
        with contextlib.suppress(OSError, ValueError):
            doc = json.loads((ws.root / project.rel_dir / PACKAGE_JSON).read_text("utf-8-sig"))
            if isinstance(doc, dict):
                out[project.name] = doc
    return out


def _subset(
    ws: Workspace,
    chosen: list[Project],
    manifests: Mapping[str, dict[str, Any]],
    *,
    production: bool,
) -> tuple[set[str], dict[str, set[str]]]:
    """The kept project names, and per kept member directory the dev-only workspace
    dependencies `production` strikes."""
    edges = {
        name: [d for d in deps if not (production and _dev_only(manifests.get(name, {}), d))]
        for name, deps in ws.package_deps.items()
    }
    kept = set(closure(edges, (p.name for p in chosen)))
    strike: dict[str, set[str]] = {}
    if production:
        for project in ws.projects:
            if project.name not in kept:
                continue
            gone = {d for d in ws.package_deps.get(project.name, ()) if d not in kept}
            if gone:
                strike[project.rel_dir] = gone
    return kept, strike


def _dev_only(manifest: Mapping[str, Any], dep: str) -> bool:
    dev = manifest.get(_DEV)
    if not isinstance(dev, dict) or dep not in dev:
        return False
    return not any(isinstance(manifest.get(f), dict) and dep in manifest[f] for f in _PROD)


def _check_out_dir(ws: Workspace, out_dir: Path) -> None:
    if out_dir == ws.root or ws.root.is_relative_to(out_dir):
        raise UserError(ErrorCode.USAGE, f"--out-dir {out_dir}: holds the workspace itself")
    ours = (out_dir / MARKER).exists()
    if out_dir.exists() and not ours and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise UserError(
            ErrorCode.USAGE,
            f"--out-dir {out_dir}: exists and no vx prune wrote it — remove it or name"
            " another directory",
        )


def _render(
    ws: Workspace,
    projects: list[Project],
    dirs: list[str],
    strike: Mapping[str, set[str]],
    manifests: Mapping[str, dict[str, Any]],
    lockfiles: list[str],
) -> dict[str, bytes]:
    """Root-relative path → new bytes, for the files the prune rewrites."""
    out: dict[str, bytes] = {}
    root_manifest = ws.root / PACKAGE_JSON
    if root_manifest.is_file():
        doc = json.loads(root_manifest.read_text("utf-8-sig"))
        if isinstance(doc, dict):
            if isinstance(doc.get("workspaces"), dict):
                doc["workspaces"] = {**doc["workspaces"], "packages": dirs}
            elif "workspaces" in doc:
                doc["workspaces"] = dirs
            out[PACKAGE_JSON] = _json(doc)
    pnpm_list = ws.root / PNPM_WORKSPACE
    if pnpm_list.is_file():
        out[PNPM_WORKSPACE] = _pnpm_workspace(pnpm_list.read_text("utf-8"), dirs).encode()
    documents: dict[str, dict[str, Any]] = {}
    for project in projects:
        doc = dict(manifests.get(project.name, {}))
        names = strike.get(project.rel_dir, set())
        for field in (_DEV, *_PROD):
            if names and isinstance(doc.get(field), dict):
                doc[field] = {k: v for k, v in doc[field].items() if k not in names}
        documents[project.rel_dir] = doc
        if names:
            out[f"{project.rel_dir}/{PACKAGE_JSON}"] = _json(doc)
    root_project = ws.root_project
    root_doc = manifests.get(root_project.name) if root_project else None
    with contextlib.suppress(OSError, ValueError):
        root_doc = root_doc or json.loads(root_manifest.read_text("utf-8-sig"))
    if isinstance(root_doc, dict):
        documents["."] = root_doc
    keep = {*dirs, "."}
    for name in lockfiles:
        try:
            text = (ws.root / name).read_text("utf-8")
            out[name] = prune_lockfile(name, text, keep, strike, dirs, documents).encode()
        except UnicodeDecodeError:
            raise UserError(ErrorCode.CONFIG, f"vx prune: {name}: not UTF-8 text") from None
        except LockfileError as exc:
            raise UserError(ErrorCode.CONFIG, f"vx prune: {exc}") from None
    return out


def _json(doc: object) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def _pnpm_workspace(text: str, dirs: list[str]) -> str:
    """pnpm-workspace.yaml with its `packages:` list replaced, every other line as written."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines():
        if line.startswith("packages:"):
            out.append("packages:")
            out.extend(f"  - '{d}'" for d in dirs)
            skipping = True
            continue
        if skipping and (not line.strip() or line.startswith((" ", "-"))):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out) + "\n"


def _project_files(
    ws: Workspace,
    projects: list[Project],
    env: Mapping[str, str] | None,
    sources: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """Every file of the kept projects, of the local package directories `sources` the lock
    installs, the root's files and those a kept task reads through `workspaceFiles`, as git
    lists them; and which of them are untracked."""
    tracked = git.ls_files_stage(ws.root, env=env)
    state = git.status(ws.root, env=env)
    every = sorted((set(tracked) - state.deleted) | state.untracked)
    others = [p.rel_dir for p in ws.projects if not p.is_root and p not in projects]
    wanted = [*(p.rel_dir for p in projects), *sources]
    read = compile_globs(
        g
        for p in projects
        for t in p.tasks.values()
        if t.cache_spec is not None
        for g in t.cache_spec.inputs.workspace_files
    )
    out: list[str] = [
        f for f in every if f in ROOT_FILES or f.startswith(INSTALL_DIRS) or read.match(f)
    ]
    for path in every:
        owner = _deepest(path, [*wanted, *others])
        if owner is not None and owner in wanted:
            out.append(path)
    out = list(dict.fromkeys(out))
    return out, [f for f in out if f in state.untracked]


def _deepest(path: str, dirs: Iterable[str]) -> str | None:
    best: str | None = None
    for d in dirs:
        if path.startswith(d + "/") and (best is None or len(d) > len(best)):
            best = d
    return best


def _write_layer(
    ws: Workspace,
    base: Path,
    rendered: Mapping[str, bytes],
    files: list[str],
    *,
    install_only: bool,
) -> int:
    count = 0
    paths = dict.fromkeys([*files, *rendered])
    for rel in paths:
        needed = rel.rpartition("/")[2] in INSTALL_FILES or rel.startswith(INSTALL_DIRS)
        if install_only and rel not in rendered and not needed:
            continue
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel in rendered:
            target.write_bytes(rendered[rel])
        else:
            source = ws.root / rel
            if source.is_symlink():
                target.symlink_to(source.readlink())
            elif source.is_file():
                shutil.copy2(source, target)
            else:
                continue
        count += 1
    return count


def _swap(staging: Path, out_dir: Path) -> None:
    """Put `staging` where `out_dir` is, the earlier prune (if any) moved aside first."""
    if out_dir.exists():
        aside = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        out_dir.rename(aside)
        staging.rename(out_dir)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        staging.rename(out_dir)
