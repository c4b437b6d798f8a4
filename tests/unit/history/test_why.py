"""`vx why`'s answer over a real index: name resolution, the diff, the root-cause walk, the
endings of an unchanged key and the `what to do` lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from vx.cache.archive import ArtifactInfo
from vx.cache.index import Index, open_index
from vx.cache.key import KeyComponent, Kind
from vx.cache.runlog import InvocationRow, RunRow
from vx.errors import ErrorCode, UserError
from vx.events import CacheOutcome, TaskStatus
from vx.history.why import MAX_ROOTS, explain, resolve_task, todo_lines

if TYPE_CHECKING:
    from pathlib import Path

ART = ArtifactInfo(0, "0" * 16, ())
FMT = KeyComponent(Kind.FORMAT, "vx", "1")


class History:
    """Runs written as `vx run` writes them: one invocation with its rows, entries on success."""

    def __init__(self, tmp_path: Path) -> None:
        self.index: Index = open_index(tmp_path)
        self.n = 0

    def run(
        self,
        tasks: dict[str, tuple[str, tuple[KeyComponent, ...]]],
        *,
        status: TaskStatus = TaskStatus.SUCCESS,
        cache: CacheOutcome = CacheOutcome.MISS,
        command: str = "vx run build",
        failed: int = 0,
        save: bool = True,
        tainted: bool = False,
    ) -> str:
        self.n += 1
        run_id = f"0190000{self.n}-0000-7000-8000-000000000000"
        rows = []
        for tid, (key, inputs) in tasks.items():
            project, _, task = tid.partition("#")
            if save and status is TaskStatus.SUCCESS and cache is CacheOutcome.MISS:
                self.index.put_entry(key, project=project, task=task, artifact=ART, inputs=inputs)
            rows.append(RunRow(run_id, project, task, status, cache, key, tainted=tainted))
        inv = InvocationRow(run_id, command, self.n * 1000, self.n * 1000 + 5, 0, failed=failed)
        self.index.record_invocation(inv, rows)
        return run_id


def comps(*pairs: tuple[Kind, str, str]) -> tuple[KeyComponent, ...]:
    return (FMT, *(KeyComponent(k, n, d) for k, n, d in pairs))


def test_resolve_task(tmp_path: Path) -> None:
    h = History(tmp_path)
    with pytest.raises(UserError, match="nothing has run yet"):
        resolve_task(h.index, "build", None)
    h.run({"a#build": ("a1", comps()), "b#build": ("b1", comps()), "b#test": ("t1", comps())})
    assert resolve_task(h.index, "test", None) == "b#test"
    assert resolve_task(h.index, "build", "b") == "b#build"
    assert resolve_task(h.index, "a#build", None) == "a#build"
    with pytest.raises(UserError) as several:
        resolve_task(h.index, "build", "c")
    assert several.value.code is ErrorCode.AMBIGUOUS
    assert "a#build, b#build" in str(several.value)
    with pytest.raises(UserError, match="did you mean a#build"):
        resolve_task(h.index, "a#biuld", None)
    with pytest.raises(UserError, match="vx last --list shows the runs"):
        resolve_task(h.index, "deploy", None)


def test_a_root_cause_two_levels_down(tmp_path: Path) -> None:
    h = History(tmp_path)
    core1 = comps((Kind.FILE, "packages/core/src/i.ts", "f1"))
    core2 = comps((Kind.FILE, "packages/core/src/i.ts", "f2"))
    h.run(
        {
            "core#build": ("c1", core1),
            "lib#build": ("l1", comps((Kind.UPSTREAM, "core#build", "c1"))),
            "app#build": ("a1", comps((Kind.UPSTREAM, "lib#build", "l1"))),
        }
    )
    h.run(
        {
            "core#build": ("c2", core2),
            "lib#build": ("l2", comps((Kind.UPSTREAM, "core#build", "c2"))),
            "app#build": ("a2", comps((Kind.UPSTREAM, "lib#build", "l2"))),
        }
    )
    e = explain(h.index, "app#build", None)
    assert e.verdict == "cache key changed: upstream lib#build"
    assert e.unchanged == 1
    assert [r.chain for r in e.roots] == [("app#build", "lib#build", "core#build")]
    assert e.roots[0].changes[0].name == "packages/core/src/i.ts"
    assert todo_lines(e) == [
        (
            "file",
            (
                "an edit re-runs by design; a file the task does not read belongs out of"
                " cache.inputs.files"
            ),
        )
    ]


def test_roots_past_five_are_counted_and_a_lost_dependency_is_named(tmp_path: Path) -> None:
    h = History(tmp_path)
    deps = [f"d{i}#build" for i in range(MAX_ROOTS + 2)]
    for gen in (1, 2):
        tasks = {d: (f"{d}-{gen}", comps((Kind.ENV, "X", str(gen)))) for d in deps}
        tasks["gone#build"] = (f"gone-{gen}", comps((Kind.ENV, "X", str(gen))))
        ups = tuple((Kind.UPSTREAM, d, f"{d}-{gen}") for d in (*deps, "gone#build"))
        tasks["app#build"] = (f"app-{gen}", comps(*ups))
        h.run(tasks)
    h.index.drop_entry("gone-1")
    e = explain(h.index, "app#build", None)
    assert len(e.roots) == MAX_ROOTS
    assert e.more_roots == 2
    assert e.unresolved == ("gone#build",)
    assert ("upstream", "a dependency's key moved: vx why gone#build explains it") in todo_lines(e)
    assert e.verdict == (
        "cache key changed: upstream d0#build, upstream d1#build, upstream"
        f" d2#build, +{len(deps) - 2} more"
    )


def test_a_failed_previous_run_is_compared_with_the_last_saved(tmp_path: Path) -> None:
    h = History(tmp_path)
    h.run({"a#build": ("k1", comps((Kind.ENV, "X", "1")))})
    h.run({"a#build": ("k2", comps((Kind.ENV, "X", "2")))}, status=TaskStatus.FAILED)
    h.run({"a#build": ("k3", comps((Kind.ENV, "X", "3")))})
    e = explain(h.index, "a#build", None)
    assert e.previous is not None
    assert e.previous.row.key == "k2"
    assert e.compared is not None
    assert e.compared.row.key == "k1"
    assert e.verdict == "cache key changed: env X"


def test_an_entry_gone_leaves_the_key_change_alone(tmp_path: Path) -> None:
    h = History(tmp_path)
    h.run({"a#build": ("k1", comps((Kind.ENV, "X", "1")))})
    h.run({"a#build": ("k2", comps((Kind.ENV, "X", "2")))})
    h.index.drop_entry("k1")
    e = explain(h.index, "a#build", None)
    assert e.verdict == "cache key changed: (inputs differ)"
    assert e.changes is None


SAME = "cache key unchanged: re-executed — "


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (
            {},
            {"cache": CacheOutcome.LOCAL},
            "cache key unchanged: served from cache, nothing re-ran",
        ),
        (
            {"status": TaskStatus.FAILED},
            {},
            SAME + "the previous run on this key failed and saved nothing",
        ),
        (
            {},
            {"command": "vx run build --force"},
            SAME + "the run did not read the cache (--force)",
        ),
        (
            {},
            {"command": "vx run build --cache local:"},
            SAME + "the run did not read the cache (--cache=local:)",
        ),
        (
            {"cache": CacheOutcome.NO_CACHE},
            {},
            SAME + "the previous run wrote no cache (no cache block, or --no-cache)",
        ),
        (
            {"save": False},
            {},
            SAME + "the previous run executed, and no entry held the key when this one ran"
            " (its save failed, or a prune took it)",
        ),
        (
            {"cache": CacheOutcome.LOCAL},
            {},
            SAME + "no entry for the key was there when it ran (pruned or evicted)",
        ),
        (
            {"failed": 1, "save": False, "tainted": True},
            {"failed": 1, "save": False, "tainted": True},
            SAME + "neither run saved it: both ran beside a failed task (a task run past a"
            " failed dependency under --continue is never cached)",
        ),
    ],
)
def test_the_endings_of_an_unchanged_key(tmp_path: Path, first, second, expected) -> None:
    h = History(tmp_path)
    h.run({"a#build": ("k1", comps())}, **first)
    h.run({"a#build": ("k1", comps())}, **second)
    assert explain(h.index, "a#build", None).verdict == expected


def test_run_pins_a_run_by_prefix(tmp_path: Path) -> None:
    h = History(tmp_path)
    first = h.run({"a#build": ("k1", comps((Kind.ENV, "X", "1")))})
    h.run({"a#build": ("k2", comps((Kind.ENV, "X", "2")))})
    h.run({"b#build": ("b1", comps())})
    e = explain(h.index, "a#build", first[:8])
    assert e.latest.row.key == "k1"
    assert e.verdict == "first recorded run of the task: nothing to compare"
    with pytest.raises(UserError, match="did not run a#build"):
        explain(h.index, "a#build", "01900003")
