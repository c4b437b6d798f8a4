"""Shared fixtures: real git workspaces in tmp dirs, and vx run as a subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

REPO = Path(__file__).resolve().parent.parent
VX = REPO / "vx.py"
# A built vx (vx.pyz, the standalone binary) the end-to-end tests run instead of the checkout.
TEST_BINARY = os.environ.get("VX_TEST_BINARY", "")


def vx_argv() -> list[str]:
    """The command that runs vx: VX_TEST_BINARY when set, else this checkout's vx.py."""
    return [TEST_BINARY] if TEST_BINARY else [sys.executable, str(VX)]


GIT_ENV = {
    "GIT_AUTHOR_NAME": "vx tests",
    "GIT_AUTHOR_EMAIL": "tests@vx.invalid",
    "GIT_COMMITTER_NAME": "vx tests",
    "GIT_COMMITTER_EMAIL": "tests@vx.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def write_tree(root: Path, files: Mapping[str, Any]) -> None:
    """Write `files` under root: a str is text, a dict/list is JSON, None makes an empty dir."""
    for rel, content in files.items():
        path = root / rel
        if content is None:
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, (dict, list)):
            path.write_text(json.dumps(content, indent=2) + "\n")
        else:
            path.write_text(content)


def git(root: Path, *args: str) -> str:
    """Run git in root with a pinned identity; return stdout."""
    env = {**os.environ, **GIT_ENV, "HOME": str(root)}
    out = subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return out.stdout


def make_git_workspace(root: Path, files: Mapping[str, Any], *, commit: bool = True) -> Path:
    """Write the tree and make it a git repository with one commit."""
    root.mkdir(parents=True, exist_ok=True)
    write_tree(root, files)
    git(root, "init", "-q", "-b", "main")
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init", "--allow-empty")
    return root


@pytest.fixture
def workspace(tmp_path: Path) -> Callable[..., Path]:
    """`workspace({"package.json": {...}, ...})` → a committed git repo in a tmp dir."""

    def make(files: Mapping[str, Any], *, name: str = "ws", commit: bool = True) -> Path:
        return make_git_workspace(tmp_path / name, files, commit=commit)

    return make


@dataclass(frozen=True)
class VxResult:
    """What one `vx` subprocess did; `assert_ok()` dumps everything on failure."""

    cmd: tuple[str, ...]
    cwd: Path
    code: int
    out: str
    err: str

    def __repr__(self) -> str:
        return (
            f"$ vx {' '.join(self.cmd)}  (in {self.cwd})\n"
            f"exit {self.code}\n--- stdout ---\n{self.out}--- stderr ---\n{self.err}"
        )

    def assert_ok(self) -> VxResult:
        assert self.code == 0, repr(self)
        return self

    def assert_code(self, code: int) -> VxResult:
        assert self.code == code, repr(self)
        return self

    def json(self) -> Any:
        return json.loads(self.out)


_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean, colourless, non-CI environment, as a user's shell off a terminal."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("VX_", "GITHUB_", "FORCE_COLOR", "NO_COLOR", "CI"))
        # a proxy the machine's shell names would stand between vx and the tests' servers
        and k.lower() not in _PROXY_VARIABLES
        # every vx the suite starts compiles ~190 modules again without its bytecode cache
        and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(GIT_ENV)
    if extra:
        env.update(extra)
    return env


def run_vx(
    args: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    timeout: float = 120,
    home: Path | None = None,
) -> VxResult:
    """Run `python vx.py ARGS` (or VX_TEST_BINARY) in cwd, as a user would run `vx ARGS`.

    `home` is the user's home for this run: the default cache store lives under it, so each
    test gets a store of its own.
    """
    full = base_env(env)
    if home is not None and "HOME" not in (env or {}):
        full["HOME"] = str(home)
    proc = subprocess.run(
        [*vx_argv(), *args],
        cwd=cwd,
        env=full,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return VxResult(tuple(args), cwd, proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def vx(tmp_path: Path) -> Callable[..., VxResult]:
    """The `run_vx` helper as a fixture, with a home (and so a cache store) per test."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)

    def run(args: Sequence[str], cwd: Path, **kw: Any) -> VxResult:
        kw.setdefault("home", home)
        return run_vx(args, cwd, **kw)

    return run


_DURATION = r"(\d+h \d+m|\d+m \d+s|\d+(\.\d+)?(ms|s))\b"
_REDACTIONS = (
    (re.compile(r"\b[0-9a-f]{32}\b"), "[TOKEN]"),
    (re.compile(r"\b[0-9a-f]{16}\b"), "[HASH]"),
    (re.compile(r"(?<=• )[0-9a-f]{8}\b"), "[HASH]"),
    (re.compile(r"^( \S+ ) *(?=" + _DURATION + ")", re.MULTILINE), r"\1"),
    (re.compile(r"\b" + _DURATION), "[DURATION]"),
)


def redact(text: str, tmp: Path | None = None) -> str:
    """Replace tmp paths, keys and durations so whole outputs compare stably.

    A row's time cell is right-aligned, so its padding goes with the duration it aligned
    (` ⏺︎     3ms success` reads ` ⏺︎ [DURATION] success`); a GitHub Actions stop token
    (32 hex) reads `[TOKEN]`, and a hit's short key in a frame header `[HASH]`.
    """
    if tmp is not None:
        text = text.replace(str(tmp.resolve()), "[TMP]").replace(str(tmp), "[TMP]")
    for pattern, repl in _REDACTIONS:
        text = pattern.sub(repl, text)
    return text


@pytest.fixture(scope="session")
def built_pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`build/pyz.py`'s vx.pyz, built once per test process; tests copy it, never change it."""
    out = tmp_path_factory.mktemp("pyz") / "vx.pyz"
    subprocess.run(
        [sys.executable, str(REPO / "build" / "pyz.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out
