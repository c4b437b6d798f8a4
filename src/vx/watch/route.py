"""Which directories the loop arms, in which role, and how an event heard there is labelled.

A role says what a watcher is for: `project` (one project's tree), `members` (every member
under a package glob's directory, sharing one watcher), `root` (the root's own files),
`base` (a directory a member glob leads through: members coming and going), `pending` (a
member dir whose manifest is not there yet), `deep` (a `**` member glob's base, with its
tree: only member manifests count), `imports` (a directory holding files configs import)
and `wide` (the whole tree, when a task reads `workspaceFiles`). Routing runs on watcher
threads: mostly on the path's text, with a stat where a label depends on what is there (a
file or a directory, whether it exists), never a read of a file's bytes.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx.watch.targets import ROOT_FILES, SHAPE_NAMES

if TYPE_CHECKING:
    from vx.watch.targets import WatchSet

# Projects watched one by one; past this, the members under a package glob's directory share
# one recursive watcher: each OS watcher is an inotify instance, and a user may have 128.
OWN_WATCHERS = 8


def wanted_slots(wanted: WatchSet) -> dict[tuple[str, str], bool]:
    """(role, directory) → recursive, for every watcher the set needs."""
    want: dict[tuple[str, str], bool] = {}
    shared: set[str] = set()
    if wanted.wide:
        want[("wide", wanted.root)] = True
    else:
        grouped = len(wanted.watched) > OWN_WATCHERS
        for project in wanted.watched:
            base = os.path.dirname(project.dir)
            if grouped and base in wanted.bases:
                shared.add(base)
                want[("members", base)] = True
            else:
                want[("project", project.dir)] = True
        want[("root", wanted.root)] = False
    members = wanted.members
    if members is not None:
        found = members.watch(p.dir for p in wanted.projects)
        for step in found.steps:
            if step != wanted.root and step not in shared:
                want[("base", step)] = False
        if not wanted.wide:
            for entry in found.waiting:  # a member dir not (yet) a project: its manifest
                want.setdefault(("pending", entry), False)
            for base in found.deep:  # a `**` glob: a member may appear at any depth
                want[("deep", base)] = True
    for path in wanted.imports:
        directory = _nearest_dir(os.path.dirname(path))
        if wanted.wide or directory == wanted.root:
            continue  # heard already: one watch per directory, or watchdog shares it
        want.setdefault(("imports", directory), False)
    return want


def route_event(current: WatchSet, role: str, directory: str, path: str) -> tuple[str, bool] | None:
    """The label an event is queued under and whether it can change the set; None drops it."""
    name = os.path.basename(path)
    rel = current.rules.relative(path)
    if rel is None:
        return None
    shape = name in SHAPE_NAMES or path in current.imports
    if path == directory or path in current.bases:  # a watched dir itself came or went
        return f"// {rel}", True
    if path in current.imports:
        return f"// {rel}", True
    if role == "root":
        if os.path.dirname(path) != directory:
            return None
        if name in ROOT_FILES:
            return f"// {rel}", shape
        if _leads_to_members(current, rel, path):
            return f"// {rel}", True
        return None
    if role == "imports":
        return None  # only the imported files themselves, above
    if role == "base":
        if os.path.dirname(path) != directory:
            return None
        if name != ".gitignore" and (name.startswith(".") or os.path.isfile(path)):
            return None  # a file beside the members is none of them
        return f"// {rel}", True
    if role == "pending":
        return f"// {rel}", True
    if role == "deep":
        return _deep_member(current, path, rel)
    if role == "members" and os.path.dirname(path) == directory:
        if name.startswith(".") and name != ".gitignore":
            return None
        return f"// {rel}", True
    owner = current.owner(path)
    if role in ("project", "members"):
        watched = owner is not None and any(p.dir == owner.dir for p in current.watched)
        if owner is None or not watched:
            return None
        return f"{owner.name} {os.path.relpath(path, owner.dir)}", shape
    # the wide root watcher: keep only what a key can see. A project with no task in the run
    # (a root project holding only `//#lint`, say) is no tree to watch: only the wide globs
    # below can take a file of it, or every write at the root would start a cycle.
    if owner is not None and any(p.dir == owner.dir for p in current.watched):
        return f"{owner.name} {os.path.relpath(path, owner.dir)}", shape
    if "/" not in rel and name in ROOT_FILES:
        return f"// {rel}", shape
    if any(os.path.dirname(path) == b for b in current.bases):
        return f"// {rel}", True
    if current.members is not None and current.members.is_member_manifest(path):
        return f"// {rel}", True
    if current.wide_globs is None or current.wide_globs.match(rel):
        return f"// {rel}", shape
    return None


def _leads_to_members(current: WatchSet, rel: str, path: str) -> bool:
    """A directory at the root (made or gone) where a member glob starts: `apps` for
    `apps/**`, before any watcher can be under it."""
    members = current.members
    return members is not None and members.leads(rel) and not os.path.isfile(path)


def _deep_member(current: WatchSet, path: str, rel: str) -> tuple[str, bool] | None:
    """Under a `**` glob's base only a member's manifest counts, and not one a watched
    project's own watcher hears already."""
    members = current.members
    if members is None or not members.is_member_manifest(path):
        return None
    directory = os.path.dirname(path)
    if os.path.exists(path) and any(p.dir == directory for p in current.watched):
        return None
    return f"// {rel}", True


def _nearest_dir(path: str) -> str:
    """`path`, or its nearest ancestor that exists: a removed directory is heard from above."""
    current = path
    while current and not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current
