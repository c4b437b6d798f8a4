"""Watchers that prove they deliver: watchdog observers checked with a probe file, and a poller.

An OS watcher can be accepted and then never report anything (a container bind mount, a
network file system, a sandbox without FSEvents), and on macOS a fresh watcher misses what
lands before its stream is live. So every OS watcher must hear a probe file written under its
directory before the loop trusts it; one that does not within `PROBE_TIMEOUT_S` is replaced
by a poller, as is one the OS refuses for its watch limit, and every one under `poll=True`.
Delivery is `on_event(abs_path)` on a watcher thread; filtering is the caller's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from typing import TYPE_CHECKING

from watchdog.events import FileSystemEventHandler

if TYPE_CHECKING:
    from collections.abc import Callable

    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import BaseObserver, ObservedWatch

    OnEvent = Callable[[str], None]
    Skip = Callable[[str], bool]

PROBE = ".vx-watch-probe"
PROBE_TIMEOUT_S = 2.0
POLL_INTERVAL_S = 0.25
_LIMITS = {
    errno.ENOSPC: "the inotify watch limit (raise fs.inotify.max_user_watches)",
    errno.EMFILE: "the inotify instance limit (raise fs.inotify.max_user_instances)",
    errno.ENFILE: "the system's open-file limit (raise fs.file-max)",
}


def is_probe(path: str) -> bool:
    """A probe file, any watcher's, at any depth: never an edit."""
    return os.path.basename(path).startswith(PROBE)


class _Poller:
    """Re-walks a directory every interval and reports each path whose stamp changed.

    A file's stamp is the later of its mtime and ctime with its size and mode, so a file moved
    in carrying an old mtime still counts. `skip(abs_dir)` names directories never sampled.
    """

    def __init__(
        self, directory: str, recursive: bool, on_event: OnEvent, skip: Skip, interval: float
    ) -> None:
        self.directory = directory
        self._recursive = recursive
        self._on_event = on_event
        self._skip = skip
        self._interval = interval
        self._stop = threading.Event()
        self._seen = self._sample()
        self._thread = threading.Thread(target=self._serve, name="vx-watch-poll", daemon=True)
        self._thread.start()

    def _sample(self) -> dict[str, tuple[float, int, int]]:
        found: dict[str, tuple[float, int, int]] = {}
        todo = [self.directory]
        while todo:
            current = todo.pop()
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            for entry in entries:
                if is_probe(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir:  # as with OS events: its children report, its own stamp says nothing
                    found[entry.path] = (0.0, -1, st.st_mode)
                else:
                    found[entry.path] = (max(st.st_mtime, st.st_ctime), st.st_size, st.st_mode)
                if is_dir and self._recursive and not self._skip(entry.path):
                    todo.append(entry.path)
        return found

    def _serve(self) -> None:
        while not self._stop.wait(self._interval):
            now = self._sample()
            before = self._seen
            self._seen = now
            for path, stamp in now.items():
                if before.get(path) != stamp:
                    self._on_event(path)
            for path in before.keys() - now.keys():
                self._on_event(path)

    def close(self) -> None:
        self._stop.set()


class _Handler(FileSystemEventHandler):
    """Turns watchdog events into paths; a probe event proves its own watch instead."""

    def __init__(self, directory: str, on_event: OnEvent) -> None:
        super().__init__()
        self.directory = directory
        self.on_event = on_event
        self.proved = threading.Event()
        self.gone = False  # the watched directory itself was deleted: this watch hears no more

    def dispatch(self, event: FileSystemEvent) -> None:
        if event.event_type not in _KEPT or (event.is_directory and event.event_type == "modified"):
            return  # a directory's own modify says only that a child moved; the child reports
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            if not path:
                continue
            if path == self.directory and event.event_type in ("deleted", "moved"):
                self.gone = True
            if is_probe(path):
                if os.path.basename(path) == PROBE and os.path.dirname(path) == self.directory:
                    self.proved.set()
                continue
            self.on_event(path)


_KEPT = frozenset({"created", "deleted", "modified", "moved", "attrib"})


class Slot:
    """One armed directory: an OS watch or a poller, swapped in place when the OS one fails."""

    def __init__(self, directory: str, recursive: bool, on_event: OnEvent) -> None:
        self.directory = directory
        self.recursive = recursive
        self.on_event = on_event
        self.handler: _Handler | None = None
        self.watch: ObservedWatch | None = None
        self.poller: _Poller | None = None
        self.identity = identity(directory)

    def stale(self) -> bool:
        """The directory was removed (and maybe made again) since it was armed: an OS watch
        holds the old one, so the slot must be armed again."""
        if self.handler is not None and self.handler.gone:
            return True  # a new directory may reuse the old one's inode number
        return identity(self.directory) != self.identity


def identity(directory: str) -> tuple[int, int] | None:
    """Which directory a path names now (device and inode), None when there is none."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class WatcherPool:
    """Every watcher the loop holds; `arm` adds one, `prove` waits until each is trusted.

    `notice` receives the one-line notices (a fallback, a limit); `skip(abs_dir)` names the
    directories a poller never samples (the always-ignored ones, declared output trees).
    """

    def __init__(
        self,
        *,
        notice: Callable[[str], None],
        skip: Skip,
        poll: bool = False,
        probe_timeout_s: float = PROBE_TIMEOUT_S,
        interval_s: float = POLL_INTERVAL_S,
    ) -> None:
        self._notice = notice
        self._skip = skip
        self._poll = poll
        self._timeout = probe_timeout_s
        self._interval = interval_s
        self._slots: list[Slot] = []
        self._unproved: list[Slot] = []
        self._observer: BaseObserver | None = None
        if poll:
            notice(f"vx watch: polling every {self._ms(interval_s)} ms (VX_WATCH_POLL)")

    @staticmethod
    def _ms(seconds: float) -> int:
        return round(seconds * 1000)

    def dirs(self) -> list[str]:
        """Every armed directory."""
        return [s.directory for s in self._slots]

    def arm(self, directory: str, on_event: OnEvent, *, recursive: bool) -> Slot | None:
        """Watch `directory`; None when it cannot be watched at all (gone, not a directory)."""
        if not os.path.isdir(directory):
            return None
        slot = Slot(directory, recursive, on_event)
        self._slots.append(slot)
        if self._poll:
            self._start_poller(slot)
            return slot
        try:
            self._schedule(slot)
        except OSError as error:
            limit = _LIMITS.get(error.errno or 0)
            if limit is None:
                self._slots.remove(slot)
                self._notice(f"vx watch: cannot watch {directory}: {error.strerror or error}")
                return None
            self._notice(
                f"vx watch: {directory}: the OS refused a watch at {limit};"
                f" polling every {self._ms(self._interval)} ms instead"
            )
            self._start_poller(slot)
            return slot
        self._unproved.append(slot)
        return slot

    def _schedule(self, slot: Slot) -> None:
        if self._observer is None:
            import warnings

            from watchdog.observers import Observer

            # watchdog's inotify bookkeeping warns, from its own threads, when a directory
            # is removed and made again under a recursive watch (a task's clean of dist/):
            # a race it recovers from, and nothing a user can act on, so it must not land
            # in the output. A watch that stops delivering is this module's to notice.
            warnings.filterwarnings(
                "ignore",
                message=r"Callback with id .* (already exists|does not exist)",
                category=RuntimeWarning,
            )

            observer = Observer()
            observer.daemon = True
            observer.start()
            self._observer = observer
        slot.handler = _Handler(slot.directory, slot.on_event)
        slot.watch = self._observer.schedule(slot.handler, slot.directory, recursive=slot.recursive)

    def _start_poller(self, slot: Slot) -> None:
        slot.poller = _Poller(
            slot.directory, slot.recursive, slot.on_event, self._skip, self._interval
        )

    def prove(self, *, stopping: threading.Event | None = None) -> None:
        """Write a probe under each new OS watch until it is heard; fall back where it is not.

        The probe is re-written on a backoff, since a write landing before the stream is live
        is lost like any other, and removed once heard or given up on.
        """
        todo, self._unproved = self._unproved, []
        deadline = time.monotonic() + self._timeout
        step = 0.05
        while todo and time.monotonic() < deadline:
            if stopping is not None and stopping.is_set():
                break
            for slot in todo:
                with (
                    contextlib.suppress(OSError),
                    open(os.path.join(slot.directory, PROBE), "w") as probe,
                ):
                    probe.write(str(time.time_ns()))
            until = min(deadline, time.monotonic() + step)
            while time.monotonic() < until and not all(_proved(s) for s in todo):
                time.sleep(0.01)
            todo = [s for s in todo if not _proved(s)]
            step = min(step * 2, 0.4)
        for slot in self._slots:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(slot.directory, PROBE))
        for slot in todo:
            self._unschedule(slot)
            self._start_poller(slot)
            self._notice(
                f"vx watch: {slot.directory}: no OS watch events within"
                f" {self._ms(self._timeout)} ms; polling every {self._ms(self._interval)} ms"
                " instead"
            )

    def _unschedule(self, slot: Slot) -> None:
        if self._observer is not None and slot.watch is not None:
            with contextlib.suppress(KeyError, OSError):
                self._observer.unschedule(slot.watch)
        slot.watch = None

    def drop(self, slot: Slot) -> None:
        """Stop watching one slot's directory."""
        self._unschedule(slot)
        if slot.poller is not None:
            slot.poller.close()
        if slot in self._slots:
            self._slots.remove(slot)
        if slot in self._unproved:
            self._unproved.remove(slot)

    def close(self) -> None:
        """Stop every watcher and the observer thread."""
        for slot in list(self._slots):
            self.drop(slot)
        if self._observer is not None:
            self._observer.stop()
            with contextlib.suppress(RuntimeError):
                self._observer.join(2)
            self._observer = None


def _proved(slot: Slot) -> bool:
    return slot.handler is not None and slot.handler.proved.is_set()


def fs_clock_now(directory: str) -> float:
    """Now as the file system stamps a write (its clock can run a tick behind `time.time`)."""
    stamp = os.path.join(directory, f"{PROBE}-clock")
    try:
        with open(stamp, "w"):
            pass
        at = os.stat(stamp).st_mtime
        os.unlink(stamp)
    except OSError:
        return time.time()
    return at
