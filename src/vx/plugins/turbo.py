"""The built-in plugin for a Turborepo remote cache server: `"vx.plugins.turbo:plugin"`.

From a JSON or TOML workspace it reads the variables Turborepo reads (`TURBO_API`,
`TURBO_TOKEN`, `TURBO_TEAM`, `TURBO_REMOTE_CACHE_SIGNATURE_KEY`); a `.py` workspace may call
`plugin(api=…, team=…)` instead, and a value given there wins over the variable. The token
is best left to the variable: a config file is committed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.plugins.model import CacheContext, CacheOff, Plugin

if TYPE_CHECKING:
    from vx.cache.remote.base import RemoteCache

NAME = "vx-turbo"
DEFAULT_API = "https://vercel.com/api"


def plugin(
    *,
    api: str | None = None,
    token: str | None = None,
    team: str | None = None,
    signature_key: str | None = None,
) -> Plugin:
    """A plugin whose `cache` seam speaks the Turborepo remote cache API."""

    def cache(ctx: CacheContext) -> RemoteCache:
        from vx.cache.remote.turbo import TurboCache, TurboConfig
        from vx.errors import ErrorCode, UserError

        env = ctx.env
        given_token = token or env.get("TURBO_TOKEN")
        given_team = team or env.get("TURBO_TEAMID") or env.get("TURBO_TEAM")
        if not given_token:
            raise CacheOff("TURBO_TOKEN is not set")
        if not given_team:
            raise CacheOff("TURBO_TEAM is not set")
        config = TurboConfig(
            api=api or env.get("TURBO_API") or DEFAULT_API,
            token=given_token,
            team=given_team,
            signature_key=signature_key or env.get("TURBO_REMOTE_CACHE_SIGNATURE_KEY") or None,
        )
        try:
            return TurboCache(config)
        except ValueError as err:
            raise UserError(
                ErrorCode.CONFIG,
                f"plugin '{NAME}': TURBO_API is {err} — set it to the server's URL",
            ) from None

    return Plugin(name=NAME, cache=cache)
