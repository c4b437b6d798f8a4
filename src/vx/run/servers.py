"""Persistent tasks (dev servers) a run started: tracked, kept alive, held or handed over, and
the release that ends a run's wait for their readiness."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from vx.ids import TaskId
    from vx.run.groups.registry import ProcessRegistry
    from vx.run.process import ProcessHandle, ProcessResult


class Server:
    """One started persistent task: its process, and its result once it has exited.

    Its state changes as the process lives (`result`, `ready`, `let_go`), so it is mutable.
    """

    __slots__ = ("exited", "handle", "id", "let_go", "ready", "requested", "result")

    def __init__(self, sid: TaskId, handle: ProcessHandle, *, requested: bool) -> None:
        self.id = sid
        self.handle = handle
        self.requested = requested
        self.exited = threading.Event()
        self.result: ProcessResult | None = None
        self.ready = False
        self.let_go = False  # not ready, and its run stopped waiting for it (RunOptions.release)


class Servers:
    """Every persistent task this run started, ready or not; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._all: list[Server] = []
        self.changed = threading.Event()

    def watch(self, sid: TaskId, handle: ProcessHandle, *, requested: bool) -> Server:
        """Drive the process on a thread of its own (its output keeps flowing) and track it."""
        server = Server(sid, handle, requested=requested)

        def drive() -> None:
            server.result = handle.wait()
            server.exited.set()
            self.changed.set()

        with self._lock:
            self._all.append(server)
        threading.Thread(target=drive, name=f"vx-server-{sid}", daemon=True).start()
        return server

    def let_go(self) -> frozenset[TaskId]:
        """The servers whose wait was ended unready by the run's release."""
        with self._lock:
            return frozenset(s.id for s in self._all if s.let_go)

    def kept(self) -> list[Server]:
        """The servers a run may hand over: ready, or left running unready when let go."""
        with self._lock:
            return [s for s in self._all if s.ready or s.let_go]

    def waiting(self) -> int:
        """How many servers are still waited on: started, not ready, not let go, not exited."""
        with self._lock:
            return sum(1 for s in self._all if not (s.ready or s.let_go or s.exited.is_set()))

    def alive(self) -> list[Server]:
        """The servers whose process has not exited."""
        with self._lock:
            return [s for s in self._all if not s.exited.is_set()]

    def stop_all(self, grace_ms: int) -> list[Server]:
        """SIGTERM every live server, SIGKILL after the grace; wait for all; return who was up."""
        up = self.alive()
        for server in up:
            server.handle.terminate(grace_ms)
        for server in up:
            server.exited.wait()
        return up

    def release(self, servers: list[Server]) -> None:
        """Forget `servers`: a caller that keeps them running owns their stopping now."""
        with self._lock:
            self._all = [s for s in self._all if s not in servers]


class Release:
    """How a caller ends a run's wait for servers not yet ready (`RunOptions.release`).

    The run calls `tick` from its scheduler thread between events, holding none of its locks,
    with whether every ticket in flight (a cache restore counts as one) is a server waited on
    for its `readyWhen` line; `judge` hears that and may `set` the release. Each server then
    waited on is left running unready, and what depends on it does not run; a server started
    after the set is waited on as ever. `vx watch` ends the wait for an edit.
    """

    __slots__ = ("_judge", "event")

    def __init__(self, judge: Callable[[bool], None] = lambda _waiting: None) -> None:
        self.event = threading.Event()
        self._judge = judge

    def set(self) -> None:
        """End the wait for the servers waited on now."""
        self.event.set()

    def is_set(self) -> bool:
        """The release was set."""
        return self.event.is_set()

    def tick(self, *, waiting: bool) -> None:
        """The run's periodic word: `waiting` when only servers not yet ready are in flight."""
        if not self.event.is_set():
            self._judge(waiting)


class HeldServers:
    """Servers a finished run handed over still running (ready, or let go unready by its
    release), with the registry they live in.

    `vx watch` keeps a dev server across cycles: the run that started it ends, and these (and
    the registry's lifeline, which still kills them should vx be SIGKILLed) outlive it until
    `stop`.
    """

    def __init__(self, servers: list[Server], registry: ProcessRegistry, grace_ms: int) -> None:
        self.servers = tuple(servers)
        self._registry = registry
        self._grace_ms = grace_ms
        self._stopped = False

    def dead(self) -> list[Server]:
        """The held servers whose process has exited."""
        return [s for s in self.servers if s.exited.is_set()]

    def stop(self, signo: int | None = None) -> None:
        """End every held server: signo first when given (what stopped vx), else straight to
        SIGTERM; SIGKILL after the grace; then close the registry, reaping what they left."""
        if self._stopped:
            return
        self._stopped = True
        if signo is not None:
            self._registry.signal_all(signo)
            for server in self.servers:
                server.exited.wait(self._grace_ms / 1000)
        for server in self.servers:
            server.handle.terminate(self._grace_ms)
        for server in self.servers:
            server.exited.wait()
        self._registry.close(self._grace_ms)
