"""A client of the Turborepo remote cache HTTP API (`/v8/artifacts/<hash>`).

The servers teams run for Turborepo (Vercel's, ducktors' turborepo-remote-cache and its kin)
keep opaque artifacts by hash for a team: HEAD says whether one exists, GET fetches it, PUT
stores it. With a signature key, every stored artifact carries an `x-artifact-tag`: the
base64 HMAC-SHA256 of a versioned label, the hash, the team id and the bytes, each preceded
by its length as 8 bytes little-endian (Turborepo 2.11's scheme, so either tool verifies
what the other stored); a fetched artifact whose tag is missing or wrong is refused as a
miss. The token goes in one header and nowhere else: no message, label or file ever holds
it, and a redirect to another host does not carry it.
"""

from __future__ import annotations

import struct
import threading
import time
import urllib.parse
from typing import TYPE_CHECKING

from vx.cache.remote.base import RemoteError, Untrusted
from vx.cache.remote.http1 import Connection, Response
from vx.cache.remote.httpwire import HttpError, has_control
from vx.util.record import Record

if TYPE_CHECKING:
    from vx.cache.remote.proxy import Proxies

TIMEOUT_S = 30.0
UPLOAD_TIMEOUT_S = 60.0
MAX_SIZE = 1 << 30
_TAG = "x-artifact-tag"
_TAG_DOMAIN = b"artifact-signature:v2"
_LENGTH = struct.Struct("<Q")
_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 10


class TurboConfig(Record):
    """Where the server is and who is asking; `signature_key` turns signing on.

    `team_id` is the team a signature binds: Turborepo binds the id `TURBO_TEAMID` names and
    leaves it empty for a team given by slug. `timeout_s` bounds a lookup or download whole
    (redirects included), `upload_timeout_s` an upload, None for no bound; `max_size` caps
    a download's bytes; `proxies` come from the environment.
    """

    api: str
    token: str
    team: str
    signature_key: str | None = None
    team_id: str = ""
    timeout_s: float | None = TIMEOUT_S
    upload_timeout_s: float | None = UPLOAD_TIMEOUT_S
    max_size: int = MAX_SIZE
    proxies: Proxies | None = None

    def __repr__(self) -> str:
        return f"TurboConfig(api={self.api!r}, team={self.team!r}, token=<hidden>)"


class TurboCache:
    """A `RemoteCache` over one Turborepo-compatible server; one connection per thread."""

    def __init__(self, config: TurboConfig) -> None:
        url = urllib.parse.urlsplit(config.api)
        if url.scheme not in ("http", "https") or not url.hostname:
            msg = f"not an http(s) URL: {_shown(config.api)}"
            raise ValueError(msg)
        self._config = config
        self._https = url.scheme == "https"
        self._host = url.hostname
        self._port = url.port
        default = self._port in (None, 443 if self._https else 80)
        name = f"[{self._host}]" if ":" in self._host else self._host
        self._authority = name if default else f"{name}:{self._port}"
        self._base = url.path.rstrip("/")
        param = "teamId" if config.team.startswith("team_") else "slug"
        self._query = urllib.parse.urlencode({param: config.team})
        self._local = threading.local()
        self.label = f"turbo remote cache at {_shown(config.api)}"

    def __repr__(self) -> str:
        return f"TurboCache({self.label})"

    def exists(self, key: str) -> bool:
        status, _, _ = self._request("HEAD", key)
        return status == 200

    def fetch(self, key: str) -> bytes | None:
        status, headers, body = self._request("GET", key)
        if status == 404:
            return None
        if status != 200:
            raise RemoteError(f"GET answered HTTP {status}")
        if self._config.signature_key is not None:
            import hmac

            tag = headers.get(_TAG)
            if not tag or not hmac.compare_digest(tag, self._tag(key, body)):
                raise Untrusted("its signature does not match (x-artifact-tag)")
        return body

    def store(self, key: str, blob: bytes, *, duration_ms: float) -> None:
        headers = {
            "Content-Type": "application/octet-stream",
            "x-artifact-duration": str(int(duration_ms)),
        }
        if self._config.signature_key is not None:
            headers[_TAG] = self._tag(key, blob)
        status, _, _ = self._request("PUT", key, blob, headers)
        if not 200 <= status < 300:
            raise RemoteError(f"PUT answered HTTP {status}")

    def _tag(self, key: str, body: bytes) -> str:
        """The artifact's signature as Turborepo 2.11 makes it; its modules load only where a
        signature key is set."""
        import base64
        import hashlib
        import hmac

        secret = (self._config.signature_key or "").encode("utf-8", "surrogateescape")
        mac = hmac.new(secret, digestmod=hashlib.sha256)
        for field in (_TAG_DOMAIN, key.encode(), self._config.team_id.encode(), body):
            mac.update(_LENGTH.pack(len(field)))
            mac.update(field)
        return base64.b64encode(mac.digest()).decode()

    def _request(
        self,
        method: str,
        key: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request, and the redirects a GET or HEAD is sent (as Turborepo follows them),
        all within one deadline. Refused credentials stop the run's remote traffic."""
        config = self._config
        limit = config.upload_timeout_s if method == "PUT" else config.timeout_s
        deadline = None if limit is None else time.monotonic() + limit
        target = f"{self._base}/v8/artifacts/{key}?{self._query}"
        sent = {"Authorization": f"Bearer {config.token}", **(headers or {})}
        response = self._exchange(method, self._connection(), target, sent, body, deadline, limit)
        url = f"{'https' if self._https else 'http'}://{self._authority}{target}"
        for _ in range(_MAX_REDIRECTS):
            location = response.headers.get("location")
            if method not in ("GET", "HEAD") or response.status not in _REDIRECTS or not location:
                break
            url = urllib.parse.urljoin(url, location)
            response = self._follow(method, url, sent, deadline, limit)
        else:
            if response.status in _REDIRECTS and method in ("GET", "HEAD"):
                raise RemoteError(f"{method} was redirected more than {_MAX_REDIRECTS} times")
        if response.status in (401, 403):
            raise RemoteError(
                f"the server refused the token (HTTP {response.status}) — check TURBO_TOKEN"
                " and TURBO_TEAM",
                unreachable=True,
            )
        return response.status, response.headers, response.body

    def _follow(
        self,
        method: str,
        url: str,
        sent: dict[str, str],
        deadline: float | None,
        limit: float | None,
    ) -> Response:
        """A redirect's next request. The token goes only where the API is (same scheme,
        host and port) and never again once a hop has left it; another host gets a
        connection of its own for this one request."""
        if has_control(url):
            raise RemoteError(f"{method} was redirected to a URL holding control characters")
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError:
            raise RemoteError(f"{method} was redirected to a malformed URL") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RemoteError(f"{method} was redirected to a URL that is not http(s)")
        https = parts.scheme == "https"
        target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        home = https == self._https and parts.hostname == self._host
        home = home and (port or (443 if https else 80)) == (self._port or (443 if https else 80))
        if home and "Authorization" in sent:
            return self._exchange(method, self._connection(), target, sent, None, deadline, limit)
        sent.pop("Authorization", None)
        conn = self._open(parts.hostname, port, https=https)
        try:
            return self._exchange(method, conn, target, {}, None, deadline, limit)
        finally:
            conn.close()

    def _exchange(
        self,
        method: str,
        conn: Connection,
        target: str,
        sent: dict[str, str],
        body: bytes | None,
        deadline: float | None,
        limit: float | None,
    ) -> Response:
        """One request on `conn`; a reused connection the server closed is opened again once."""
        for attempt in (1, 2):
            fresh = not conn.is_open
            try:
                return conn.request(method, target, sent, body, deadline=deadline)
            except HttpError as err:
                if err.closed and attempt == 1 and not fresh:
                    continue  # a kept-alive connection the server had closed: once more
                if err.late:
                    raise RemoteError(
                        f"{method} got no whole answer within {limit:g} s", unreachable=True
                    ) from None
                if err.oversize:
                    raise RemoteError(f"{method} refused an answer: {err}") from None
                if err.partial is not None:
                    raise RemoteError(
                        f"{method} got a cut-short response ({err.partial} bytes)"
                    ) from None
                if err.closed:
                    raise RemoteError(
                        f"{method} failed: the server closed the connection ({err})"
                    ) from None
                raise RemoteError(f"{method} failed: {err}", unreachable=True) from None
            except OSError as err:
                raise RemoteError(
                    f"{method} failed: {type(err).__name__}: {err}", unreachable=True
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _connection(self) -> Connection:
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open(self._host, self._port, https=self._https)
            self._local.conn = conn
        return conn

    def _open(self, host: str, port: int | None, *, https: bool) -> Connection:
        proxies = self._config.proxies
        tunnel = proxies.for_url("https" if https else "http", host) if proxies else None
        return Connection(
            host, port, https=https, timeout=None, max_body=self._config.max_size, tunnel=tunnel
        )


def _shown(url: str) -> str:
    """A URL without any user or password it carries, for notices."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))
