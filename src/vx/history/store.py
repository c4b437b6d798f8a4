"""`vx cache prune` against the cache a run here would use (`cache.location.locate_cache`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from vx.cache.evict import Policy, PruneResult


def prune_workspace_cache(
    policy: Policy,
    *,
    dry_run: bool,
    cwd: Path,
    env: Mapping[str, str],
    flag: str | None,
    on_wait: Callable[[int], None] | None = None,
) -> PruneResult:
    """`vx cache prune`: plan against the cache a run here would use, then apply unless dry.

    A real prune holds the workspace's run lock, so it never evicts what a run here is
    restoring; a dry one reads the index only (as a reset would leave one another version
    wrote) and creates nothing. A cache that does not exist yet prunes nothing.
    """
    from vx.cache.evict import apply_prune, dry_result, list_cache, now_ms, plan_prune
    from vx.cache.index import INDEX_NAME, open_index, read_index
    from vx.cache.location import locate_cache
    from vx.cache.runlock import acquire_run_lock
    from vx.workspace.config_load import load_workspace_config
    from vx.workspace.discover import find_root

    root = find_root(cwd).root
    store = locate_cache(root, load_workspace_config(root), cwd=cwd, env=env, flag=flag).store
    if dry_run or not store.is_dir():
        index = read_index(store)
        try:
            plan = plan_prune(list_cache(store, index), policy, now_ms())
        finally:
            if index is not None:
                index.close()
        return dry_result(plan, dry_run=dry_run)
    with acquire_run_lock(root, on_wait=on_wait):
        index = open_index(store) if (store / INDEX_NAME).is_file() else None
        try:
            plan = plan_prune(list_cache(store, index), policy, now_ms())
            return apply_prune(plan, store, index)
        finally:
            if index is not None:
                index.close()
