"""What moved between two versions of a lockfile: per project, and in words a person reads.

`vx why` (from the closures the cache kept) and `--affected` (from the lockfile at the base
ref and in the working tree) both describe a change with `describe`, so they say it alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.lockfiles.model import LockfileError, toolchain_closures
from vx.lockfiles.read import member_manifests, project_closures, read_lockfile

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from vx.lockfiles.model import Locked
    from vx.workspace.model import Workspace


def describe(before: Sequence[Locked], after: Sequence[Locked]) -> list[str]:
    """One line per package name whose versions or integrity moved: `ms 2.1.2 → 2.1.3 (via ui)`."""
    was = _by_name(before)
    now = _by_name(after)
    lines: list[str] = []
    for name in sorted({*was, *now}):
        old, new = was.get(name, {}), now.get(name, {})
        if old == new:
            continue
        via = next(iter((new or old).values()))[0]
        tail = f" (via {via})" if via and via != name else ""
        old_v = ", ".join(sorted(old)) or "(none)"
        new_v = ", ".join(sorted(new)) or "(none)"
        if old_v == new_v:
            lines.append(f"{name} {new_v}: its integrity changed{tail}")
        else:
            lines.append(f"{name} {old_v} → {new_v}{tail}")
    return lines


def _by_name(packages: Sequence[Locked]) -> dict[str, dict[str, tuple[str, str]]]:
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for p in packages:
        out.setdefault(p.name, {})[p.version] = (p.via, p.integrity)
    return out


def moved_projects(
    ws: Workspace,
    name: str,
    old: bytes | None,
    new: bytes | None,
    *,
    base: str,
    old_manifests: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, str] | str:
    """Project → why its closure moved; or, when either side cannot be read or the install-wide
    sections moved, the one reason every project is affected.

    `old_manifests` are the members' package.json documents at the base, for a lockfile whose
    importers live in the manifests (Yarn classic); the work tree's stand in without them.
    """
    manifests = member_manifests(ws)
    sides = []
    for data, where, members in (
        (old, f"at {base}", manifests if old_manifests is None else old_manifests),
        (new, "in the working tree", manifests),
    ):
        if data is None:
            return f"{name} changed and is not there {where}: every project"
        try:
            sides.append(read_lockfile(name, data, members))
        except LockfileError as exc:
            return f"{name} changed and vx cannot read it {where} ({exc}): every project"
    then, now = sides
    if dict(then.install) != dict(now.install):
        keys = {*then.install, *now.install}
        moved = sorted(k for k in keys if then.install.get(k) != now.install.get(k))
        return f"{name} changed its install-wide {', '.join(moved)}: every project"
    root_then = toolchain_closures(then).get("")
    root_now = toolchain_closures(now).get("")
    if root_then != root_now:
        lines = describe(root_then or (), root_now or ())
        what = lines[0] if lines else "its packages moved"
        # Every member keys on the root's own closure (its `toolchain` component).
        return f"{name} changed a root dependency ({what}): every project"
    before = project_closures(ws, then)
    after = project_closures(ws, now)
    out: dict[str, str] = {}
    for project, closure in after.items():
        earlier = before.get(project)
        if closure == earlier:
            continue
        lines = describe(earlier or (), closure or ())
        what = lines[0] if lines else "its packages moved"
        more = f", +{len(lines) - 1} more" if len(lines) > 1 else ""
        out[project] = f"{name} changed ({what}{more})"
    return out
