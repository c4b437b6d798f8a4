"""The public API: `vx.plan_run` and `vx.run` from a script, as docs/api.md shows them."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.conftest import REPO, base_env
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

CACHED = {
    "exec": "mkdir -p dist && cp src/index.txt dist/out.txt",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}

SCRIPT = """
import json, sys
import vx
loaded_early = "vx.run.prepare" in sys.modules
opts = vx.RunOptions(tasks=("build",), all=True, cwd=sys.argv[1], concurrency=1)
plan = vx.plan_run(opts)
events = []
first = vx.run(opts, lambda e: events.append(type(e).__name__))
second = vx.run(opts)
print(json.dumps({
    "loaded_early": loaded_early,
    "order": [str(t) for t in plan.order],
    "keys": sorted(plan.keys.keys[t] for t in plan.order),
    "first": [[str(f.id), str(f.status), str(f.cache), f.key] for f in first.finished],
    "second": sorted(str(f.cache) for f in second.finished),
    "codes": [first.exit_code, second.exit_code],
    "events": sorted(set(events)),
}))
"""


def test_plan_then_run_from_python(workspace, tmp_path: Path) -> None:
    ws = workspace(tree({"a": ((), {"build": CACHED}), "b": (("a",), {"build": CACHED})}))
    env = {**base_env(), "HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ws)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["loaded_early"] is False
    assert doc["order"] == ["a#build", "b#build"]
    assert doc["codes"] == [0, 0]
    assert [row[:3] for row in doc["first"]] == [
        ["a#build", "success", "miss"],
        ["b#build", "success", "miss"],
    ]
    assert sorted(row[3] for row in doc["first"]) == doc["keys"]
    assert doc["second"] == ["up-to-date", "up-to-date"]
    assert {"RunStarted", "TaskStarted", "TaskFinished", "RunFinished"} <= set(doc["events"])
    assert (ws / "packages/b/dist/out.txt").read_text() == "b\n"
