"""Which HTTP proxy, if any, a remote cache request goes through, from the environment.

The rules are the ones Turborepo's client (reqwest) follows, so a shell that gets Turborepo
to its cache gets vx there too: `HTTPS_PROXY` for https servers and `HTTP_PROXY` for http
ones (each upper case first, then lower case), `ALL_PROXY` when the scheme's own is unset;
`NO_PROXY` (or `no_proxy`) lists hosts reached directly: `*` for all, a domain for itself and
its subdomains (a leading dot changes nothing), an IP address, or a CIDR block. A proxy is an
`http://` URL; its user and password, if given, go to it as Basic credentials.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING

from vx.cache.remote.http1 import Tunnel
from vx.cache.remote.httpwire import has_control
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

_NAMES = {
    "https": ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"),
    "http": ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"),
}


class Proxies(Record):
    """The proxy for each scheme and the hosts that bypass them."""

    http: Tunnel | None = None
    https: Tunnel | None = None
    no_proxy: tuple[str, ...] = ()

    @staticmethod
    def from_env(env: Mapping[str, str]) -> Proxies:
        """The proxies `env` names; ValueError naming the variable for one vx cannot use."""
        found: dict[str, Tunnel | None] = {}
        for scheme, names in _NAMES.items():
            name = next((n for n in names if env.get(n)), None)
            found[scheme] = None if name is None else _tunnel(name, env[name])
        raw = env.get("NO_PROXY") or env.get("no_proxy") or ""
        bypass = tuple(part.strip().lower() for part in raw.split(",") if part.strip())
        return Proxies(found["http"], found["https"], bypass)

    def for_url(self, scheme: str, host: str) -> Tunnel | None:
        """The proxy a request to `host` over `scheme` goes through, None for a direct one."""
        tunnel = self.https if scheme == "https" else self.http
        if tunnel is None or _bypassed(host.lower().strip("[]"), self.no_proxy):
            return None
        return tunnel


def _tunnel(name: str, value: str) -> Tunnel:
    text = value.strip()
    if "://" not in text:
        text = "http://" + text  # as Turborepo reads `proxy:3128`
    try:
        url = urllib.parse.urlsplit(text)
        port = url.port or 80
    except ValueError:
        url, port = None, 0
    if url is None or not url.hostname or has_control(text):
        msg = f"{name} is not a proxy URL — set it to http://host:port"
        raise ValueError(msg)
    if url.scheme != "http":
        msg = f"{name} is a {url.scheme}:// proxy — vx reaches caches through http:// proxies only"
        raise ValueError(msg)
    authorization = None
    if url.username is not None:
        import base64

        user = urllib.parse.unquote(url.username)
        secret = urllib.parse.unquote(url.password or "")
        authorization = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
    return Tunnel(url.hostname, port, authorization)


def _bypassed(host: str, rules: tuple[str, ...]) -> bool:
    for rule in rules:
        if rule == "*":
            return True
        domain = rule.removeprefix(".")
        if host == domain or host.endswith("." + domain):
            return True
    if host.replace(".", "").isdigit() or ":" in host:
        return _in_network(host, rules)
    return False


def _in_network(host: str, rules: tuple[str, ...]) -> bool:
    """An IP address `host` that a rule names or whose CIDR block holds it."""
    import ipaddress

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for rule in rules:
        try:
            if address in ipaddress.ip_network(rule.strip("[]"), strict=False):
                return True
        except ValueError:
            continue
    return False
