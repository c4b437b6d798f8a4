"""HTTP GETs for the upgrade, each failure turned into one line that says what to do.

urllib from the standard library: the upgrade runs rarely and must not add a dependency.
Every refusal names the host, since a mirror (VX_UPGRADE_URL) and the default differ.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import time
import urllib.error
import urllib.request
from typing import IO, TYPE_CHECKING
from urllib.parse import urlsplit

from vx.errors import ErrorCode, UserError
from vx.util.record import Record
from vx.util.tlsroots import client_context

if TYPE_CHECKING:
    from collections.abc import Callable

TIMEOUT_S = 30
_CHUNK = 1 << 16
_USER_AGENT = "vx-upgrade"


def host(url: str) -> str:
    """The host a URL names, as the messages say it."""
    return urlsplit(url).netloc or url


class Body(Record):
    """A whole response body and the URL it finally came from (after redirects)."""

    data: bytes
    url: str


def get(url: str, what: str) -> Body:
    """GET `url` whole; `what` names it in a refusal ("the release", "the asset")."""
    chunks: list[bytes] = []
    with _open(url, what) as response:
        _read_all(response, url, what, chunks.append)
        return Body(b"".join(chunks), response.geturl())


class Saved(Record):
    """A download written to a file: its size and SHA-256."""

    size: int
    sha256: str


def download(url: str, into: IO[bytes], expected_size: int | None) -> Saved:
    """Stream `url` into `into`, hashing as it goes; a short body is refused, never kept."""
    digest = hashlib.sha256()
    size = 0

    def take(chunk: bytes) -> None:
        nonlocal size
        into.write(chunk)
        digest.update(chunk)
        size += len(chunk)

    with _open(url, "the release asset") as response:
        _read_all(response, url, "the release asset", take)
    if expected_size is not None and size != expected_size:
        raise UserError(
            ErrorCode.REFUSED,
            f"could not download the release asset from {host(url)} (got {size} of "
            f"{expected_size} bytes) — nothing replaced; re-run vx upgrade",
        )
    return Saved(size, digest.hexdigest())


def _open(url: str, what: str) -> http.client.HTTPResponse:
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})  # noqa: S310
    # The system's CAs wherever it keeps them: the binary's OpenSSL may look elsewhere.
    context = client_context() if urlsplit(url).scheme == "https" else None
    try:
        response: http.client.HTTPResponse = urllib.request.urlopen(  # noqa: S310
            request, timeout=TIMEOUT_S, context=context
        )
    except urllib.error.HTTPError as e:
        raise _refusal(e, url, what) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
        reason = getattr(e, "reason", e)
        raise UserError(
            ErrorCode.REFUSED,
            f"could not reach {host(url)} to read {what} ({reason}) — "
            "check the network or the proxy and re-run; nothing replaced",
        ) from None
    return response


def _read_all(
    response: http.client.HTTPResponse, url: str, what: str, take: Callable[[bytes], None]
) -> None:
    """Read the body to its end; a body cut short of its Content-Length is refused.

    http.client's read(n) returns b"" when the peer closes early instead of raising, so the
    count is checked here against the header.
    """
    declared = response.getheader("Content-Length")
    expected = int(declared) if declared and declared.strip().isdigit() else None
    got = 0
    try:
        while chunk := response.read(_CHUNK):
            take(chunk)
            got += len(chunk)
    except (OSError, http.client.HTTPException) as e:
        raise _cut(url, what, type(e).__name__) from None
    if expected is not None and got != expected:
        raise _cut(url, what, f"got {got} of {expected} bytes")


def _cut(url: str, what: str, detail: str) -> UserError:
    return UserError(
        ErrorCode.REFUSED,
        f"could not read {what} from {host(url)} (the connection ended early: {detail}) — "
        "nothing replaced; re-run vx upgrade",
    )


def _refusal(error: urllib.error.HTTPError, url: str, what: str) -> UserError:
    """One line for an HTTP error status: a missing release, a rate limit, anything else."""
    where = host(url)
    if error.code == 404:
        return UserError(
            ErrorCode.REFUSED,
            f"{where} has nothing at {url} (404) — check the tag (vx upgrade with no tag "
            "takes the latest); nothing replaced",
        )
    headers = error.headers
    limited = error.code == 429 or (
        error.code == 403 and headers.get("X-RateLimit-Remaining") == "0"
    )
    if limited:
        return UserError(
            ErrorCode.REFUSED,
            f"{where} is rate-limiting this address ({error.code}); try again "
            f"{_retry_when(headers)} — nothing replaced",
        )
    return UserError(
        ErrorCode.REFUSED,
        f"{where} refused {what} ({error.code} {error.reason}) — nothing replaced",
    )


def _retry_when(headers: object) -> str:
    """When the server says to come back: Retry-After, else GitHub's X-RateLimit-Reset."""
    get_header = getattr(headers, "get", None)
    if get_header is None:
        return "later"
    after = get_header("Retry-After")
    if after and after.strip().isdigit():
        return f"in {int(after)} s"
    if after:
        when = email.utils.parsedate_to_datetime(after)
        return f"after {when:%H:%M:%S %Z}".rstrip()
    reset = get_header("X-RateLimit-Reset")
    if reset and reset.strip().isdigit():
        return "after " + time.strftime("%H:%M:%S UTC", time.gmtime(int(reset)))
    return "later"
