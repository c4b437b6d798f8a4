"""Telling a leftover directory from a broken member: does a manifest-less match hold content.

A branch switch leaves behind a package's directory with nothing in it but ignored build
output (`node_modules`, `__pycache__`, `dist`). uv passes such a directory by when a member glob
matches it; one holding files git tracks or would track is a member missing its manifest, and
uv refuses the workspace there. vx draws the same line, for every package manager.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx import git

if TYPE_CHECKING:
    from pathlib import Path

_NODE_MODULES = "node_modules"


def _has_file(directory: str) -> bool:
    """Whether any file sits at or below `directory` outside `node_modules`; links not entered."""
    stack = [directory]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name != _NODE_MODULES:
                                stack.append(entry.path)
                        else:
                            return True
                    except OSError:
                        continue
        except OSError:
            continue
    return False


def holds_content(root: Path, rel: str) -> bool:
    """Whether the directory `rel` holds a file that is not ignored build output."""
    return _has_file(str(root / rel)) and not git.ignores_all(root, rel)
