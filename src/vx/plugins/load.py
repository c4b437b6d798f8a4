"""Turning `vx.workspace.*`'s `plugins` entries into `Plugin` values, refusing each bad one in
one line that names it and what to do."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.plugins.model import Plugin
from vx.util.fuzzy import did_you_mean

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence
    from pathlib import Path

    from vx.cache.remote.base import RemoteCache


def load_plugins(
    entries: Sequence[object],
    *,
    config_path: str,
    root: Path,
    reserved: Collection[str] = (),
) -> tuple[Plugin, ...]:
    """Each entry's plugin, in declaration order.

    A string is `module:factory`, imported with the workspace root on `sys.path` (so a module
    kept in the repo loads as an installed one does); a `.py` workspace may pass a `Plugin` or
    a factory. A verb named in `reserved` (core's), or declared by two plugins of different
    names, is refused: it could never run, or would hide the other plugin's.
    """
    plugins = tuple(_one(entry, config_path, root) for entry in entries)
    owners: dict[str, str] = {}
    for plugin in plugins:
        for verb in plugin.commands:
            if verb in reserved:
                raise UserError(
                    ErrorCode.CONFIG,
                    f"{config_path}: plugin '{plugin.name}' declares the command '{verb}',"
                    " which is a vx command — rename the plugin's command",
                )
            owner = owners.setdefault(verb, plugin.name)
            if owner != plugin.name:
                raise UserError(
                    ErrorCode.CONFIG,
                    f"{config_path}: plugins '{owner}' and '{plugin.name}' both declare the"
                    f" command '{verb}' — drop one of them from plugins",
                )
    return plugins


def _one(entry: object, config_path: str, root: Path) -> Plugin:
    if isinstance(entry, Plugin):
        return entry
    factory: Callable[[], object]
    if isinstance(entry, str):
        shown = entry
        factory = _factory(entry, config_path, root)
    elif callable(entry):
        shown = getattr(entry, "__qualname__", repr(entry))
        factory = entry
    else:
        raise UserError(
            ErrorCode.CONFIG,
            f"{config_path}: plugins: {type(entry).__name__} is neither a vx.plugins.Plugin nor"
            " a factory returning one — pass Plugin(name=…) or its factory",
        )
    try:
        made = factory()
    except UserError:
        raise
    except Exception as err:  # noqa: BLE001  a plugin's defect is reported, not a vx stack
        raise UserError(
            ErrorCode.CONFIG,
            f"{config_path}: plugin '{shown}' failed while loading: {type(err).__name__}: {err}",
        ) from None
    if not isinstance(made, Plugin):
        raise UserError(
            ErrorCode.CONFIG,
            f"{config_path}: plugin '{shown}' returned {type(made).__name__}, not a"
            " vx.plugins.Plugin — return Plugin(name=…, cache=…, commands=…, telemetry=…)",
        )
    return made


def _factory(spec: str, config_path: str, root: Path) -> Callable[[], object]:
    module_name, _, attr = spec.partition(":")
    where = str(root)
    added = where not in sys.path
    if added:
        sys.path.insert(0, where)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        missing = err.name or module_name
        if module_name == missing or module_name.startswith(missing + "."):
            raise UserError(
                ErrorCode.CONFIG,
                f"{config_path}: plugin '{spec}': no module named '{missing}' — install the"
                f" package that provides it (pip install …) or fix the module path",
            ) from None
        raise _import_failed(spec, config_path, err) from None
    except Exception as err:  # noqa: BLE001  the plugin's own import error, in one line
        raise _import_failed(spec, config_path, err) from None
    finally:
        if added:
            sys.path.remove(where)
    factory: object = getattr(module, attr, None)
    if factory is None or not callable(factory):
        names = [n for n in vars(module) if not n.startswith("_") and callable(vars(module)[n])]
        near = did_you_mean(attr, names)
        hint = (
            f" — did you mean {module_name}:{near}?"
            if near
            else f" — name a callable in {module_name}"
        )
        raise UserError(
            ErrorCode.CONFIG,
            f"{config_path}: plugin '{spec}': {module_name} has no callable '{attr}'{hint}",
        )
    return factory


def _import_failed(spec: str, config_path: str, err: BaseException) -> UserError:
    return UserError(
        ErrorCode.CONFIG,
        f"{config_path}: plugin '{spec}' failed to import: {type(err).__name__}: {err}"
        " — fix the module or drop it from plugins",
    )


def workspace_plugins(root: Path, *, reserved: Collection[str] = ()) -> tuple[Plugin, ...]:
    """The plugins the root's `vx.workspace.*` declares, loaded; () when it declares none."""
    from vx.workspace.config_load import load_workspace_config

    config = load_workspace_config(root)
    if not config.plugins:
        return ()
    return load_plugins(
        config.plugins, config_path=config.path or "vx.workspace", root=root, reserved=reserved
    )


def remote_cache(
    plugins: tuple[Plugin, ...],
    *,
    root: Path,
    env: Mapping[str, str],
    config_path: str | None,
    notes: list[str],
) -> RemoteCache | None:
    """The remote cache the one `cache` plugin builds for this run, None without one.

    A plugin with nothing to offer this run (`CacheOff`) adds a line to `notes`; two plugins
    that both fill the seam, or one whose seam fails, are refused in one line naming it.
    """
    supplying = [(p, p.cache) for p in plugins if p.cache is not None]
    if not supplying:
        return None
    if len(supplying) > 1:
        names = " and ".join(f"'{p.name}'" for p, _ in supplying[:2])
        raise UserError(
            ErrorCode.CONFIG,
            f"{config_path}: plugins {names} both supply a remote cache — keep one of them",
        )
    from vx.plugins.model import CacheContext, CacheOff

    plugin, build = supplying[0]

    def note(line: str) -> None:
        notes.append(f"plugin '{plugin.name}': {line}")

    try:
        return build(CacheContext(root, env, note))
    except CacheOff as off:
        notes.append(f"plugin '{plugin.name}' supplies no remote cache this run: {off}")
        return None
    except UserError:
        raise
    except Exception as err:  # noqa: BLE001  a plugin's defect is one line naming it
        raise UserError(
            ErrorCode.CONFIG,
            f"plugin '{plugin.name}' failed to set up its cache: {type(err).__name__}: {err}",
        ) from None
