"""The built-in plugin for a Turborepo remote cache server: `"vx.plugins.turbo:plugin"`.

From a JSON or TOML workspace it reads the variables Turborepo reads (`TURBO_API`,
`TURBO_TOKEN`, `TURBO_TEAM` or `TURBO_TEAMID`, `TURBO_REMOTE_CACHE_SIGNATURE_KEY`,
`TURBO_REMOTE_CACHE_TIMEOUT`, `TURBO_REMOTE_CACHE_UPLOAD_TIMEOUT`, the proxy variables) and
vx's own cap on a download (`VX_REMOTE_CACHE_MAX_SIZE`); a `.py` workspace may call
`plugin(api=…, team=…)` instead, and a value given there wins over the variable. The token
is best left to the variable: a config file is committed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.plugins.model import CacheContext, CacheOff, Plugin

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.cache.remote.base import RemoteCache
    from vx.cache.remote.proxy import Proxies

NAME = "vx-turbo"
DEFAULT_API = "https://vercel.com/api"
MIN_KEY_BYTES = 32


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

        env = ctx.env
        given_token = token or env.get("TURBO_TOKEN")
        team_id = "" if team else env.get("TURBO_TEAMID") or ""
        given_team = team or team_id or env.get("TURBO_TEAM")
        if not given_token:
            raise CacheOff("TURBO_TOKEN is not set")
        if not given_team:
            raise CacheOff("TURBO_TEAM is not set")
        given_api = api or env.get("TURBO_API") or DEFAULT_API
        for name, value in (("TURBO_TOKEN", given_token), ("TURBO_TEAM", given_team),
                            ("TURBO_API", given_api)):  # fmt: skip
            _refuse_controls(name, value)
        key = signature_key or env.get("TURBO_REMOTE_CACHE_SIGNATURE_KEY") or None
        if key is not None and ctx.note is not None:
            size = len(key.encode("utf-8", "surrogateescape"))
            if size < MIN_KEY_BYTES:
                ctx.note(
                    f"TURBO_REMOTE_CACHE_SIGNATURE_KEY is {size} bytes: a key under"
                    f" {MIN_KEY_BYTES} bytes is weak against guessing — use a longer random one"
                )
        config = TurboConfig(
            api=given_api,
            token=given_token,
            team=given_team,
            signature_key=key,
            team_id=team_id,
            timeout_s=_seconds(env, "TURBO_REMOTE_CACHE_TIMEOUT", 30.0),
            upload_timeout_s=_seconds(env, "TURBO_REMOTE_CACHE_UPLOAD_TIMEOUT", 60.0),
            max_size=_max_size(env),
            proxies=_proxies(env),
        )
        try:
            return TurboCache(config)
        except ValueError as err:
            raise _refused(f"TURBO_API is {err} — set it to the server's URL") from None

    return Plugin(name=NAME, cache=cache)


def _refused(message: str) -> Exception:
    from vx.errors import ErrorCode, UserError

    return UserError(ErrorCode.CONFIG, f"plugin '{NAME}': {message}")


def _refuse_controls(name: str, value: str) -> None:
    """A CR or LF in a header's value would end the header there and start another."""
    from vx.cache.remote.httpwire import has_control

    if has_control(value):
        raise _refused(
            f"{name} holds a control character (a line break?) — set it to the value alone"
        )


def _seconds(env: Mapping[str, str], name: str, default: float) -> float | None:
    """A bound in seconds as Turborepo reads it; 0 for none."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e9:
        raise _refused(f"{name} is {text[:20]!r} — set it to a number of seconds (0: no bound)")
    return value or None


def _max_size(env: Mapping[str, str]) -> int:
    from vx.cache.remote.turbo import MAX_SIZE

    text = env.get("VX_REMOTE_CACHE_MAX_SIZE", "").strip()
    if not text:
        return MAX_SIZE
    from vx.util.units import size_bytes

    size = size_bytes(text)
    if not size:
        raise _refused(
            f"VX_REMOTE_CACHE_MAX_SIZE is {text[:20]!r} — set it to a size such as 2G or 500M"
        )
    return size


def _proxies(env: Mapping[str, str]) -> Proxies:
    from vx.cache.remote.proxy import Proxies

    try:
        return Proxies.from_env(env)
    except ValueError as err:
        raise _refused(str(err)) from None
