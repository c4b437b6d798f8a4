"""A client of the Turborepo remote cache HTTP API (`/v8/artifacts/<hash>`).

The servers teams run for Turborepo (Vercel's, ducktors' turborepo-remote-cache and its kin)
keep opaque artifacts by hash for a team: HEAD says whether one exists, GET fetches it, PUT
stores it. With a signature key, every stored artifact carries an `x-artifact-tag`, the
base64 HMAC-SHA256 of the hash, the team and the bytes (Turborepo's own scheme); a fetched
artifact whose tag is missing or wrong is refused as a miss. The token goes in one header
and nowhere else: no message, label or file ever holds it.
"""

from __future__ import annotations

import threading
import urllib.parse

from vx.cache.remote.base import RemoteError, Untrusted
from vx.cache.remote.http1 import Connection, HttpError
from vx.util.record import Record

_TIMEOUT_S = 30.0
_TAG = "x-artifact-tag"


class TurboConfig(Record):
    """Where the server is and who is asking; `signature_key` turns signing on."""

    api: str
    token: str
    team: str
    signature_key: str | None = None
    timeout_s: float = _TIMEOUT_S

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
        """The artifact's signature; its modules load only where a signature key is set."""
        import base64
        import hashlib
        import hmac

        secret = self._config.signature_key or ""
        mac = hmac.new(secret.encode(), digestmod=hashlib.sha256)
        mac.update(key.encode() + self._config.team.encode())
        mac.update(body)
        return base64.b64encode(mac.digest()).decode()

    def _request(
        self,
        method: str,
        key: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One request on this thread's connection; a reused connection the server closed
        is opened again once. Refused credentials stop the run's remote traffic."""
        path = f"{self._base}/v8/artifacts/{key}?{self._query}"
        sent = {"Authorization": f"Bearer {self._config.token}", **(headers or {})}
        for attempt in (1, 2):
            conn = self._connection()
            fresh = not conn.is_open
            try:
                response = conn.request(method, path, sent, body)
            except HttpError as err:
                if err.closed and attempt == 1 and not fresh:
                    continue  # a kept-alive connection the server had closed: once more
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
            if response.status in (401, 403):
                raise RemoteError(
                    f"the server refused the token (HTTP {response.status}) — check TURBO_TOKEN"
                    " and TURBO_TEAM",
                    unreachable=True,
                )
            return response.status, response.headers, response.body
        raise AssertionError("unreachable")  # pragma: no cover

    def _connection(self) -> Connection:
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = Connection(
                self._host, self._port, https=self._https, timeout=self._config.timeout_s
            )
            self._local.conn = conn
        return conn


def _shown(url: str) -> str:
    """A URL without any user or password it carries, for notices."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))
