"""vx's public API: what a `.py` config imports, loaded lazily so a config never pulls in the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["__version__", "define_project", "define_workspace"]

__version__ = "0.1.0"


def define_project(config: Mapping[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """Return a project config as a plain dict; vx validates it when it loads the file.

    Accepts either one mapping (`define_project({"tasks": ...})`) or keywords
    (`define_project(tasks=...)`), so a config reads the same as its JSON twin.
    """
    return {**(config or {}), **fields}


def define_workspace(config: Mapping[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """Return a workspace config as a plain dict; the `vx.workspace.py` counterpart of define_project."""
    return {**(config or {}), **fields}
