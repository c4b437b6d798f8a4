"""The built-in plugin for a Bazel Remote Execution API cache: `"vx.plugins.reapi:plugin"`.

It reads `VX_REAPI_URL` (`grpc://host:port`, or `grpcs://` for TLS) and `VX_REAPI_INSTANCE`
(the instance name, empty by default); a `.py` workspace may call `plugin(url=…,
instance=…)` instead. It needs grpcio: the release binary (and so the npm package and the
platform wheel, which carry it) has it built in, a pip install gets it with the
`vx-runner[reapi]` extra. Without it the plugin is refused when the workspace loads, naming
what installs it for the channel this vx came through.
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
            f"plugin '{NAME}' needs grpcio, which is not installed — {_grpc_hint()}",
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


def _grpc_hint() -> str:
    """What gives this vx grpcio: a binary cannot take a pip install, and vx.pyz runs in
    whatever Python started it, which has no `vx-runner` distribution to add an extra to."""
    if "__compiled__" in globals():
        return (
            "this vx binary was built without it; use a release binary (they carry it) or "
            "rebuild with grpcio installed (python3 build/binary.py)"
        )
    import vx

    if getattr(getattr(vx, "__loader__", None), "archive", None):
        return "python3 -m pip install grpcio, for the Python that runs vx.pyz"
    return "python3 -m pip install 'vx-runner[reapi]'"
