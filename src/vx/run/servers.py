"""Persistent tasks (dev servers) that became ready: kept alive, watched, torn down at the end."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vx.ids import TaskId
    from vx.run.process import ProcessHandle, ProcessResult


@dataclass
class Server:
    """One started persistent task: its process, and its result once it has exited."""

    id: TaskId
    handle: ProcessHandle
    requested: bool
    exited: threading.Event = field(default_factory=threading.Event)
    result: ProcessResult | None = None
    ready: bool = False


class Servers:
    """Every persistent task this run started, ready or not; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._all: list[Server] = []
        self.changed = threading.Event()

    def watch(self, sid: TaskId, handle: ProcessHandle, *, requested: bool) -> Server:
        """Drive the process on a thread of its own (its output keeps flowing) and track it."""
        server = Server(sid, handle, requested)

        def drive() -> None:
            server.result = handle.wait()
            server.exited.set()
            self.changed.set()

        with self._lock:
            self._all.append(server)
        threading.Thread(target=drive, name=f"vx-server-{sid}", daemon=True).start()
        return server

    def ready(self) -> list[Server]:
        """The servers that became ready, in start order."""
        with self._lock:
            return [s for s in self._all if s.ready]

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
