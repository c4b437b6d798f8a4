"""A corpus of malformed lockfiles, the five formats vx reads, through `vx run` and `vx prune`.

Each format gets nesting 100 000 deep, bytes that are not UTF-8, UTF-16, an empty file, a
truncated one, binary noise and a well-formed file of the wrong shape. `vx run` keys every
task on the whole file when it cannot read it and runs; `vx prune`, which must rewrite the
file, refuses in one line naming it. No variant ever prints a Python stack.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import make_git_workspace, run_vx

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.faults

DEEP = 100_000
BUILD = {"tasks": {"build": {"exec": "echo built", "cache": {}}}}


def _js(lockfile: str) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "root", "private": True, "workspaces": ["packages/*"]}
    files: dict[str, Any] = {
        "package.json": root,
        "packages/a/package.json": {"name": "a", "version": "1.0.0"},
        "packages/a/vx.config.json": BUILD,
    }
    if lockfile == "pnpm-lock.yaml":
        del root["workspaces"]
        files["pnpm-workspace.yaml"] = "packages:\n  - 'packages/*'\n"
    return files


def _uv() -> dict[str, Any]:
    return {
        "pyproject.toml": (
            '[project]\nname = "root"\nversion = "0.1.0"\n\n'
            '[tool.uv.workspace]\nmembers = ["packages/*"]\n'
        ),
        "packages/a/pyproject.toml": '[project]\nname = "a"\nversion = "0.1.0"\n',
        "packages/a/vx.config.json": BUILD,
    }


def _nested(lockfile: str) -> bytes:
    if lockfile == "uv.lock":
        return ("version = 1\nx = " + "[" * DEEP + "]" * DEEP + "\n").encode()
    if lockfile in ("pnpm-lock.yaml", "yarn.lock"):
        return ("lockfileVersion: '9.0'\nx: " + "[" * DEEP + "]" * DEEP + "\n").encode()
    return ('{"lockfileVersion": 3, "packages": ' + "[" * DEEP + "]" * DEEP + "}").encode()


def _shaped(lockfile: str) -> bytes:
    """Well-formed, but not what the format holds."""
    if lockfile == "uv.lock":
        return b'version = 1\npackage = "none"\n'
    if lockfile in ("pnpm-lock.yaml", "yarn.lock"):
        return b"lockfileVersion: '9.0'\nimporters: 7\npackages:\n  - a\n"
    return json.dumps({"lockfileVersion": 3, "packages": {"": 7, "node_modules/x": []}}).encode()


def corpus() -> dict[str, tuple[str, bytes]]:
    out: dict[str, tuple[str, bytes]] = {}
    for lockfile in ("package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "uv.lock"):
        good = _shaped(lockfile)
        variants = {
            "nested": _nested(lockfile),
            "latin1": "# café\n".encode("latin-1") + good,
            "utf16": good.decode().encode("utf-16"),
            "empty": b"",
            "truncated": good[: len(good) // 2],
            "noise": bytes(range(256)) * 4,
            "shape": good,
        }
        for variant, data in variants.items():
            out[f"{lockfile}:{variant}"] = (lockfile, data)
    return out


CORPUS = corpus()


def verdict(
    verb: list[str], root: Path, home: Path, lockfile: str, *, must_run: bool
) -> str | None:
    r = run_vx(verb, root, home=home, timeout=60)
    if "Traceback" in r.out + r.err:
        return f"stack: {r.err[-300:]}"
    if must_run:
        return None if r.code == 0 else f"exit {r.code}: {r.err[-300:]}"
    if r.code == 0:
        return None
    lines = r.err.splitlines()
    if r.code != 1 or len(lines) != 1 or lockfile not in lines[0]:
        return f"exit {r.code}, {len(lines)} lines: {r.err[:300]}"
    return None


@pytest.mark.parametrize(
    "lockfile", ["package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "uv.lock"]
)
def test_malformed_lockfiles_run_and_prune_refuses_in_one_line(
    tmp_path: Path, lockfile: str
) -> None:
    files = _uv() if lockfile == "uv.lock" else _js(lockfile)
    root = make_git_workspace(tmp_path / "ws", files)
    wrong: dict[str, str] = {}
    names = [name for name, (file, _) in CORPUS.items() if file == lockfile]
    for name in names:
        (root / lockfile).write_bytes(CORPUS[name][1])
        for verb, must_run in ((["run", "build", "--all"], True), (["prune", "a"], False)):
            problem = verdict(verb, root, tmp_path / "home", lockfile, must_run=must_run)
            if problem:
                wrong[f"{name} ({verb[0]})"] = problem
    print(f"malformed {lockfile}: {len(names)} variants, 2 verbs each; wrong: {sorted(wrong)}")
    assert wrong == {}
