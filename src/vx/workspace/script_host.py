"""Which package manager runs a repo's scripts, and how: Yarn Berry, Plug'n'Play, pre/post hooks.

`vx init` copies scripts into tasks; what a script meant depends on the manager that ran it
(Yarn 2+ runs no `pre`/`post` hooks and keeps its bins in `.pnp.cjs`), so it asks here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.workspace.model import Manager

_KNOWN = ("npm", "pnpm", "yarn", "bun")
_PACKAGE_MANAGER = re.compile(r"(npm|pnpm|yarn|bun)@(\d+)")
_SETTING = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*[:=]\s*['\"]?([^'\"#\s]*)", re.MULTILINE)


class ScriptHost(Record):
    """The manager that runs the scripts: its name, and the traits that change a mapping.

    `berry` is Yarn 2 or later; `pnp` a Berry repo on Plug'n'Play; `hooks` whether the
    manager runs `pre<x>` / `post<x>` around `x`.
    """

    name: str
    berry: bool = False
    pnp: bool = False
    hooks: bool = True

    @property
    def run_word(self) -> str:
        """How this manager runs a script by name, as the report spells examples."""
        return "npm run" if self.name == "npm" else f"{self.name} run"


def _settings(path: Path) -> dict[str, str]:
    """`key: value` / `key=value` lines of a `.npmrc`, `.yarnrc.yml` or the pnpm yaml."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return {m[1]: m[2] for m in _SETTING.finditer(text)}


def _declared(manifest: Mapping[str, object]) -> tuple[str, int] | None:
    """The root package.json's `packageManager`, when it names a manager vx knows."""
    value = manifest.get("packageManager")
    if not isinstance(value, str):
        return None
    found = _PACKAGE_MANAGER.match(value.strip())
    return (found[1], int(found[2])) if found else None


def _berry_lockfile(root: Path) -> bool:
    """A Yarn 2+ lockfile opens with a `__metadata:` block; Yarn 1's is `# yarn lockfile v1`."""
    try:
        with (root / "yarn.lock").open(encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return "__metadata:" in head


def detect_host(root: Path, manager: Manager, manifest: Mapping[str, object]) -> ScriptHost:
    """The manager running the scripts under `root`: `packageManager`, else the lockfile."""
    declared = _declared(manifest)
    name = declared[0] if declared else None
    if name is None:
        name = manager.value if manager.value in _KNOWN else None
    if name is None:
        for lockfile, owner in (
            ("pnpm-lock.yaml", "pnpm"),
            ("yarn.lock", "yarn"),
            ("bun.lock", "bun"),
            ("bun.lockb", "bun"),
        ):
            if (root / lockfile).is_file():
                name = owner
                break
    name = name or "npm"
    if name == "yarn":
        berry = declared[1] >= 2 if declared else _berry_lockfile(root)
        if not berry:
            return ScriptHost("yarn")
        linker = _settings(root / ".yarnrc.yml").get("nodeLinker", "pnp")
        return ScriptHost(
            "yarn", berry=True, pnp=linker not in ("node-modules", "pnpm"), hooks=False
        )
    if name == "npm":
        off = _settings(root / ".npmrc").get("ignore-scripts") == "true"
        return ScriptHost("npm", hooks=not off)
    if name == "pnpm":
        npmrc = _settings(root / ".npmrc").get("enable-pre-post-scripts")
        yaml = _settings(root / "pnpm-workspace.yaml").get("enablePrePostScripts")
        return ScriptHost("pnpm", hooks="false" not in (npmrc, yaml))
    return ScriptHost(name)
