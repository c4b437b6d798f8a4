"""git's view of the work tree, read while the workspace loads.

`git ls-files` and `git status` spend their time in git, not in Python: at a thousand
packages they take about as long as parsing the configs does. Started before the workspace
loads (writing into memory files, so no thread of ours competes with the parse), they finish
while it does, and the run still spawns each of them once.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from vx.errors import UserError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from vx.git import GitSnapshot


class GitAhead:
    """A snapshot started early for the root the run will load, or nothing to wait for.

    It starts only where the root is certain before discovery runs: `cwd` itself declares a
    workspace (discovery settles there at once). Elsewhere, and for any other root `take` is
    asked about, the snapshot is taken then, as it always was; so is an error git gives.
    """

    __slots__ = ("_env", "_finish", "_root")

    def __init__(self, cwd: Path, env: Mapping[str, str]) -> None:
        from vx import git
        from vx.workspace.discover import declaration

        self._env = env
        self._root: Path | None = None
        self._finish: Callable[[], GitSnapshot] | None = None
        where = Path(os.path.normpath(cwd.absolute()))  # as discovery names the root
        try:
            if declaration(where) is None:
                return
            self._finish = git.start_snapshot(where, env=env)
        except (UserError, OSError):
            return  # the run meets it again where it always did, and says it in its own words
        self._root = where

    def take(self, root: Path) -> GitSnapshot:
        """The snapshot of `root`: the early one when it is that root's, else taken now."""
        from vx import git

        finish, self._finish = self._finish, None
        if finish is None or root != self._root:
            if finish is not None:
                _settle(finish)
            return git.snapshot(root, env=self._env)
        return finish()

    def wait(self) -> None:
        """Let git finish when the run ends (or fails) without taking the snapshot: vx leaves
        no child behind."""
        finish, self._finish = self._finish, None
        if finish is not None:
            _settle(finish)


def _settle(finish: Callable[[], GitSnapshot]) -> None:
    with contextlib.suppress(UserError):  # an answer nobody asked for
        finish()
