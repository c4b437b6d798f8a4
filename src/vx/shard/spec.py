"""Which shard of how many this run is, and which CI run it belongs to, from flags or CI env."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_WAIT_S = 300.0
"""How long a shard waits for a dependency another shard owns before running it itself: long
enough for a typical build step on a peer runner, short enough that a dead peer costs minutes."""

# (index variable, total variable, the number the first shard's index is)
_CI_VARIABLES = (
    ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),  # GitLab `parallel:`
    ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),  # CircleCI `parallelism:`
)


class ShardSpec(Record):
    """Shard `number` (1-based) of `total`; `run_id` ties the shards of one CI run together.

    `wait_s` bounds the wait for a dependency another shard owns; `source` says where the
    numbers came from (`--shard`, a CI variable), for the messages that name them.
    """

    number: int
    total: int
    run_id: str | None = None
    wait_s: float = DEFAULT_WAIT_S
    source: str = "--shard"

    @property
    def label(self) -> str:
        """`2/4`: how the shard is named in every line that speaks of it."""
        return f"{self.number}/{self.total}"


def parse_shard(text: str, source: str = "--shard") -> tuple[int, int]:
    """`K/N` → (K, N) with 1 ≤ K ≤ N; anything else is one line naming `source`."""
    index, sep, total = text.partition("/")
    if sep and index.strip().isdigit() and total.strip().isdigit():
        k, n = int(index), int(total)
        if 1 <= k <= n:
            return k, n
    raise UserError(
        ErrorCode.USAGE,
        f"{source} takes K/N with 1 ≤ K ≤ N (the K-th of N shards, e.g. 2/4), got {text!r}",
    )


def resolve_shard(
    flag: str | None,
    env: Mapping[str, str],
    *,
    run_flag: str | None = None,
    wait_s: float | None = None,
) -> ShardSpec | None:
    """The shard this run is: `--shard` first, else a CI's node variables when both are set.

    A CI that runs one node (a total of 1) is no sharding. The run id is `--shard-run`, else
    the CI's own id for the pipeline (GitHub's run id with its attempt, GitLab's pipeline,
    CircleCI's workflow), so a re-run of a failed pipeline is a run of its own.
    """
    found: tuple[int, int, str] | None = None
    if flag is not None:
        found = (*parse_shard(flag), "--shard")
    else:
        for index_var, total_var, first in _CI_VARIABLES:
            index, total = env.get(index_var, "").strip(), env.get(total_var, "").strip()
            if not (index and total):
                continue
            source = f"{index_var}/{total_var}"
            if not (index.isdigit() and total.isdigit()):
                raise UserError(
                    ErrorCode.USAGE,
                    f"{source} are {index!r}/{total!r}, not numbers: unset them or pass"
                    " --shard K/N",
                )
            k, n = parse_shard(f"{int(index) + 1 - first}/{total}", source)
            found = (k, n, source)
            break
    if found is None:
        if run_flag is not None or wait_s is not None:
            raise UserError(
                ErrorCode.USAGE,
                "--shard-run and --shard-wait are for a sharded run: add --shard K/N",
            )
        return None
    k, n, source = found
    if n == 1 and flag is None:
        return None
    return ShardSpec(
        number=k,
        total=n,
        run_id=run_flag or ci_run_id(env),
        wait_s=DEFAULT_WAIT_S if wait_s is None else wait_s,
        source=source,
    )


def ci_run_id(env: Mapping[str, str]) -> str | None:
    """The CI's id for this pipeline run, shared by its parallel jobs; None outside a CI."""
    github = env.get("GITHUB_RUN_ID", "").strip()
    if github:
        attempt = env.get("GITHUB_RUN_ATTEMPT", "").strip() or "1"
        return f"github:{github}.{attempt}"
    for name, prefix in (("CI_PIPELINE_ID", "gitlab"), ("CIRCLE_WORKFLOW_ID", "circleci")):
        value = env.get(name, "").strip()
        if value:
            return f"{prefix}:{value}"
    return None
