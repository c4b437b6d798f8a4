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


def docs_example(heading: str) -> str:
    """The first Python block under `heading` in docs/api.md, as a reader would copy it."""
    text = (REPO / "docs/api.md").read_text()
    section = text.split(f"## {heading}\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_plan_example_of_the_docs_runs(workspace, tmp_path: Path) -> None:
    ws = workspace(tree({"a": ((), {"build": CACHED}), "b": (("a",), {"build": CACHED})}))
    env = {**base_env(), "HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO / "src")}

    def example() -> list[str]:
        proc = subprocess.run(
            [sys.executable, "-c", docs_example("What a plan predicts")],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    before = example()
    assert [line.split()[:2] for line in before] == [
        ["a#build", "miss"],
        ["b#build", "miss"],
        ["wall", "0ms,"],
    ]
    assert before[2] == "wall 0ms, 2 without history"
    subprocess.run(
        [sys.executable, str(REPO / "vx.py"), "run", "build", "--all"],
        cwd=ws,
        env=env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    after = example()
    assert [line.split()[1] for line in after[:2]] == ["hit-local", "hit-local"]
    assert all("~" in line for line in after[:2])  # history: each build's p50
    assert after[2] == "wall 0ms, 0 without history"  # hits cost nothing
