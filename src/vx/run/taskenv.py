"""A task's environment: what it sees, which of those values are secrets, and masking them."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.util.record import Record
from vx.util.secrets import maskable, secret_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from vx.workspace.model import ExecSpec

# Where trust and proxies are configured: a machine behind a corporate CA or proxy reaches no
# registry without them, and they never change what a build produces, so every task sees them
# and no key reads them. Each comes in both cases, as curl, pip, uv and Node read either.
NETWORK = tuple(
    spelling
    for name in (
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
    )
    for spelling in (name, name.lower())
)
BASELINE = (
    "PATH",
    "HOME",
    "USER",
    "SHELL",
    "TERM",
    "LANG",
    "LC_*",
    "TMPDIR",
    "TZ",
    "CI",
    *NETWORK,
)
MASK = "***"
RUN_WORKSPACE = "VX_RUN_WORKSPACE"
RUN_TASK = "VX_RUN_TASK"
_PROXY_PASSWORD = re.compile(r"//[^/@:\s]*:([^/@\s]+)@")


class TaskEnv(Record):
    """The exact environment a task process gets, and the values its logs must never show."""

    env: Mapping[str, str]
    secrets: tuple[str, ...]


def task_env(
    *,
    base: Mapping[str, str],
    exec_spec: ExecSpec,
    inputs_env: Iterable[str] = (),
    project_dir: Path,
    root: Path,
    task_id: str,
    workspace_pass_through: Iterable[str] = (),
    handed: Mapping[str, str] | None = None,
) -> TaskEnv:
    """Build a task's environment from base (vx's own) and what the task declares.

    Only named variables pass: the baseline, the workspace's and the task's `passThrough`,
    `secret` and the cache's declared `inputs.env` (a trailing `*` matches a prefix), then
    `define` on top. A task cannot see what it does not declare, so its cache key cannot
    silently depend on it. `handed` is what a telemetry plugin gives this one execution (the
    trace context): set last, and, like vx's own variables, read by no key.
    """
    spec = exec_spec.env
    env = _received(base, received_patterns(exec_spec, inputs_env, workspace_pass_through))
    env.update(spec.define)
    if handed:
        env.update(handed)
    env["PATH"] = _prefixed_path(env.get("PATH", os.defpath), project_dir, root)
    env[RUN_WORKSPACE] = str(root)
    env[RUN_TASK] = task_id
    if "FORCE_COLOR" not in env and not env.get("NO_COLOR"):
        env["FORCE_COLOR"] = "1"
    named = _select(env, spec.secret)
    secrets = {value for name, value in env.items() if name in named or _looks_secret(name)}
    # A proxy URL may carry a password (`http://user:pw@proxy:3128`): a log must not show it.
    secrets.update(
        found.group(1)
        for name in NETWORK
        if "PROXY" in name.upper() and (found := _PROXY_PASSWORD.search(env.get(name, "")))
    )
    return TaskEnv(MappingProxyType(env), _maskable(secrets))


def received_patterns(
    exec_spec: ExecSpec, inputs_env: Iterable[str] = (), workspace_pass_through: Iterable[str] = ()
) -> tuple[tuple[str, ...], ...]:
    """The name patterns a task's environment takes from vx's, in the order they apply."""
    spec = exec_spec.env
    return (
        BASELINE,
        tuple(workspace_pass_through),
        spec.pass_through,
        spec.secret,
        tuple(inputs_env),
    )


def own_names(exec_spec: ExecSpec, inputs_env: Iterable[str] = ()) -> tuple[str, ...]:
    """What one task's environment takes beyond the baseline and the workspace's passThrough:
    its passThrough, secret and inputs.env patterns, then its `define` names, deduplicated."""
    _, _, *own = received_patterns(exec_spec, inputs_env)
    names = [n for patterns in own for n in patterns]
    return tuple(dict.fromkeys([*names, *exec_spec.env.define]))


SET_BY_VX = (RUN_WORKSPACE, RUN_TASK, "FORCE_COLOR")


def nested_run_refusal(env: Mapping[str, str], workspace_root: Path) -> str | None:
    """Why a `vx run` started by a task of this same workspace must not run, else None.

    The inner run is invisible to the outer graph, and one that reaches the task that started
    it forks without bound.
    """
    outer = env.get(RUN_WORKSPACE)
    if not outer:
        return None
    if outer != str(workspace_root) and Path(outer).resolve() != workspace_root.resolve():
        return None
    task = env.get(RUN_TASK) or "?"
    return (
        f"vx run: refusing a nested run: this vx was started by task {task} of the same"
        " workspace; declare the work as a dependsOn edge instead"
    )


def mask(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret value in text (the longest first) with `***`."""
    pattern = _pattern(_maskable(secrets))
    return pattern.sub(MASK, text) if pattern else text


class StreamMasker:
    """Masks one stream's output chunk by chunk, as `mask` would mask the whole of it.

    A secret may arrive cut across two chunks, so the end of a chunk that could still begin a
    secret is held back until the next chunk or `flush()`. Nothing is held when no secret could
    start there, so output rarely waits.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self._values = _maskable(secrets)
        self._pattern = _pattern(self._values)
        self._longest = max((len(v) for v in self._values), default=0)
        self._initials = {v[0] for v in self._values}
        self._held = ""

    def feed(self, text: str) -> str:
        """The masked text that is safe to show now."""
        if self._pattern is None:
            return text
        buf = self._held + text
        unsure = self._unsure_positions(buf)
        out: list[str] = []
        i = 0
        while True:
            hold = next((j for j in unsure if j >= i), None)
            match = self._pattern.search(buf, i)
            if hold is not None and (match is None or hold <= match.start()):
                out.append(buf[i:hold])
                self._held = buf[hold:]
                return "".join(out)
            if match is None:
                out.append(buf[i:])
                self._held = ""
                return "".join(out)
            out.append(buf[i : match.start()])
            out.append(MASK)
            i = match.end()

    def flush(self) -> str:
        """What was held back, masked: call it when the stream ends."""
        held, self._held = self._held, ""
        return self._pattern.sub(MASK, held) if self._pattern else held

    def _unsure_positions(self, buf: str) -> list[int]:
        """Where what follows in buf is a strict prefix of a secret: the next chunk decides."""
        start = max(0, len(buf) - self._longest + 1)
        return [
            j
            for j in range(start, len(buf))
            if buf[j] in self._initials
            and any(len(v) > len(buf) - j and v.startswith(buf[j:]) for v in self._values)
        ]


def _received(source: Mapping[str, str], groups: tuple[tuple[str, ...], ...]) -> dict[str, str]:
    """What `source` gives a task, in one pass over it (a task's spawn pays for this, and
    `os.environ` decodes each name it yields): ordered as one `update` per group in turn would
    order it, by the first group taking a name, then by `source`'s order."""
    matchers = [_matcher(patterns) for patterns in groups if patterns]
    taken: list[list[tuple[str, str]]] = [[] for _ in matchers]
    for name, value in source.items():
        for (exact, prefixes), bucket in zip(matchers, taken, strict=True):
            if name in exact or (prefixes and name.startswith(prefixes)):
                bucket.append((name, value))
                break
    return {name: value for bucket in taken for name, value in bucket}


def _select(source: Mapping[str, str], patterns: tuple[str, ...]) -> dict[str, str]:
    exact, prefixes = _matcher(patterns)
    return {
        name: value
        for name, value in source.items()
        if name in exact or (prefixes and name.startswith(prefixes))
    }


@functools.cache
def _matcher(patterns: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The exact names and the prefixes (a pattern's trailing `*` dropped) of `patterns`; a
    run's tasks share a few pattern lists, so each is split once."""
    exact = set()
    prefixes = []
    for pattern in patterns:
        if pattern.endswith("*"):
            prefixes.append(pattern[:-1])
        else:
            exact.add(pattern)
    return frozenset(exact), tuple(prefixes)


@functools.cache
def _looks_secret(name: str) -> bool:
    """`secret_name`, asked once per name a run's tasks see rather than once per task."""
    return secret_name(name)


def _prefixed_path(path: str, project_dir: Path, root: Path) -> str:
    """Local tool dirs first, as `npm run` and an activated venv would put them."""
    prefix: list[str] = []
    for candidate in (
        project_dir / "node_modules/.bin",
        root / "node_modules/.bin",
        root / ".venv/bin",
    ):
        entry = str(candidate)
        if entry not in prefix and candidate.is_dir():
            prefix.append(entry)
    rest = [p for p in path.split(os.pathsep) if p not in prefix] if path else []
    return os.pathsep.join([*prefix, *rest])


def _maskable(values: Iterable[str]) -> tuple[str, ...]:
    """Long enough to mask without eating ordinary words, deduplicated, longest first."""
    return tuple(sorted({v for v in values if maskable(v)}, key=lambda v: (-len(v), v)))


def _pattern(values: tuple[str, ...]) -> re.Pattern[str] | None:
    # Alternatives are tried in order, so longest-first makes the longest secret win at a spot.
    return re.compile("|".join(map(re.escape, values))) if values else None
