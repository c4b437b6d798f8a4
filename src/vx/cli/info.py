"""`vx info`: one screen of facts for a bug report, or the same facts as one JSON document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vx.cli.parser import Command, Section
from vx.cli.settings import CACHE_DIR_FLAG, FORMAT_FLAG, InfoSettings, OutputFormat, output_format

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.history.info import CacheFacts, Info

COMMAND = Command(
    "info",
    flags=(FORMAT_FLAG, CACHE_DIR_FLAG),
    sections=(
        Section(
            "Notes",
            (
                ("", "a config that does not load is counted and named, not fatal"),
                ("", "paths under your home print as ~/…; the JSON keeps them absolute"),
            ),
        ),
        Section("Examples", (("vx info", ""), ("vx info --format json", ""))),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> InfoSettings:
    return InfoSettings(output_format(args), args.text("cache-dir"), cwd, env)


def execute(settings: InfoSettings, streams: Streams) -> int:
    """Gather the facts once and print them as rows or as JSON."""
    from vx.history.info import gather

    info = _with_plugins(gather(settings.cwd, env=settings.env, flag=settings.cache_dir))
    if settings.format is OutputFormat.JSON:
        doc = document(info, path=settings.env.get("PATH"), tracer=_tracer(settings.env))
        streams.out.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        home = settings.env.get("HOME")
        path = settings.env.get("PATH")
        home_dir = Path(home) if home else None
        streams.out.write(text(info, home=home_dir, path=path, tracer=_tracer(settings.env)))
    return 0


def _tracer(env: Mapping[str, str]) -> str:
    """`VX_TRACER`: which tracer `--audit` may use (see docs/caching.md § what vx sees)."""
    return env.get("VX_TRACER", "auto")


def _with_plugins(info: Info) -> Info:
    """The declared plugins loaded, each with the seams it fills; one that does not load is a
    config error row, as a run would stop on it, and keeps its declared name."""
    if not info.plugins:
        return info
    import dataclasses

    from vx.cli import verbs
    from vx.errors import UserError
    from vx.plugins.load import workspace_plugins

    try:
        loaded = workspace_plugins(info.root, reserved=verbs.names())
    except UserError as err:
        where, _, message = err.message.partition(": ")
        return dataclasses.replace(info, config_errors=(*info.config_errors, (where, message)))
    return dataclasses.replace(info, plugins=tuple((p.name, p.seams) for p in loaded))


def document(info: Info, *, path: str | None = None, tracer: str = "auto") -> dict[str, Any]:
    """The JSON `schemas/info.json` describes; `path` is the PATH the tools are probed on,
    `tracer` the `VX_TRACER` choice."""
    from vx.cache.index import SCHEMA_VERSION
    from vx.cache.key import KEY_FORMAT_VERSION

    cache = info.cache
    mem = info.memory
    return {
        "vx": info.vx,
        "python": info.python,
        "git": info.git,
        "gitStatusCache": None
        if info.fsmonitor is None or info.untracked_cache is None
        else {"fsmonitor": info.fsmonitor, "untrackedCache": info.untracked_cache},
        "workspaceRoot": str(info.root),
        "projects": info.projects,
        "tasks": info.tasks,
        "configErrors": [{"path": p, "message": m} for p, m in info.config_errors],
        "plugins": [{"name": name, "seams": list(seams)} for name, seams in info.plugins],
        "workers": {
            "count": info.workers.count,
            "source": info.workers.source,
            "cores": info.workers.cores,
            "cpuQuota": info.workers.cpu_quota,
        },
        "memory": None
        if mem is None
        else {
            "usableBytes": mem.usable,
            "totalBytes": mem.total,
            "cgroupLimitBytes": mem.cgroup_limit,
        },
        "cacheDir": str(cache.directory) if cache else None,
        "cacheStore": str(cache.store) if cache and cache.store else None,
        "cacheVersion": KEY_FORMAT_VERSION,
        "schemaVersion": SCHEMA_VERSION,
        "cacheEntries": cache.entries if cache else 0,
        "cacheBytes": cache.bytes if cache else 0,
        "cacheRetention": _retention(cache),
        "orphans": {
            "artifacts": cache.orphans if cache else 0,
            "bytes": cache.orphan_bytes if cache else 0,
        },
        "runs24h": info.history.runs,
        "hits24h": info.history.hits,
        "restored24h": info.history.restored,
        "emptyOutputs": list(info.history.empty_outputs),
        "flakyTasks": [
            {
                "taskId": f.task_id,
                "project": f.project,
                "task": f.task,
                "keys": f.keys,
                "passes": f.passes,
                "failures": f.failures,
            }
            for f in info.history.flaky
        ],
        **_probes(info, path, tracer),
    }


def _probes(info: Info, path: str | None, tracer: str) -> dict[str, Any]:
    """Whether a task can be traced (`--audit`) and sandboxed (`exec.sandbox`) on this host."""
    from vx.trace.probe import sandbox_available, tracing_available

    tracing = tracing_available(path, tracer)
    sandbox = sandbox_available(path)
    return {
        "tracing": {
            "available": tracing.ok,
            "reason": tracing.reason or None,
            "tracer": tracing.tracer or None,
        },
        "sandbox": {
            "available": sandbox.ok,
            "reason": sandbox.reason or None,
            "declared": info.sandboxed,
        },
    }


_TRACERS = {"seccomp": "seccomp notification", "strace": "strace"}


def _probe_rows(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    tracing, sandbox = doc["tracing"], doc["sandbox"]
    n = sandbox["declared"]
    declare = f"{n} task{'s' if n != 1 else ''} declare{'s' if n == 1 else ''} exec.sandbox"
    if sandbox["available"]:
        sandbox_text = f"available ({declare})"
    else:
        sandbox_text = f"unavailable — {sandbox['reason']}"
        if n:
            sandbox_text += f"; {declare} and will fail"
    tracing_text = "available" if tracing["available"] else f"unavailable — {tracing['reason']}"
    if tracing["available"]:
        tracing_text += f" ({_TRACERS[tracing['tracer']]}; vx run --audit)"
    return [("tracing", tracing_text), ("sandbox", sandbox_text)]


def _retention(cache: CacheFacts | None) -> dict[str, Any] | None:
    if cache is None or (cache.older_than is None and cache.max_size is None):
        return None
    out: dict[str, Any] = {}
    if cache.older_than is not None:
        out["olderThan"] = cache.older_than
    if cache.max_size is not None:
        out["maxSize"] = cache.max_size
        out["maxBytes"] = cache.max_bytes
    return out


def text(info: Info, *, home: Path | None, path: str | None = None, tracer: str = "auto") -> str:
    """The rows, labels padded to one column."""
    from vx.util.units import format_bytes as size

    doc = document(info, path=path, tracer=tracer)
    rows: list[tuple[str, str]] = [
        ("vx", info.vx),
        ("python", info.python),
        ("git", info.git or "(not found)"),
        ("git status cache", _status_cache(info)),
        ("workspace root", _short(info.root, home)),
        ("projects", _projects(info)),
    ]
    rows += [("config errors", f"{path}: {message}") for path, message in info.config_errors]
    plugins = "; ".join(f"{n} ({', '.join(s)})" if s else n for n, s in info.plugins)
    rows.append(("plugins", f"{len(info.plugins)} — {plugins}" if plugins else "none"))
    rows.append(("workers", _workers(info)))
    if info.memory is not None:
        mem = info.memory
        rows.append(
            (
                "memory",
                f"{size(mem.usable)} usable — cgroup limit; the machine has {size(mem.total)}"
                if mem.cgroup_limit is not None
                else f"{size(mem.total)} — the machine's total",
            )
        )
    cache = info.cache
    if cache is not None:
        rows.append(("cache dir", _short(cache.directory, home)))
        rows.append(
            (
                "cache store",
                _short(cache.store, home)
                if cache.store
                else "none: the cache dir holds the entries",
            )
        )
        rows.append(
            ("cache versions", f"keys {doc['cacheVersion']} · index schema v{doc['schemaVersion']}")
        )
        held = f"{cache.entries} ({size(cache.bytes)}"
        if cache.max_bytes:
            held += f" of {size(cache.max_bytes)}, {round(100 * cache.bytes / cache.max_bytes)}%"
        rows.append(("cache entries", held + ")"))
        if cache.older_than or cache.max_size:
            rows.append(("cache retention", _retention_text(cache)))
        if cache.orphans:
            noun = "artifact" if cache.orphans == 1 else "artifacts"
            reap = "the index does not know — `vx cache prune` reaps them"
            rows.append(("orphans", f"{cache.orphans} {noun} ({size(cache.orphan_bytes)}) {reap}"))
    hist = info.history
    hits = "1 cache hit" if hist.hits == 1 else f"{hist.hits} cache hits"
    rows.append(("task runs (24h)", f"{hist.runs} ({hits})"))
    rows.append(("flaky tasks", _flaky(info)))
    if hist.empty_outputs:
        rows.append(
            (
                "empty outputs",
                (
                    f"{', '.join(hist.empty_outputs)} — declared outputs matched no file in"
                    " the last run; fix cache.outputs"
                ),
            )
        )
    rows += _probe_rows(doc)
    width = max(len(label) for label, _ in rows) + 2
    return "".join(f"{(label + ':').ljust(width)}{value}\n" for label, value in rows)


def _short(path: Path, home: Path | None) -> str:
    if home is not None and path.is_relative_to(home) and path != home:
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def _status_cache(info: Info) -> str:
    if info.fsmonitor is None or info.untracked_cache is None:
        return "(git could not answer)"
    on = {True: "on", False: "off"}
    return f"core.fsmonitor {on[info.fsmonitor]}, core.untrackedCache {on[info.untracked_cache]}"


def _projects(info: Info) -> str:
    tasks = f"{info.tasks} task" + ("" if info.tasks == 1 else "s")
    broken = len(info.config_errors)
    if broken:
        tasks += f" · {broken} config" + (" did" if broken == 1 else "s did") + " not load"
    return f"{info.projects} ({tasks})"


def _workers(info: Info) -> str:
    w = info.workers
    if w.source == "workspace":
        return f"{w.count} — concurrency in the workspace config"
    if w.source == "cgroup" and w.cpu_quota is not None:
        return f"{w.count} — cgroup CPU quota {w.cpu_quota:g} of {w.cores} cores"
    return f"{w.count} — the CPU count"


def _retention_text(cache: CacheFacts) -> str:
    parts = []
    if cache.older_than:
        parts.append(f"entries unused for {cache.older_than}")
    if cache.max_size:
        parts.append(f"least recently used above {cache.max_size}")
    return ", then ".join(parts) + " go at the end of each run"


def _flaky(info: Info) -> str:
    found = info.history.flaky
    if not found:
        return "none"
    listed = ", ".join(
        f"{f.task_id} ({f.failures} of {f.passes + f.failures} runs failed on unchanged inputs)"
        for f in found
    )
    return f"{len(found)} — {listed}"
