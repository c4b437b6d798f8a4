"""The built-in plugin for a Bazel Remote Execution API cache: `"vx.plugins.reapi:plugin"`.

It reads `VX_REAPI_URL` (`grpc://host:port`, or `grpcs://` for TLS) and `VX_REAPI_INSTANCE`
(the instance name, empty by default); a `.py` workspace may call `plugin(url=…,
instance=…)` instead. It needs the `vx[reapi]` extra (grpcio): without it the plugin is
refused when the workspace loads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.plugins.model import CacheContext, CacheOff, Plugin

if TYPE_CHECKING:
    from vx.cache.remote.base import RemoteCache

NAME = "vx-reapi"


def plugin(*, url: str | None = None, instance: str | None = None) -> Plugin:
    """A plugin whose `cache` seam speaks REAPI's ActionCache and CAS."""
    try:
        importlib.import_module("grpc")
    except ImportError:
        raise UserError(
            ErrorCode.CONFIG,
            f"plugin '{NAME}' needs grpcio, which is not installed — pip install 'vx[reapi]'",
        ) from None

    def cache(ctx: CacheContext) -> RemoteCache:
        from vx.cache.remote.reapi import ReapiCache, ReapiConfig

        target = url or ctx.env.get("VX_REAPI_URL")
        if not target:
            raise CacheOff("VX_REAPI_URL is not set")
        name = instance if instance is not None else ctx.env.get("VX_REAPI_INSTANCE", "")
        try:
            return ReapiCache(ReapiConfig(target, name))
        except ValueError as err:
            raise UserError(
                ErrorCode.CONFIG, f"plugin '{NAME}': VX_REAPI_URL is {err} — set grpc://host:port"
            ) from None

    return Plugin(name=NAME, cache=cache)
