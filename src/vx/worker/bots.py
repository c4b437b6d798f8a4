"""A Remote Workers API (Bots) client: one bot session, one action at a time.

The session is kept alive by UpdateBotSession calls, which also long-poll for work: the
server answers when it assigns a lease or its wait ends. A leased action runs on a thread of
its own while the loop keeps reporting it ACTIVE, so a long action does not make the server
think the worker died; a worker that really dies stops reporting, its session expires, and
the server queues the action again for another worker.
"""

from __future__ import annotations

import signal
import socket
import threading
import uuid
from typing import TYPE_CHECKING

from vx.cache.remote import protowire as pw
from vx.cache.remote.base import RemoteError
from vx.remoteexec.messages import (
    LEASE_ACTIVE,
    LEASE_COMPLETED,
    LEASE_PENDING,
    RESULT_TYPE,
    ActionResult,
    Lease,
    any_of,
    bot_session,
    lease_message,
    parse_session,
    unpack_any,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.cache.remote.reapi import ReapiCache
    from vx.worker.action import Runner

_BOTS = "/google.devtools.remoteworkers.v1test2.Bots/"
_POLL_S = 8.0  # how long one UpdateBotSession may wait for work (a long poll)
_AGAIN = ("DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED")  # a poll that ended empty, a busy server
_ALIVE_S = 2.0  # how often a running lease is reported ACTIVE (the session's keepalive)
_INTERNAL = 13  # google.rpc.Code INTERNAL: the action could not be run here; the server retries


class _Job:
    """The lease being worked on, and what became of it."""

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self.result: ActionResult | None = None
        self.error: str | None = None
        self.finished = threading.Event()
        self.acknowledged = False  # reported ACTIVE: the server completes only an executing job


class Bot:
    """Serves one server until `stop` is set; `log` hears a line per action."""

    def __init__(self, cas: ReapiCache, runner: Runner, log: Callable[[str], None]) -> None:
        self.cas = cas
        self.runner = runner
        self.log = log
        self.bot_id = f"vx-worker-{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
        self.name = ""
        self._job: _Job | None = None
        self._reported: set[str] = set()  # leases already completed here, never taken again

    def serve(self, stop: threading.Event) -> None:
        reply = self.cas.call(
            _BOTS + "CreateBotSession",
            pw.message([(1, self.cas.instance), (2, bot_session("", self.bot_id, []))]),
        )
        self.name, leases = parse_session(reply)
        self._take(leases)
        while not stop.is_set():
            job = self._job
            if job is not None and job.acknowledged:
                job.finished.wait(_ALIVE_S)  # report the end at once, else only keep alive
            held, completes = self._held()
            request = pw.message([(1, self.name), (2, bot_session(self.name, self.bot_id, held))])
            try:
                reply = self.cas.call(_BOTS + "UpdateBotSession", request, timeout_s=_POLL_S)
            except RemoteError as err:
                if not any(code in str(err) for code in _AGAIN):
                    raise
                stop.wait(_POLL_S / 16)  # a busy server: ask again shortly, not at once
                continue
            _, leases = parse_session(reply)
            if completes and self._job is not None:
                self._reported.add(self._job.lease.id)
                self._job = None
            elif held:
                self._drop_if_cancelled(leases)
            self._take(leases)

    def _held(self) -> tuple[list[bytes], bool]:
        """The leases to report, and whether the report completes the current one."""
        job = self._job
        if job is None:
            return [], False
        if not job.acknowledged or not job.finished.is_set():
            job.acknowledged = True
            return [lease_message(job.lease.id, LEASE_ACTIVE, job.lease.payload, None)], False
        if job.result is None:
            status = pw.message([(1, _INTERNAL), (2, job.error or "the worker failed")])
            return [pw.message([(2, LEASE_COMPLETED), (3, status), (7, job.lease.id)])], True
        result = any_of(RESULT_TYPE, job.result.encode())
        return [lease_message(job.lease.id, LEASE_COMPLETED, job.lease.payload, result)], True

    def _drop_if_cancelled(self, leases: list[Lease]) -> None:
        """A lease the server left out of its answer was cancelled: stop working on it."""
        job = self._job
        if job is None or any(lease.id == job.lease.id for lease in leases):
            return
        self.log(f"[vx worker] {self.bot_id}: lease {job.lease.id} cancelled by the server")
        self.runner.registry.signal_all(signal.SIGTERM)
        self._reported.add(job.lease.id)
        self._job = None

    def _take(self, leases: list[Lease]) -> None:
        for lease in leases:
            job = self._job
            if job is not None and lease.id == job.lease.id:
                continue
            fresh = lease.id not in self._reported
            if job is None and fresh and lease.state in (LEASE_PENDING, LEASE_ACTIVE):
                self._job = _Job(lease)
                threading.Thread(target=self._work, args=(self._job,), daemon=True).start()

    def _work(self, job: _Job) -> None:
        try:
            action = self.runner.action_of(*unpack_any(job.lease.payload))
            self.log(f"[vx worker] {self.bot_id}: running lease {job.lease.id}")
            job.result = self.runner.run(action)
            self.log(
                f"[vx worker] {self.bot_id}: lease {job.lease.id} exited {job.result.exit_code}"
            )
        except (RemoteError, OSError, ValueError) as err:
            job.error = str(err)
            self.log(f"[vx worker] {self.bot_id}: lease {job.lease.id} failed: {err}")
        finally:
            job.finished.set()
