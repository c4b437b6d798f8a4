"""Finding the workspace root, its package manager and its member directories on disk."""

from __future__ import annotations

import os
from pathlib import Path

from vx.errors import ErrorCode, UserError
from vx.util.globs import compile_globs, expand_braces, has_magic, normalize, segment_regex
from vx.util.record import Record
from vx.workspace.manifests import (
    PACKAGE_JSON,
    PNPM_WORKSPACE,
    PYPROJECT,
    load_json_object,
    load_toml,
    package_json_workspaces,
    read_pnpm_packages,
    uv_workspace,
)
from vx.workspace.model import Manager

CONFIG_NAMES = tuple(
    f"vx.{kind}.{ext}" for kind in ("workspace", "config") for ext in ("json", "toml", "py")
)
_NODE_MODULES = "node_modules"


class Declaration(Record):
    """What one directory's files say about a workspace rooted there."""

    manager: Manager
    patterns: tuple[str, ...]
    notes: tuple[str, ...] = ()


class Discovery(Record):
    """A found root: its manager, member dirs (root-relative, POSIX, sorted) and notes."""

    root: Path
    manager: Manager
    members: tuple[str, ...]
    notes: tuple[str, ...] = ()


def member_manifest(manager: Manager) -> str:
    """The file a member directory must hold: pyproject.toml under uv, else package.json."""
    return PYPROJECT if manager is Manager.UV else PACKAGE_JSON


def _js_manager(directory: Path) -> Manager:
    """npm, Yarn and Bun share `workspaces`; the lockfile says which one the repo uses."""
    if (directory / "yarn.lock").is_file():
        return Manager.YARN
    if (directory / "bun.lock").is_file() or (directory / "bun.lockb").is_file():
        return Manager.BUN
    return Manager.NPM


def declaration(directory: Path) -> Declaration | None:
    """The workspace `directory` declares, if any: pnpm's yaml, then package.json, then uv."""
    package_json = directory / PACKAGE_JSON
    js_globs: tuple[str, ...] | None = None
    if package_json.is_file():
        raw = load_json_object(package_json, str(package_json))
        js_globs = package_json_workspaces(raw, str(package_json))
    pnpm = directory / PNPM_WORKSPACE
    globs = read_pnpm_packages(pnpm, str(pnpm)) if pnpm.is_file() else None
    if globs is not None:
        notes: tuple[str, ...] = ()
        listed = {normalize(g) for g in globs}
        unread = [g for g in js_globs or () if normalize(g) not in listed]
        if unread:
            note = (
                f'{PACKAGE_JSON} "workspaces" lists {", ".join(unread)}, which {PNPM_WORKSPACE} '
                f"does not; pnpm reads only {PNPM_WORKSPACE}, so vx does too"
            )
            notes = (note,)
        return Declaration(Manager.PNPM, globs, notes)
    if js_globs is not None:
        return Declaration(_js_manager(directory), js_globs)
    pyproject = directory / PYPROJECT
    if pyproject.is_file():
        uv_globs = uv_workspace(load_toml(pyproject, str(pyproject)), str(pyproject))
        if uv_globs is not None:
            return Declaration(Manager.UV, uv_globs)
    return None


def missing_manifest(manager: Manager, glob: str, rel: str) -> UserError:
    """The refusal for a member glob matching a directory that holds no manifest, as uv's."""
    return UserError(ErrorCode.CONFIG, _manifestless(manager, glob, rel, " —"))


def manifestless_note(manager: Manager, glob: str, rel: str) -> str:
    """What npm, pnpm, Yarn and Bun do with such a directory (pass it by), said as a note."""
    return _manifestless(manager, glob, rel, f"; skipped, as {manager.value} skips it —")


def _manifestless(manager: Manager, glob: str, rel: str, then: str) -> str:
    manifest = member_manifest(manager)
    if manager is Manager.UV:
        where, exclude = f"{PYPROJECT} [tool.uv.workspace] members", f'exclude = ["{rel}"]'
    elif manager is Manager.PNPM:
        where, exclude = f"{PNPM_WORKSPACE} packages", f"'!{rel}'"
    else:
        where, exclude = f'{PACKAGE_JSON} "workspaces"', f'"!{rel}"'
    return (
        f'{where}: the glob "{glob}" matches {rel}, which has no {manifest}{then} add one, '
        f"or leave the directory out ({exclude})"
    )


def _is_package(directory: Path) -> bool:
    """A directory a single-package root may be: it has a manifest or a vx config."""
    return any((directory / name).is_file() for name in (PACKAGE_JSON, PYPROJECT, *CONFIG_NAMES))


def _subdirs(root: Path, rel: str) -> list[tuple[str, str, bool]]:
    """(name, rel path, is a link) of each child directory, skipping dot-dirs and node_modules.

    Those are skipped as the package managers' own globbing skips them; links to directories
    count, which is how a member outside the tree gets in.
    """
    try:
        with os.scandir(root / rel) as entries:
            listed = list(entries)
    except OSError:
        return []
    out: list[tuple[str, str, bool]] = []
    for entry in listed:
        if entry.name.startswith(".") or entry.name == _NODE_MODULES:
            continue
        try:
            if entry.is_dir():
                child = f"{rel}/{entry.name}" if rel else entry.name
                out.append((entry.name, child, entry.is_symlink()))
        except OSError:
            continue
    return out


def _descendants(root: Path, rel: str) -> list[str]:
    """`rel` and every directory below it; links are listed but not entered (no loops)."""
    found = [rel]
    stack = [rel]
    while stack:
        for _, child, is_link in _subdirs(root, stack.pop()):
            found.append(child)
            if not is_link:
                stack.append(child)
    return found


def _expand(root: Path, pattern: str) -> list[str]:
    """Directories one include pattern names, walked a segment at a time from its literal prefix."""
    current = [""]
    for segment in normalize(pattern).split("/"):
        if segment in {".", ""}:
            continue
        if segment == "**":
            current = [d for base in current for d in _descendants(root, base)]
        elif not has_magic(segment):
            current = [f"{base}/{segment}" if base else segment for base in current]
        else:
            regex = segment_regex(segment)
            current = [
                child
                for base in current
                for name, child, _ in _subdirs(root, base)
                if regex.match(name)
            ]
    return current


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def list_members(root: Path, patterns: tuple[str, ...], manifest: str) -> tuple[str, ...]:
    """Member directories the patterns list, root-relative and POSIX, sorted."""
    return scan_members(root, patterns, manifest)[0]


def scan_members(
    root: Path, patterns: tuple[str, ...], manifest: str
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The member directories the patterns list, and (glob, dir) for each with no manifest.

    Package managers apply every exclusion after every inclusion (npm, pnpm, uv alike), so the
    `!` entries move to the end before the ordered match. A member needs `manifest` in it; the
    root is never its own member; a directory reached twice (a link and its target both
    matched) is listed once, by the first path found. A matched directory without `manifest`
    comes back beside the glob that matched it, unless it holds nothing a package could be
    (no file, or only files git ignores): uv passes those by too, as a checkout leaves them.
    Under npm, pnpm, Yarn and Bun a `**` glob takes only directories with a manifest.
    """
    negated = [p for p in patterns if p.startswith("!")]
    matcher = compile_globs([*(p for p in patterns if not p.startswith("!")), *negated])
    seen: set[tuple[int, int]] = set()
    members: set[str] = set()
    missing: dict[str, str] = {}
    for include in matcher.includes:
        for alternative in expand_braces(include):
            # npm and pnpm glob for the manifest itself, so a `**` passes manifest-less
            # directories by; uv globs for directories and refuses them all.
            checked = manifest == PYPROJECT or "**" not in normalize(alternative).split("/")
            for rel in sorted(_expand(root, alternative)):
                if not rel or rel in members or _NODE_MODULES in rel.split("/"):
                    continue
                directory = root / rel
                if not (directory / manifest).is_file():
                    if checked and rel not in missing and matcher.match(rel) and directory.is_dir():
                        missing[rel] = include
                    continue
                identity = _identity(directory)
                if identity is None or identity in seen or not matcher.match(rel):
                    continue
                seen.add(identity)
                members.add(rel)
    kept = [(glob, rel) for rel, glob in sorted(missing.items()) if rel not in members]
    if kept:
        from vx.workspace.leftovers import holds_content  # only a manifest-less match pays

        kept = [(glob, rel) for glob, rel in kept if holds_content(root, rel)]
    return tuple(sorted(members)), tuple(kept)


def _holds(root: Path, members: tuple[str, ...], directory: Path) -> bool:
    """Whether `directory` (at or below root) is one of the members, as listed or resolved."""
    if os.path.relpath(directory, root).replace(os.sep, "/") in members:
        return True
    identity = _identity(directory)
    return any(_identity(root / m) == identity for m in members)


def find_root(cwd: Path) -> Discovery:
    """The workspace `cwd` is in: the nearest root whose list holds cwd's own package.

    Walking up, a member's package.json is passed by until a workspace declares it; a
    package no workspace above lists is a single-package root, as npm decides its prefix.
    """
    start = Path(os.path.normpath(cwd.absolute()))
    nearest: Path | None = None
    for directory in (start, *start.parents):
        found = declaration(directory)
        if found is not None:
            manifest = member_manifest(found.manager)
            members, missing = scan_members(directory, found.patterns, manifest)
            if nearest is None or _holds(directory, members, nearest):
                if missing and found.manager is Manager.UV:  # uv refuses; the JS managers skip
                    raise missing_manifest(found.manager, *missing[0])
                skipped = tuple(manifestless_note(found.manager, *m) for m in missing)
                return Discovery(directory, found.manager, members, (*found.notes, *skipped))
        if nearest is None and _is_package(directory):
            nearest = directory
    if nearest is None:
        raise UserError(
            ErrorCode.NO_WORKSPACE,
            f"no workspace found at or above {start} — run vx inside a repository with a "
            "package.json, pnpm-workspace.yaml or pyproject.toml",
        )
    return Discovery(nearest, Manager.SINGLE, ())
