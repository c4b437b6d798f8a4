"""The root's `vx.workspace.*` → `WorkspaceConfig`: the workspace-wide fields and their values.

Its tasks are parsed as a package's are (`config_schema.parse_tasks`), so a refusal names its
field the same way wherever it sits; what only the root may set (concurrency, retention,
plugins, where tasks come from) is checked here.
"""

from __future__ import annotations

import re
from types import MappingProxyType

from vx.util.units import DURATION, DURATION_MS, SIZE, SIZE_BYTES
from vx.workspace.config_fields import (
    MAX_NUMBER,
    Site,
    fields,
    non_blank,
    positive_int,
    quote,
    string,
    string_list,
)
from vx.workspace.config_schema import (
    MAX_TIMEOUT_MS,
    SCHEMA_KEY,
    TIMEOUT_UNIT,
    env_name,
    parse_tasks,
    schema_key,
    task_table,
)
from vx.workspace.model import CacheRetention, WorkspaceConfig

WORKSPACE_FIELDS = (
    "cacheDir",
    "concurrency",
    "timeout",
    "cacheRetention",
    "affectedBase",
    "passThrough",
    "plugins",
    "tasksFrom",
    "audit",
    "tasks",
    "executor",
)
AUDIT_MODES = ("off", "warn", "strict")
# Where cacheable tasks execute: here, or as actions on the REAPI server (vx.remoteexec).
EXECUTORS = ("local", "reapi")
# Where a workspace may read its tasks live instead of from vx.config files (foreign/driver.py).
TASKS_FROM = ("turbo", "nx")
RETENTION_FIELDS = ("olderThan", "maxSize")

_PERCENT = re.compile(r"[1-9][0-9]*%")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_PLUGIN = re.compile(rf"{_DOTTED}:{_DOTTED}")


def parse_workspace_config(raw: object, path: str) -> WorkspaceConfig:
    """Validate the root's `vx.workspace.*` value and build its model."""
    top = Site(path)
    doc = fields(raw, top, WORKSPACE_FIELDS, ignored=(SCHEMA_KEY,))
    schema_key(doc, top)
    cache_dir = affected_base = concurrency = timeout = retention = None
    plugins: tuple[object, ...] = ()
    pass_through: tuple[str, ...] = ()
    tasks_from = audit = executor = None
    if "audit" in doc:
        audit = _one_of(doc["audit"], top.key("audit"), AUDIT_MODES)
    if "executor" in doc:
        executor = _one_of(doc["executor"], top.key("executor"), EXECUTORS)
    if "tasksFrom" in doc:
        tasks_from = _one_of(doc["tasksFrom"], top.key("tasksFrom"), TASKS_FROM)
    raw_tasks = task_table(doc["tasks"], top.key("tasks")) if "tasks" in doc else {}
    if "tasks" in doc and tasks_from is not None:
        top.key("tasks").fail(
            '"tasksFrom" already gives every package its tasks: keep "tasks" or "tasksFrom"'
        )
    if "cacheDir" in doc:
        cache_dir = non_blank(doc["cacheDir"], top.key("cacheDir"), "path")
    if "concurrency" in doc:
        concurrency = _concurrency(doc["concurrency"], top.key("concurrency"))
    if "timeout" in doc:
        timeout = positive_int(doc["timeout"], top.key("timeout"), MAX_TIMEOUT_MS, TIMEOUT_UNIT)
    if "cacheRetention" in doc:
        retention = _retention(doc["cacheRetention"], top.key("cacheRetention"))
    if "affectedBase" in doc:
        affected_base = non_blank(doc["affectedBase"], top.key("affectedBase"), "git revision")
    if "plugins" in doc:
        plugins = _plugins(doc["plugins"], top.key("plugins"), objects=path.endswith(".py"))
    if "passThrough" in doc:
        pass_through = string_list(doc["passThrough"], top.key("passThrough"), env_name)
    return WorkspaceConfig(
        path=path,
        cache_dir=cache_dir,
        concurrency=concurrency,
        timeout_ms=timeout,
        cache_retention=retention,
        affected_base=affected_base,
        plugins=plugins,
        pass_through=pass_through,
        tasks_from=tasks_from,
        audit=audit,
        tasks=MappingProxyType(parse_tasks(raw_tasks, top.key("tasks"))),
        raw_tasks=MappingProxyType(dict(raw_tasks)),
        executor=executor,
    )


def _one_of(value: object, site: Site, choices: tuple[str, ...]) -> str:
    text = string(value, site)
    if text not in choices:
        site.fail(f"{quote(text)} is not one of {', '.join(map(quote, choices))}")
    return text


def _concurrency(value: object, site: Site) -> int | str:
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            site.fail(f'{quote(value)} is not a percentage of the CPUs like "50%"')
        if _too_large(value[:-1], 1):
            site.fail(f"{quote(value)} is too large: the most is {MAX_NUMBER}%")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1:
        site.fail('expected a positive integer or a percentage of the CPUs like "50%"')
    return positive_int(value, site)


def _retention(value: object, site: Site) -> CacheRetention:
    doc = fields(value, site, RETENTION_FIELDS)
    older_than = max_size = None
    if "olderThan" in doc:
        older_than = string(doc["olderThan"], site.key("olderThan"))
        duration = DURATION.fullmatch(older_than)
        if not duration:
            site.key("olderThan").fail(
                f'{quote(older_than)} is not a duration like "30d", "12h", "90m" or "45s"'
            )
        if _too_large(duration["n"], DURATION_MS[duration["unit"].lower()]):
            site.key("olderThan").fail(
                f"{quote(older_than)} is too long: the most is {MAX_NUMBER} ms (285 000 years)"
            )
    if "maxSize" in doc:
        max_size = _size(doc["maxSize"], site.key("maxSize"))
    return CacheRetention(older_than=older_than, max_size=max_size)


def _size(value: object, site: Site) -> str:
    if isinstance(value, str):
        size = SIZE.fullmatch(value)
        if not size:
            site.fail(f'{quote(value)} is not a size like "10G", "500M", "2K", "1T" or "4096B"')
        if _too_large(size["n"], SIZE_BYTES[(size["unit"] or "b").lower()]):
            site.fail(f"{quote(value)} is too large: the most is {MAX_NUMBER} bytes (8 PiB)")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1:
        site.fail('expected a size like "10G" or a positive number of bytes')
    return f"{positive_int(value, site, MAX_NUMBER, ' bytes (8 PiB)')}B"


def _too_large(digits: str, scale: int) -> bool:
    """Whether `digits` (a decimal numeral) times `scale` passes MAX_NUMBER.

    The length is looked at first: Python refuses to convert a numeral of thousands of digits.
    """
    return len(digits) > len(str(MAX_NUMBER)) or int(digits) * scale > MAX_NUMBER


def _plugins(value: object, site: Site, *, objects: bool) -> tuple[object, ...]:
    """`"module:factory"` strings; a `.py` workspace may also pass a plugin or its factory,
    which the plugin loader judges when a run loads it."""
    if objects and (isinstance(value, list) or type(value) is tuple):  # a Plugin is a tuple too
        return tuple(
            v if not isinstance(v, str) else _plugin(v, site.index(i)) for i, v in enumerate(value)
        )
    return string_list(value, site, _plugin)


def _plugin(value: object, site: Site) -> str:
    spec = string(value, site)
    if not _PLUGIN.fullmatch(spec):
        site.fail(f'{quote(spec)} is not "module:factory" (a Python module and a callable in it)')
    return spec
