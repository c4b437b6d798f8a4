"""The built-in plugin for a Bazel Remote Execution API cache: `"vx.plugins.reapi:plugin"`.

It reads `VX_REAPI_URL` (`grpc://host:port`, or `grpcs://` for TLS) and `VX_REAPI_INSTANCE`
(the instance name, empty by default); a `.py` workspace may call `plugin(url=…,
instance=…)` instead. A `grpcs://` server's certificate is checked against `SSL_CERT_FILE`
when it is set, as for an https cache, else the system's CA bundle (gRPC's own variable,
`GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`, still wins over the system's). It needs grpcio: the release
binary (and so the npm package and the platform wheel, which carry it) has it built in, a pip
install gets it with the `vx-runner[reapi]` extra. Without it the plugin is refused when the
workspace loads, naming what installs it for the channel this vx came through.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.plugins.model import CacheContext, CacheOff, Plugin

if TYPE_CHECKING:
    from collections.abc import Mapping

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
        roots = _root_certificates(ctx.env) if target.startswith("grpcs://") else None
        try:
            return ReapiCache(ReapiConfig(target, name, root_certificates=roots))
        except ValueError as err:
            raise UserError(
                ErrorCode.CONFIG, f"plugin '{NAME}': VX_REAPI_URL is {err} — set grpc://host:port"
            ) from None

    return Plugin(name=NAME, cache=cache)


def _root_certificates(env: Mapping[str, str]) -> bytes | None:
    """The CAs for a `grpcs://` server, as Python's own https client finds them.

    gRPC reads neither `SSL_CERT_FILE` nor the system's store: left alone it trusts only the
    bundle it ships, so a company CA that works for an https cache would fail here.
    """
    from pathlib import Path

    path = env.get("SSL_CERT_FILE")
    source = f"SSL_CERT_FILE is {path}"
    if not path:
        if env.get("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"):
            return None
        from vx.util.tlsroots import ca_locations

        found = ca_locations(env)
        path = found.cafile if found is not None else None
        if path is None:
            import ssl

            path = ssl.get_default_verify_paths().cafile
        if path is None:
            return None
        source = f"the system's CA bundle is {path}"
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise UserError(
            ErrorCode.CONFIG,
            f"plugin '{NAME}': {source}, which cannot be read ({err.strerror})"
            " — point it at a PEM file of CA certificates",
        ) from None


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
