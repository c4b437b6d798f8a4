"""Restores shared with forked children: every item settled once, a child that dies or is
stopped costs nothing but time, and a stop lands between restores. Each scenario forks in a
child Python of its own: pytest's workers run threads, and a process with threads must not fork."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[3] / "src"
HANG_LIMIT_S = 60  # only there so a broken build fails instead of hanging

# Each item is "restored" by writing `<out>/<i>` holding the pid that wrote it.
SCENARIO = """
import json, os, signal, sys, threading, time
from pathlib import Path
from vx.run.caching import RestoreResult
from vx.run.shares import settle_shared, share_count

scenario, out = sys.argv[1], Path(sys.argv[2])
items = list(range(20))
seen = {"here": 0, "there": 0}

def mark(i):
    (out / str(i)).write_text(str(os.getpid()))
    return RestoreResult.RESTORED

def here(i):
    seen["here"] += 1
    if scenario == "interrupted" and seen["here"] == 2:
        raise KeyboardInterrupt
    if scenario == "held" and seen["here"] == 2:
        os.kill(os.getpid(), signal.SIGINT)  # lands only once this restore is done
        time.sleep(0.05)
    return mark(i)

def there(i):
    seen["there"] += 1
    if scenario == "child-killed" and seen["there"] == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    if scenario == "child-fails" and seen["there"] == 3:
        raise RuntimeError("a fault in the child")
    if scenario == "corrupt" and i == 5:
        return RestoreResult.CORRUPT
    if scenario == "interrupted":
        time.sleep(0.02)
    return mark(i)

report = {"parent": os.getpid()}
try:
    results = settle_shared(here, there, items, 2)
    report["results"] = {str(i): r.value for i, r in sorted(results.items())}
except KeyboardInterrupt:
    report["interrupted"] = True
try:
    os.waitpid(-1, os.WNOHANG)
    report["children_left"] = True
except ChildProcessError:
    report["children_left"] = False
report["written"] = {p.name: int(p.read_text()) for p in out.iterdir()}
report["here_calls"] = seen["here"]
print(json.dumps(report))
"""

COUNTS = """
import json, sys, threading
from vx.run.shares import share_count
alone = [share_count(100, 2), share_count(15, 8), share_count(1000, 16), share_count(100, 1)]
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
with_thread = share_count(100, 2)
stop.set()
thread.join()
print(json.dumps({"alone": alone, "with_thread": with_thread}))
"""


def run(script: str, *args: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=SRC,  # not the checkout, whose vx.py would shadow the package
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=HANG_LIMIT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)
    return report


def scenario(name: str, tmp_path: Path) -> dict[str, object]:
    return run(SCENARIO, name, str(tmp_path))


pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="children are forked on Linux")


def test_every_item_is_settled_once_half_of_them_by_a_child(tmp_path: Path) -> None:
    report = scenario("plain", tmp_path)
    assert report["results"] == {str(i): "restored" for i in range(20)}
    written = report["written"]
    assert isinstance(written, dict)
    parent = report["parent"]
    assert {i for i, pid in written.items() if pid == parent} == {str(i) for i in range(0, 20, 2)}
    children = {pid for pid in written.values() if pid != parent}
    assert len(children) == 1
    assert report["children_left"] is False


@pytest.mark.parametrize("fault", ["child-killed", "child-fails"])
def test_what_a_child_did_not_report_the_parent_settles(tmp_path: Path, fault: str) -> None:
    report = scenario(fault, tmp_path)
    assert report["results"] == {str(i): "restored" for i in range(20)}
    written = report["written"]
    assert isinstance(written, dict)
    by_child = sorted(int(i) for i, pid in written.items() if pid != report["parent"])
    assert by_child == [1, 3]  # its third item and after were left to the parent
    assert report["here_calls"] == 10 + 8
    assert report["children_left"] is False


def test_a_bad_entry_a_child_meets_is_reported_not_retried(tmp_path: Path) -> None:
    report = scenario("corrupt", tmp_path)
    results = report["results"]
    assert isinstance(results, dict)
    assert results.pop("5") == "corrupt"
    assert set(results.values()) == {"restored"}
    assert report["here_calls"] == 10


def test_an_interrupted_parent_stops_its_child_and_waits_for_it(tmp_path: Path) -> None:
    report = scenario("interrupted", tmp_path)
    assert report["interrupted"] is True
    assert report["children_left"] is False
    written = report["written"]
    assert isinstance(written, dict)
    by_child = [i for i, pid in written.items() if pid != report["parent"]]
    assert len(by_child) < 10  # stopped before the end of its share


def test_a_stop_during_a_restore_lands_after_it(tmp_path: Path) -> None:
    report = scenario("held", tmp_path)
    assert report["interrupted"] is True
    written = report["written"]
    assert isinstance(written, dict)
    mine = sorted(int(i) for i, pid in written.items() if pid == report["parent"])
    assert mine == [0, 2]  # the restore the signal arrived in finished; the next never began
    assert report["children_left"] is False


def test_children_are_forked_only_with_items_cores_and_one_thread() -> None:
    report = run(COUNTS)
    assert report == {"alone": [2, 1, 4, 1], "with_thread": 1}
