"""`vx lock`, `vx lock --check` and `vx run --frozen`: the round trip, drift the audit finds
(a changed file, and a `.py` config that evaluates differently in another environment), the
secret refusal, and each refusal of a frozen run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
from tests.conftest import git

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.conftest import VxResult

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
LOCK_SCHEMA = json.loads((SCHEMAS / "lock.json").read_text())
LOCKFILE_SCHEMA = json.loads((SCHEMAS / "vx-lock.json").read_text())

PY_CONFIG = """\
import os

config = {
    "tasks": {
        "build": {
            "dependsOn": ["^build"],
            "exec": "echo built-" + os.environ.get("FLAVOUR", "plain") + " > out.txt",
            "cache": {"outputs": {"files": ["out.txt"]}},
        }
    }
}
"""

REPO: dict[str, Any] = {
    "package.json": {"name": "r", "private": True, "workspaces": ["packages/*"]},
    "packages/app/package.json": {"name": "app", "dependencies": {"lib": "*"}},
    "packages/app/vx.config.json": {
        "tasks": {"build": {"dependsOn": ["^build"], "exec": "echo app > out.txt"}}
    },
    "packages/lib/package.json": {"name": "lib"},
    "packages/lib/vx.config.py": PY_CONFIG,
    "packages/docs/package.json": {"name": "docs"},
}


def _audit(vx: Callable[..., VxResult], root: Path, **kw: Any) -> tuple[VxResult, Any]:
    result = vx(["lock", "--check", "--format", "json"], root, **kw)
    doc = result.json()
    jsonschema.validate(doc, LOCK_SCHEMA)
    return result, doc


def test_lock_round_trip_and_frozen_run(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(REPO)
    written = vx(["lock"], root).assert_ok()
    assert written.out == (
        "locked 2 project configs → vx-lock.json"
        " (1 project has no vx.config; its tasks are never frozen)\n"
    )
    lock = json.loads((root / "vx-lock.json").read_text())
    jsonschema.validate(lock, LOCKFILE_SCHEMA)
    assert lock["version"] == 1
    assert sorted(lock["projects"]) == ["app", "lib"]
    lib = lock["projects"]["lib"]
    assert lib["config"] == "packages/lib/vx.config.py"
    assert lib["hash"].startswith("sha256:")
    assert lib["resolved"]["tasks"]["build"]["exec"] == "echo built-plain > out.txt"
    checked = vx(["lock", "--check"], root).assert_ok()
    assert checked.out == (
        "vx-lock.json is up to date: 2 project configs audited"
        " (1 project has no vx.config; its tasks are never frozen)\n"
    )
    result, doc = _audit(vx, root)
    result.assert_ok()
    assert doc == {
        "upToDate": True,
        "audited": ["app", "lib"],
        "notAudited": ["docs"],
        "problems": [],
    }
    git(root, "add", "-A")
    git(root, "commit", "-qm", "lock")
    # --frozen runs the locked value even where the environment would evaluate another
    vx(["run", "build", "--all", "--frozen"], root, env={"FLAVOUR": "spicy"}).assert_ok()
    assert (root / "packages/lib/out.txt").read_text() == "built-plain\n"
    again = vx(["run", "build", "--all", "--frozen"], root).assert_ok()
    assert "1 no-cache · all cached" in again.out  # lib#build hit the entry the frozen run saved


def test_check_finds_a_changed_file_and_an_evaluation_that_drifted(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(REPO)
    vx(["lock"], root).assert_ok()
    # same bytes, another environment: only re-evaluation sees it
    result, doc = _audit(vx, root, env={"FLAVOUR": "spicy"})
    result.assert_code(1)
    assert doc["upToDate"] is False
    assert doc["problems"] == [
        {
            "project": "lib",
            "kind": "drift",
            "message": "lib: packages/lib/vx.config.py now evaluates differently at"
            " tasks.build.exec",
        }
    ]
    config = root / "packages/app/vx.config.json"
    config.write_text(config.read_text().replace("echo app", "echo app2"))
    pretty = vx(["lock", "--check"], root).assert_code(1)
    assert pretty.out == ""
    assert pretty.err == (
        "app: packages/app/vx.config.json changed since the lock\n"
        "app: packages/app/vx.config.json now evaluates differently at tasks.build.exec\n"
        "vx lock --check: 2 problems — run vx lock to write the lock again\n"
    )
    (root / "packages/docs/vx.config.json").write_text('{"tasks": {}}')
    _, doc = _audit(vx, root)
    assert {"project": "docs", "kind": "not-locked", "message": "docs: packages/docs/vx.config.json is not in the lock"} in doc["problems"]  # fmt: skip
    vx(["lock"], root).assert_ok()
    vx(["lock", "--check"], root).assert_ok()


def test_check_without_a_lock_is_a_problem(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(REPO)
    result, doc = _audit(vx, root)
    result.assert_code(1)
    assert [p["kind"] for p in doc["problems"]] == ["missing-lock"]
    assert "run vx lock" in vx(["lock", "--check"], root).assert_code(1).err


def test_lock_refuses_to_hold_a_secret(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    secretive = PY_CONFIG.replace(
        '"plain")', '"plain") + " --token " + os.environ.get("API_TOKEN", "")'
    )
    root = workspace({**REPO, "packages/lib/vx.config.py": secretive})
    result = vx(["lock"], root, env={"API_TOKEN": "s3cr3t-value"}).assert_code(1)
    assert "lib: tasks.build.exec holds $API_TOKEN" in result.err
    assert "s3cr3t-value" not in result.err
    assert not (root / "vx-lock.json").exists()


def test_frozen_refusals(workspace: Callable[..., Path], vx: Callable[..., VxResult]) -> None:
    root = workspace(REPO)
    none = vx(["run", "build", "--all", "--frozen"], root).assert_code(1)
    assert none.err == (f"vx run --frozen: no vx-lock.json at {root} — run vx lock and commit it\n")
    vx(["lock"], root).assert_ok()
    (root / "packages/docs/vx.config.json").write_text('{"tasks": {"build": {"exec": "true"}}}')
    absent = vx(["run", "build", "--all", "--frozen"], root).assert_code(1)
    assert absent.err == (
        "packages/docs/vx.config.json: is not in vx-lock.json — run vx lock and commit it\n"
    )
    (root / "packages/docs/vx.config.json").unlink()
    (root / "packages/app/vx.config.json").unlink()
    gone = vx(["run", "build", "--all", "--frozen"], root).assert_code(1)
    assert gone.err == (
        "vx-lock.json: locks app's packages/app/vx.config.json, which is gone — run vx lock\n"
    )


def test_format_json_goes_with_check(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(REPO)
    result = vx(["lock", "--format", "json"], root).assert_code(1)
    assert json.loads(result.out)["error"]["code"] == "VX_E_USAGE"
    assert not (root / "vx-lock.json").exists()


def test_a_plain_run_ignores_the_lock(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(REPO)
    vx(["lock"], root).assert_ok()
    vx(["run", "build", "--all"], root, env={"FLAVOUR": "spicy"}).assert_ok()
    assert (root / "packages/lib/out.txt").read_text() == "built-spicy\n"


def test_a_bad_lock_entry_is_blamed_on_the_lock(
    workspace: Callable[..., Path], vx: Callable[..., VxResult]
) -> None:
    root = workspace(REPO)
    vx(["lock"], root).assert_ok()
    lock = root / "vx-lock.json"
    doc = json.loads(lock.read_text())
    doc["projects"]["app"]["resolved"]["tasks"]["build"]["exec"] = 5
    lock.write_text(json.dumps(doc))
    bad = vx(["run", "build", "--all", "--frozen"], root).assert_code(1)
    assert bad.err.startswith("vx-lock.json: projects.app.resolved.tasks.build.exec: ")
    assert bad.err.endswith(" — run vx lock\n")
    assert "vx.config.json" not in bad.err
    del doc["projects"]["app"]["resolved"]
    lock.write_text(json.dumps(doc))
    missing = vx(["run", "build", "--all", "--frozen"], root).assert_code(1)
    assert missing.err == (
        "vx-lock.json: projects.app.resolved: expected an object — run vx lock\n"
    )
