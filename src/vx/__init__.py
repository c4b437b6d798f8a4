"""vx's public API: what a `.py` config imports, lazy so that a config never loads the engine."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = [
    "PreparedRun",
    "RunOptions",
    "__version__",
    "define_project",
    "define_workspace",
    "plan_run",
    "prepare_run",
    "run",
]

_ENGINE = frozenset({"PreparedRun", "RunOptions", "plan_run", "prepare_run", "run"})

__version__ = "0.1.0"


def define_project(config: Mapping[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """Return a project config as a plain dict; vx validates it when it loads the file.

    Accepts either one mapping (`define_project({"tasks": ...})`) or keywords
    (`define_project(tasks=...)`), so a config reads the same as its JSON twin.
    """
    result = {**(config or {}), **fields}
    _record("project", result)
    return result


def define_workspace(config: Mapping[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """Return a workspace config as a plain dict: define_project's `vx.workspace.py` twin."""
    result = {**(config or {}), **fields}
    _record("workspace", result)
    return result


def _record(kind: str, value: dict[str, Any]) -> None:
    """Tell the config loader what a `.py` config defined, so `config = ...` is optional there.

    A loader that is not imported yet cannot be running a config, so it is not imported here:
    define_* called from an ordinary script stays free.
    """
    loader = sys.modules.get("vx.workspace.config_load")
    if loader is not None:
        loader.record_definition(kind, value)


def __getattr__(name: str) -> Any:
    """`vx.run` and its kin load the engine on first use, never when a config imports vx."""
    if name in _ENGINE:
        from vx.run import prepare

        if name == "run":
            return sys.modules["vx.run"]  # the package, callable as run(options, sink)
        return getattr(prepare, name)
    raise AttributeError(f"module 'vx' has no attribute {name!r}")
