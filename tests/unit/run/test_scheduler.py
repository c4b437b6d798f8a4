"""The scheduler's walk: order, lanes, failure propagation, stops."""

from __future__ import annotations

import threading
import time

import pytest

from vx.ids import TaskId
from vx.run.scheduler import (
    ContinueMode,
    Done,
    Lanes,
    NodeKind,
    Result,
    Schedule,
    Ticket,
    run_schedule,
)


def tid(s: str) -> TaskId:
    return TaskId.parse(s)


def make(edges: dict[str, list[str]], kinds: dict[str, NodeKind] | None = None) -> Schedule:
    order = tuple(tid(k) for k in edges)
    deps = {tid(k): tuple(tid(d) for d in v) for k, v in edges.items()}
    kind = {tid(k): v for k, v in (kinds or {}).items()}
    return Schedule(order, deps, kind)


class Recorder:
    def __init__(self, fail: set[str] = frozenset(), requeue: set[str] = frozenset()) -> None:
        self.fail = fail
        self.requeue = set(requeue)
        self.started: list[str] = []
        self.tainted: set[str] = set()
        self.skipped: dict[str, str | None] = {}
        self.not_run: list[str] = []
        self.lock = threading.Lock()
        self.live = 0
        self.peak = 0

    def run(self, ticket: Ticket) -> Done:
        name = str(ticket.id)
        with self.lock:
            self.started.append(name)
            if ticket.tainted:
                self.tainted.add(name)
            self.live += 1
            self.peak = max(self.peak, self.live)
        with self.lock:
            self.live -= 1
        if name in self.requeue:
            self.requeue.discard(name)
            return Done(Result.REQUEUE)
        return Done(Result.FAILED if name in self.fail else Result.OK)

    def skip(self, t: TaskId, blocker: TaskId | None) -> None:
        self.skipped[str(t)] = str(blocker) if blocker else None


def walk(sched: Schedule, rec: Recorder, mode: ContinueMode = ContinueMode.DEPS_OK, **kw):
    stopping = kw.pop("stopping", threading.Event())
    return run_schedule(
        sched,
        lanes=kw.pop("lanes", Lanes(2, 4)),
        mode=mode,
        run_task=rec.run,
        on_skip=rec.skip,
        on_not_run=lambda t: rec.not_run.append(str(t)),
        stopping=stopping,
    )


CHAIN = {"a#build": [], "b#build": ["a#build"], "c#build": ["b#build"], "d#lint": []}


def test_dependencies_run_first() -> None:
    rec = Recorder()
    res = walk(make(CHAIN), rec)
    assert all(r is Result.OK for r in res.values())
    order = rec.started
    assert order.index("a#build") < order.index("b#build") < order.index("c#build")


def test_deps_ok_skips_the_chain_and_names_the_root() -> None:
    rec = Recorder(fail={"a#build"})
    res = walk(make(CHAIN), rec)
    assert res[tid("a#build")] is Result.FAILED
    assert res[tid("d#lint")] is Result.OK
    assert rec.skipped == {"b#build": "a#build", "c#build": "a#build"}


def test_never_stops_dispatch_and_skips_without_blocker() -> None:
    sched = make({"a#x": [], "b#y": ["a#x"], "c#z": ["a#x"]})
    rec = Recorder(fail={"a#x"})
    res = walk(sched, rec, ContinueMode.NEVER, lanes=Lanes(1, 1))
    assert rec.started == ["a#x"]
    assert res[tid("b#y")] is Result.SKIPPED
    assert rec.skipped == {"b#y": "a#x", "c#z": "a#x"}


def test_never_skips_independent_unstarted_work_with_no_blocker() -> None:
    sched = make({"a#x": [], "b#y": []})
    rec = Recorder(fail={"a#x"})
    walk(sched, rec, ContinueMode.NEVER, lanes=Lanes(1, 1))
    assert rec.skipped == {"b#y": None}


def test_always_runs_dependents_tainted() -> None:
    rec = Recorder(fail={"a#build"})
    res = walk(make(CHAIN), rec, ContinueMode.ALWAYS)
    assert res[tid("c#build")] is Result.OK
    assert rec.tainted == {"b#build", "c#build"}
    assert rec.skipped == {}


class LetGo(Recorder):
    """`srv#dev` is a server its run stopped waiting for, unready."""

    def run(self, ticket: Ticket) -> Done:
        done = super().run(ticket)
        return Done(Result.UNREADY) if str(ticket.id) == "srv#dev" else done


SERVED = {"srv#dev": [], "app#e2e": ["srv#dev"], "app#report": ["app#e2e"], "lib#build": []}


@pytest.mark.parametrize("mode", list(ContinueMode))
def test_what_a_server_let_go_unready_serves_is_skipped_under_every_mode(mode) -> None:
    rec = LetGo()
    res = walk(make(SERVED), rec, mode, lanes=Lanes(1, 1))
    assert "app#e2e" not in rec.started
    assert "app#report" not in rec.started
    assert rec.skipped == {"app#e2e": "srv#dev", "app#report": "srv#dev"}
    assert res[tid("lib#build")] is Result.OK  # not a failure: --continue=never goes on


def test_the_tick_counts_a_restore_in_flight() -> None:
    sched = make({"a#build": []}, {"a#build": NodeKind.RESTORE})
    heard: list[int] = []
    go = threading.Event()

    def restore(ticket: Ticket) -> Done:
        go.wait()
        return Done(Result.OK)

    def tick(busy: int) -> None:
        heard.append(busy)
        go.set()

    run_schedule(
        sched,
        lanes=Lanes(1, 1),
        mode=ContinueMode.DEPS_OK,
        run_task=restore,
        on_skip=lambda *_: None,
        on_not_run=lambda _: None,
        stopping=threading.Event(),
        tick=tick,
    )
    assert heard[0] == 1


def test_groups_pass_through_and_never_report() -> None:
    sched = make({"a#x": [], "a#all": ["a#x"], "b#y": ["a#all"]}, {"a#all": NodeKind.GROUP})
    rec = Recorder(fail={"a#x"})
    walk(sched, rec)
    assert "a#all" not in rec.started
    assert rec.skipped == {"b#y": "a#x"}


def test_excluded_nodes_keep_order_and_taint() -> None:
    sched = make(
        {"a#build": [], "a#gen": ["a#build"], "a#test": ["a#gen"]},
        {"a#gen": NodeKind.EXCLUDED},
    )
    rec = Recorder()
    walk(sched, rec)
    assert rec.started == ["a#build", "a#test"]
    assert rec.tainted == {"a#test"}


@pytest.mark.parametrize("cap", [1, 2, 3])
def test_concurrency_cap(cap: int) -> None:
    sched = make({f"p{i}#t": [] for i in range(12)})
    rec = Recorder()
    walk(sched, rec, lanes=Lanes(cap, cap))
    assert rec.peak <= cap
    assert len(rec.started) == 12


def test_requeued_restore_runs_again_on_the_execute_lane() -> None:
    sched = make({"a#x": [], "b#y": ["a#x"]}, {"a#x": NodeKind.RESTORE})
    rec = Recorder(requeue={"a#x"})
    res = walk(sched, rec)
    assert rec.started == ["a#x", "a#x", "b#y"]
    assert res[tid("b#y")] is Result.OK


def test_interactive_runs_alone() -> None:
    sched = make({"a#x": [], "b#i": [], "c#y": [], "d#z": []}, {"b#i": NodeKind.INTERACTIVE})
    live: set[str] = set()
    seen_beside_interactive: list[set[str]] = []
    lock = threading.Lock()

    def run(ticket: Ticket) -> Done:
        name = str(ticket.id)
        with lock:
            live.add(name)
            if name == "b#i" or "b#i" in live:
                seen_beside_interactive.append(set(live))
        time.sleep(0.02)  # widen the window in which an overlap would show
        with lock:
            live.discard(name)
        return Done(Result.OK)

    run_schedule(
        sched,
        lanes=Lanes(4, 4),
        mode=ContinueMode.DEPS_OK,
        run_task=run,
        on_skip=lambda *_: None,
        on_not_run=lambda _: None,
        stopping=threading.Event(),
    )
    assert seen_beside_interactive == [{"b#i"}]


def test_a_stop_leaves_the_rest_not_run() -> None:
    stopping = threading.Event()
    sched = make(CHAIN)
    rec = Recorder()

    def run(ticket: Ticket) -> Done:
        stopping.set()
        rec.started.append(str(ticket.id))
        return Done(Result.ABORTED)

    res = run_schedule(
        sched,
        lanes=Lanes(1, 1),
        mode=ContinueMode.DEPS_OK,
        run_task=run,
        on_skip=rec.skip,
        on_not_run=lambda t: rec.not_run.append(str(t)),
        stopping=stopping,
    )
    assert rec.started == ["a#build"]
    assert res[tid("a#build")] is Result.ABORTED
    assert sorted(rec.not_run) == ["b#build", "c#build", "d#lint"]


LEAF_AND_CHAIN = {
    "a#lint": [],
    "b#build": [],
    "c#build": ["b#build"],
    "d#build": ["c#build"],
}


def prioritised(
    edges: dict[str, list[str]], costs: dict[str, float], kinds: dict[str, NodeKind] | None = None
) -> Schedule:
    """`make(edges)` with each node's critical path through `costs` as its priority."""
    from vx.graph.critical import longest_remaining

    base = make(edges, kinds)
    cost = {tid(k): v for k, v in costs.items()}
    return Schedule(
        base.order, base.deps, base.kind, longest_remaining(base.order, base.deps, cost)
    )


@pytest.mark.parametrize(
    ("costs", "expected"),
    [
        # the chain's head starts first, and its links before the leaf as they become ready
        (
            {"a#lint": 5, "b#build": 400, "c#build": 400, "d#build": 400},
            ["b#build", "c#build", "d#build", "a#lint"],
        ),
        # the leaf outweighs what remains of the chain once its head is done
        (
            {"a#lint": 500, "b#build": 400, "c#build": 200, "d#build": 200},
            ["b#build", "a#lint", "c#build", "d#build"],
        ),
        # the leaf outweighs the whole chain
        (
            {"a#lint": 5000, "b#build": 10, "c#build": 10, "d#build": 10},
            ["a#lint", "b#build", "c#build", "d#build"],
        ),
        # equal priorities keep the topological order
        ({"a#lint": 10, "b#build": 10}, ["a#lint", "b#build", "c#build", "d#build"]),
    ],
)
def test_a_free_worker_takes_the_ready_task_on_the_longest_path(costs, expected) -> None:
    rec = Recorder()
    walk(prioritised(LEAF_AND_CHAIN, costs), rec, lanes=Lanes(1, 2))
    assert rec.started == expected


def test_without_priorities_ready_tasks_start_in_graph_order() -> None:
    rec = Recorder()
    walk(make(LEAF_AND_CHAIN), rec, lanes=Lanes(1, 2))
    assert rec.started == ["a#lint", "b#build", "c#build", "d#build"]


def test_a_chain_behind_a_group_and_a_restore_still_ranks_its_head() -> None:
    edges = {
        "a#lint": [],
        "b#build": [],
        "b#all": ["b#build"],
        "c#gen": ["b#all"],
        "d#build": ["c#gen"],
    }
    kinds = {"b#all": NodeKind.GROUP, "c#gen": NodeKind.RESTORE}
    rec = Recorder()
    sched = prioritised(edges, {"a#lint": 50, "b#build": 10, "d#build": 100}, kinds)
    walk(sched, rec, lanes=Lanes(1, 1))
    # What follows b#build depends on which lane's worker answers first; the head does not.
    assert rec.started[0] == "b#build"
    assert rec.started.index("c#gen") < rec.started.index("d#build")


def test_priorities_never_start_a_task_before_its_dependencies() -> None:
    # A dependant's priority is never above its dependency's, but a hand-built one may be.
    base = make(CHAIN)
    upside_down = {
        tid("c#build"): 100.0,
        tid("b#build"): 50.0,
        tid("d#lint"): 10.0,
        tid("a#build"): 1.0,
    }
    rec = Recorder()
    walk(Schedule(base.order, base.deps, base.kind, upside_down), rec, lanes=Lanes(1, 1))
    assert rec.started == ["d#lint", "a#build", "b#build", "c#build"]
