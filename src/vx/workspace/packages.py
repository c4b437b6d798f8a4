"""The package graph: which manifest dependencies link workspace projects, and semver ranges."""

from __future__ import annotations

import os
import re
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.workspace.manifests import normalize_python_name
from vx.workspace.model import Manager

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.workspace.model import Project

# A version's sort key: (major, minor, patch, 1, ()) for a release and (major, minor, patch, 0,
# ids) for a prerelease, so a prerelease sorts below its release; an id is (0, n, "") when
# numeric and (1, 0, text) otherwise, so numeric ids sort first, as semver orders them.
Key = tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]
Comparator = tuple[str, Key]

_VERSION = re.compile(
    r"\s*[v=]*\s*(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?\s*"
)
_PARTIAL = re.compile(
    r"[v=]*(\d+|[xX*])(?:\.(\d+|[xX*])(?:\.(\d+|[xX*])"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?)?)?"
)
_OPERATOR = re.compile(r"~>|~|\^|<=|>=|<|>|=")
_OPERATOR_SPACE = re.compile(r"(~>|~|\^|<=|>=|<|>|=)\s+")
_HYPHEN = re.compile(r"(\S+)\s+-\s+(\S+)")
_PATH_PROTOCOLS = ("file:", "link:", "portal:")
_WORKSPACE = "workspace:"
_ANY_SPECS = frozenset({"", "*", "x", "X"})


def _key(major: int, minor: int, patch: int, pre: str | None = None) -> Key:
    if not pre:
        return (major, minor, patch, 1, ())
    ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (major, minor, patch, 0, ids)


def _floor(major: int, minor: int, patch: int) -> Key:
    """`X.Y.Z-0`: below every prerelease of X.Y.Z, so `<X.Y.Z-0` excludes them all."""
    return _key(major, minor, patch, "0")


def parse_version(text: str) -> Key | None:
    """A full `X.Y.Z[-pre][+build]` version's sort key, or None when it is not one."""
    found = _VERSION.fullmatch(text)
    if found is None:
        return None
    major, minor, patch, pre = found.groups()
    return _key(int(major), int(minor), int(patch), pre)


_Partial = tuple[int | None, int | None, int | None, str | None]


def _partial(text: str) -> _Partial | None:
    found = _PARTIAL.fullmatch(text)
    if found is None:
        return None
    parts: list[int | None] = []
    for raw in found.groups()[:3]:
        wild = raw is None or raw in {"x", "X", "*"} or (bool(parts) and parts[-1] is None)
        parts.append(None if wild else int(raw))
    return parts[0], parts[1], parts[2], found.group(4)


def _bump(major: int, minor: int | None) -> Key:
    """The exclusive upper bound of `X` (→ X+1) or `X.Y` (→ X.Y+1)."""
    return _floor(major + 1, 0, 0) if minor is None else _floor(major, minor + 1, 0)


def _primitive(op: str, p: _Partial) -> list[Comparator]:
    major, minor, patch, pre = p
    if major is None:
        return [("<", _floor(0, 0, 0))] if op in {"<", ">"} else []
    if minor is not None and patch is not None:
        return [(op or "=", _key(major, minor, patch, pre))]
    low = _key(major, minor or 0, 0)
    high = _bump(major, minor)
    match op:
        case "" | "=":
            return [(">=", low), ("<", high)]
        case ">":
            return [(">=", (*high[:3], 1, ()))]
        case ">=":
            return [(">=", low)]
        case "<":
            return [("<", _floor(major, minor or 0, 0))]
    return [("<", high)]


def _tilde(p: _Partial) -> list[Comparator]:
    major, minor, patch, pre = p
    if major is None:
        return []
    low = _key(major, minor or 0, patch or 0, pre)
    return [(">=", low), ("<", _bump(major, minor))]


def _caret(p: _Partial) -> list[Comparator]:
    major, minor, patch, pre = p
    if major is None:
        return []
    low = _key(major, minor or 0, patch or 0, pre)
    if major > 0 or minor is None:
        high = _floor(major + 1, 0, 0)
    elif minor > 0 or patch is None:
        high = _floor(0, minor + 1, 0)
    else:
        high = _floor(0, 0, patch + 1)
    return [(">=", low), ("<", high)]


def _hyphen(low: _Partial, high: _Partial) -> list[Comparator]:
    out: list[Comparator] = []
    if low[0] is not None:
        out.append((">=", _key(low[0], low[1] or 0, low[2] or 0, low[3])))
    major, minor, patch, pre = high
    if major is not None:
        if minor is not None and patch is not None:
            out.append(("<=", _key(major, minor, patch, pre)))
        else:
            out.append(("<", _bump(major, minor)))
    return out


def _comparators(part: str) -> list[Comparator] | None:
    """One `||` alternative as the comparators all of which must hold; None if malformed."""
    hyphen = _HYPHEN.fullmatch(part)
    if hyphen is not None:
        low, high = _partial(hyphen.group(1)), _partial(hyphen.group(2))
        return None if low is None or high is None else _hyphen(low, high)
    out: list[Comparator] = []
    for token in _OPERATOR_SPACE.sub(r"\1", part).split():
        found = _OPERATOR.match(token)
        op = found.group(0) if found else ""
        p = _partial(token[len(op) :])
        if p is None:
            return None
        out.extend(
            _tilde(p) if op in {"~", "~>"} else _caret(p) if op == "^" else _primitive(op, p)
        )
    return out


def parse_range(text: str) -> tuple[tuple[Comparator, ...], ...] | None:
    """A node-semver range as alternatives of comparator sets; None when it is no range."""
    out: list[tuple[Comparator, ...]] = []
    for part in text.split("||"):
        comparators = _comparators(part.strip())
        if comparators is None:
            return None
        out.append(tuple(comparators))
    return tuple(out)


def _holds(op: str, version: Key, bound: Key) -> bool:
    if op == "=":
        return version == bound
    less = version < bound
    return {
        "<": less,
        "<=": less or version == bound,
        ">": not less and version != bound,
        ">=": not less,
    }[op]


def satisfies(version: str, spec: str) -> bool:
    """Whether `version` is in the node-semver range `spec`.

    As npm decides it: a prerelease is only in a range one of whose comparators names a
    prerelease of the same major.minor.patch, so `^1.0.0` does not take `1.1.0-beta`.
    """
    key = parse_version(version)
    ranges = parse_range(spec)
    if key is None or ranges is None:
        return False
    for comparators in ranges:
        if not all(_holds(op, key, bound) for op, bound in comparators):
            continue
        if key[3] == 1 or any(b[3] == 0 and b[:3] == key[:3] for _, b in comparators):
            return True
    return False


class _Index:
    """Workspace projects by name and by directory, for resolving one dependency spec."""

    def __init__(self, projects: Sequence[Project]) -> None:
        self.by_name = {p.name: p for p in projects}
        self.by_dir = {os.path.normpath(p.dir): p.name for p in projects}
        self._projects = projects
        self._by_real: dict[str, str] | None = None

    def at(self, base: Path, relative: str) -> str | None:
        """The project whose directory `relative` (from `base`) names, literally or resolved."""
        target = os.path.normpath(base / relative.strip())
        if target in self.by_dir:
            return self.by_dir[target]
        if self._by_real is None:
            self._by_real = {os.path.realpath(p.dir): p.name for p in self._projects}
        return self._by_real.get(os.path.realpath(target))


def _is_path(spec: str) -> bool:
    return spec in {".", ".."} or spec.startswith(("./", "../", "/"))


def _js_target(dep: str, spec: str, owner: Project, index: _Index) -> str | None:
    """The project a package.json entry links, by the rules npm, pnpm, Yarn and Bun share."""
    spec = spec.strip()
    if spec.startswith(_WORKSPACE):
        rest = spec.removeprefix(_WORKSPACE).strip()
        if _is_path(rest):
            return index.at(owner.dir, rest)
        at = rest.rfind("@")
        name = rest[:at] if at > 0 else dep
        return name if name in index.by_name else None
    for protocol in _PATH_PROTOCOLS:
        if spec.startswith(protocol):
            return index.at(owner.dir, spec.removeprefix(protocol))
    target = index.by_name.get(dep)
    if target is None:
        return None
    if spec in _ANY_SPECS:
        return dep
    return dep if target.version is not None and satisfies(target.version, spec) else None


def package_links(
    projects: Sequence[Project], manager: Manager
) -> Mapping[str, Mapping[str, tuple[str, ...]]]:
    """Every project's linked workspace projects, each with the dependency keys that link it.

    A project links none of its own. The keys (manifest spellings) let a caller name the
    fields an edge comes from.
    """
    index = _Index(projects)
    python = {normalize_python_name(p.name): p.name for p in projects}
    links: dict[str, Mapping[str, tuple[str, ...]]] = {}
    for owner in sorted(projects, key=lambda p: p.name):
        found: dict[str, list[str]] = {}
        for dep, spec in owner.dependencies.items():
            if manager is Manager.UV:
                target = python.get(normalize_python_name(dep))
            elif manager is Manager.SINGLE:
                target = None
            else:
                target = _js_target(dep, spec, owner, index)
            if target is not None and target != owner.name:
                found.setdefault(target, []).append(dep)
        links[owner.name] = MappingProxyType({t: tuple(found[t]) for t in sorted(found)})
    return MappingProxyType(links)


def package_edges(projects: Sequence[Project], manager: Manager) -> Mapping[str, tuple[str, ...]]:
    """Every project's linked workspace projects, sorted; a project links none of its own."""
    return MappingProxyType(
        {owner: tuple(targets) for owner, targets in package_links(projects, manager).items()}
    )
