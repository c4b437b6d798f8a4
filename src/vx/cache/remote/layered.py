"""One run's remote layer under the local cache: prefetches, background uploads, one notice.

Reads start as soon as the run knows its keys: every key the local cache lacks is fetched on
a small thread pool while tasks restore and execute, and a task waits only for its own blob.
Writes go to the pool as each task saves and are drained when the run ends. A server that
fails is told once per run and never fails a task; once it is unreachable the layer stops
asking.
"""

from __future__ import annotations

import threading
from functools import partial
from typing import TYPE_CHECKING, Generic, TypeVar

from vx.cache.remote.base import RemoteError, Untrusted
from vx.cache.remote.pool import Job, Pool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from vx.cache.remote.base import RemoteCache

_WORKERS = 8
T = TypeVar("T")


class RemoteLayer(Generic[T]):
    """A `RemoteCache` as one run uses it; safe to call from the run's worker threads.

    `decode(blob, key)` turns a fetched blob into what the run uses (checking it, raising
    Untrusted), on the layer's threads, so a prefetched entry is ready to restore.
    """

    def __init__(
        self,
        remote: RemoteCache,
        *,
        decode: Callable[[bytes, str], T],
        read: bool,
        write: bool,
        notify: Callable[[str], None] | None = None,
        workers: int = _WORKERS,
    ) -> None:
        self.remote = remote
        self.decode = decode
        self.read = read
        self.write = write
        self.notify = notify
        self._pool = Pool(workers, "vx-remote")
        self._fetches: dict[str, Job[T | None]] = {}
        self._uploads: list[Job[None]] = []
        self._lock = threading.Lock()
        self._down = False
        self._told = False
        self._untold: str | None = None  # the notice a failure before `tell_to` left
        self.failures = 0
        self.uploaded = 0

    @property
    def down(self) -> bool:
        """The server was unreachable: the layer asks it nothing more this run."""
        return self._down

    def tell_to(self, notify: Callable[[str], None]) -> None:
        """Send the layer's notice to `notify` from now on, and the one it already has."""
        with self._lock:
            self.notify = notify
            line, self._untold = self._untold, None
        if line is not None:
            notify(line)

    def prefetch(self, keys: Iterable[str]) -> None:
        """Start fetching `keys` now, in order, so the task that needs one rarely waits."""
        if not self.read:
            return
        with self._lock:
            for key in keys:
                if key not in self._fetches:
                    self._fetches[key] = self._pool.submit(partial(self._fetch, key))

    def fetch(self, key: str) -> T | None:
        """The decoded entry for `key` (waiting for its prefetch), None on a miss or a failed
        server.

        Raises Untrusted when the protocol's check or `decode` refused what the server sent.
        """
        if not self.read:
            return None
        with self._lock:
            future = self._fetches.pop(key, None)
        if future is None:
            return self._fetch(key)
        return future.result()

    def upload(
        self,
        key: str,
        blob: Callable[[], bytes | None],
        *,
        duration_ms: float,
        replace: bool = False,
    ) -> None:
        """Store what `blob()` builds under `key`, in the background; skipped where the server
        already has it, unless `replace` (what it holds was refused) or this run does not read
        the remote (`--force` refreshes it)."""
        if not self.write or self._down:
            return
        again = replace or not self.read
        future = self._pool.submit(partial(self._store, key, blob, duration_ms, again))
        with self._lock:
            self._uploads.append(future)

    def drain(self) -> None:
        """Wait for every upload; drop the prefetches no task asked for."""
        with self._lock:
            uploads, self._uploads = self._uploads, []
            unused = list(self._fetches.values())
            self._fetches = {}
        for fetch in unused:
            self._pool.cancel(fetch)
        for upload in uploads:
            upload.wait()
        self._pool.shutdown()

    def _fetch(self, key: str) -> T | None:
        if self._down:
            return None
        try:
            blob = self.remote.fetch(key)
        except Untrusted:
            raise
        except RemoteError as err:
            self._failed(err)
            return None
        except Exception as err:  # noqa: BLE001  a plugin's client failing is a miss, told once
            self._failed(RemoteError(f"{type(err).__name__}: {err}"))
            return None
        return None if blob is None else self.decode(blob, key)

    def _store(
        self, key: str, blob: Callable[[], bytes | None], duration_ms: float, replace: bool
    ) -> None:
        if self._down:
            return
        try:
            if not replace and self.remote.exists(key):
                return
            data = blob()
            if data is not None:
                self.remote.store(key, data, duration_ms=duration_ms)
                with self._lock:
                    self.uploaded += 1
        except RemoteError as err:
            self._failed(err)
        except Exception as err:  # noqa: BLE001  an upload never fails the run
            self._failed(RemoteError(f"{type(err).__name__}: {err}"))

    def _failed(self, err: RemoteError) -> None:
        with self._lock:
            self.failures += 1
            if err.unreachable:
                self._down = True
            if self._told:
                return
            self._told = True
            line = (
                f"{self.remote.label}: {err} — the run goes on with the local cache"
                " (further remote errors are not shown)"
            )
            notify = self.notify
            if notify is None:  # the run's output is not up yet: `tell_to` sends it
                self._untold = line
                return
        notify(line)
