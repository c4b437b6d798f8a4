"""Where the reading verbs (`vx last`, `vx why`) find the run history, and its index.

They read the cache a run wrote, so `--cache-dir` follows `vx run`'s rules (relative to the
cwd), else the workspace's `cacheDir`, `VX_CACHE_DIR`, or the repository's shared store. A
workspace that never ran has no `cache.db`: the verbs read that as an empty history and
create nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cli.parser import Flag, Takes
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cache.index import Index

CACHE_DIR_FLAG = Flag(
    "--cache-dir",
    "read the history a run wrote there (relative to the current directory)",
    Takes.VALUE,
    metavar="<path>",
)


def history_dir(flag: str | None, env: Mapping[str, str], cwd: Path) -> Path:
    """The directory holding `cache.db` and `failures/`; a named one must exist."""
    import os
    from pathlib import Path

    if flag is not None:
        if not flag.strip():
            raise UserError(ErrorCode.USAGE, "--cache-dir: the path is blank; name a directory")
        path = Path(os.path.normpath(cwd.absolute() / flag))
        if not path.is_dir():
            raise UserError(ErrorCode.USAGE, f"--cache-dir {flag}: no such directory")
        return path
    from vx.cache.location import locate_cache
    from vx.workspace.config_load import load_workspace_config
    from vx.workspace.discover import find_root

    root = find_root(cwd).root
    config = load_workspace_config(root)
    location = locate_cache(root, config, cwd=cwd, env=env, flag=None, keep=False)
    return location.directory


def root_alias(task_id: str, cwd: Path) -> str:
    """`//#task` as the history records it: runs store the root project under its own name
    when it has one (a uv root's `[project] name`, a single package's name), and `//` names
    it on the command line all the same. Anything else, or no workspace here, as given."""
    from vx.ids import ROOT

    if not task_id.startswith(f"{ROOT}#"):
        return task_id
    from vx.loader.assemble import root_project_name

    try:
        name = root_project_name(cwd)
    except UserError:
        return task_id
    return name + task_id[len(ROOT) :]


def open_history(directory: Path, verb: str) -> Index | None:
    """The index there, read-only; None when no run wrote one (or the file is unreadable).

    An index another vx version wrote is refused with `VX_E_CACHE_VERSION` rather than read
    as an empty history: the runs are there, this version cannot read them, and the next
    `vx run` here resets the file.
    """
    from vx.cache.index import INDEX_NAME, SCHEMA_VERSION, Index, read_index

    found = read_index(directory)
    if found is not None or not (directory / INDEX_NAME).is_file():
        return found
    other = Index(directory / INDEX_NAME, read_only=True)
    try:
        version = other.file_version()
    finally:
        other.close()
    if version is None or version == SCHEMA_VERSION:
        return None
    raise UserError(
        ErrorCode.CACHE_VERSION,
        f"vx {verb}: the history in {directory / INDEX_NAME} was written by another vx version"
        f" (index schema v{version}; this vx reads v{SCHEMA_VERSION}) — a vx run there starts"
        " a new history",
    )
