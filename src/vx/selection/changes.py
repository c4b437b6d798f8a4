"""What changed since a git ref: the ref checked, the merge base found, paths mapped to projects.

A filter's `[<ref>]` and `--affected` both ask the same question, so both come here: which
root-relative paths differ between the merge base of `<ref>` and HEAD and the work tree
(uncommitted edits and untracked files included), and which projects own them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx import git
from vx.errors import ErrorCode, UserError
from vx.util.record import Record
from vx.util.text import clip

LOCK_FILE = "vx-lock.json"

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from vx.workspace.model import Workspace


class BaseRef(Record):
    """A checked ref: what to hand git, and whether to diff from its merge base with HEAD.

    `<base>..HEAD` keeps its two-dot meaning (from `<base>` itself), so `merge` is False.
    """

    ref: str
    merge: bool = True


class Changes(Record):
    """The paths that differ from `base` (the commit the diff ran from) for `ref`.

    `repos` are the paths among them that are a submodule or an untracked embedded repository:
    git names one path for everything inside. `vx-lock.json` is never a change: a `vx lock`
    rewrite must not select every project.
    """

    ref: str
    base: str
    paths: frozenset[str]
    repos: frozenset[str] = frozenset()


def check_ref(text: str, *, what: str) -> BaseRef:
    """Refuse a ref git must never see: empty, option-like, a range, an exclusion, a path.

    The ref is an argument to git, never a command line: a leading `-` would be read as one
    of git's options. `what` names where the ref came from in the refusal
    (`--filter "[main]"`).
    """
    ref = text.strip()
    if not ref:
        raise _refuse(f"{what}: the git ref is empty — name a branch, tag or commit (main)")
    if ref.startswith("-"):
        raise _refuse(
            f'{what}: "{clip(ref)}" starts with "-", which git would read as an option'
            " — name a branch, tag or commit"
        )
    if ref.startswith("^"):
        raise _refuse(
            f'{what}: "{clip(ref)}" is an exclusion — pass the base alone ("{clip(ref[1:])}")'
        )
    if "..." in ref:
        left, _, right = ref.partition("...")
        if left and right == "HEAD":
            return BaseRef(left)
        return _range(what, ref, left)
    if ".." in ref:
        left, _, right = ref.partition("..")
        if left and right == "HEAD":
            return BaseRef(left, merge=False)
        return _range(what, ref, left)
    commit, colon, path = ref.partition(":")
    if colon and not path.startswith("/") and commit:
        raise _refuse(
            f'{what}: "{clip(ref)}" names a path inside a commit — pass the commit alone'
            f' ("{clip(commit)}")'
        )
    return BaseRef(ref)


def _range(what: str, ref: str, left: str) -> BaseRef:
    base = left or "HEAD"
    raise _refuse(
        f'{what}: "{clip(ref)}" is a range; ranges are not supported — pass the base alone'
        f' ("{clip(base)}"): vx compares it with the work tree'
    )


def _refuse(message: str) -> UserError:
    return UserError(ErrorCode.USAGE, message)


def changes_since(root: Path, base: BaseRef, *, env: Mapping[str, str]) -> Changes:
    """Paths changed since `base`: its merge base with HEAD (or the ref itself for a two-dot
    base, or refs with no common ancestor) against the work tree, plus untracked files."""
    commit = git.resolve_commit(root, base.ref, env=env)
    start = commit
    if base.merge and not base.ref.endswith("^{tree}"):
        start = git.merge_base(root, commit, "HEAD", env=env) or commit
    diff = git.diff_raw(root, start, env=env)
    status = git.status(root, env=env)
    paths = (frozenset(diff) | status.untracked | status.nested) - {LOCK_FILE}
    repos = frozenset(p for p, link in diff.items() if link) | status.nested
    return Changes(base.ref, start, paths, repos)


def changed_projects(ws: Workspace, paths: Iterable[str]) -> frozenset[str]:
    """The projects owning `paths`: the deepest project dir holding each one.

    A member listed through a symlink owns the paths under the link and under the place it
    points to inside the root, since git names files where they live. A path no member holds
    belongs to the root project, when the root is one.
    """
    owners: dict[str, str] = {}
    root_real = os.path.realpath(ws.root)
    root_name: str | None = None
    for project in ws.projects:
        if project.is_root:
            root_name = project.name
            continue
        owners[project.rel_dir] = project.name
        real = os.path.realpath(project.dir)
        if real.startswith(root_real + os.sep):
            owners.setdefault(os.path.relpath(real, root_real).replace(os.sep, "/"), project.name)
    found: set[str] = set()
    for path in paths:
        owner = _owner(owners, path)
        if owner is not None:
            found.add(owner)
        elif root_name is not None:
            found.add(root_name)
    return frozenset(found)


def _owner(owners: Mapping[str, str], path: str) -> str | None:
    """The project of the longest directory prefix of `path`."""
    at = path
    while at:
        name = owners.get(at)
        if name is not None:
            return name
        at = at.rpartition("/")[0]
    return None
