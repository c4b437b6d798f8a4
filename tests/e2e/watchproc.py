"""A `vx watch` subprocess for end-to-end tests: its lines as they come, waits by content only."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Self

from tests.conftest import VX, base_env

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

WAIT_S = 90.0  # generous: the shared CI box can stall; nothing is asserted on time
RERUN = re.compile(r"^vx watch: (.+); re-running\.\.\.$")


class WatchProc:
    """`python vx.py watch ARGS` in cwd, stdout and stderr each read on a thread into lines."""

    def __init__(
        self,
        args: Sequence[str],
        cwd: Path,
        *,
        home: Path,
        env: Mapping[str, str] | None = None,
        out_file: Path | None = None,
    ) -> None:
        """`out_file`: stdout goes to that file (`vx watch … > watch.log`), read as it grows."""
        # faulthandler: a watch that fails to stop is aborted, and says where it was stuck
        full = base_env({"HOME": str(home), "PYTHONFAULTHANDLER": "1", **(env or {})})
        self.args = tuple(args)
        sink = out_file.open("w") if out_file is not None else None
        self.proc = subprocess.Popen(
            [sys.executable, str(VX), "watch", *args],
            cwd=cwd,
            env=full,
            stdout=sink if sink is not None else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if sink is not None:
            sink.close()
        self._cond = threading.Condition()
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True)
        ]
        if out_file is None:
            self._readers.append(
                threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True)
            )
        else:
            self._readers.append(
                threading.Thread(target=self._tail, args=(out_file, self.out), daemon=True)
            )
        for reader in self._readers:
            reader.start()

    def _tail(self, path: Path, lines: list[str]) -> None:
        """Follow a file the process writes, line by line, until it has exited and all is read."""
        with path.open() as stream:
            pending = ""
            while True:
                chunk = stream.read()
                if chunk:
                    pending += chunk
                    *done, pending = pending.split("\n")
                    with self._cond:
                        lines.extend(done)
                        self._cond.notify_all()
                elif self.proc.poll() is not None:
                    pending += stream.read()  # what it wrote between the last read and exit
                    break
                else:
                    time.sleep(0.02)  # a poll interval for new bytes, not a wait on an outcome
        with self._cond:
            lines.extend(line for line in pending.split("\n") if line)
            self._cond.notify_all()

    def _read(self, stream: object, lines: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._cond:
                lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def dump(self) -> str:
        with self._cond:
            return (
                "--- stdout ---\n"
                + "\n".join(self.out)
                + "\n--- stderr ---\n"
                + "\n".join(self.err)
            )

    def wait_for(self, pattern: str, *, count: int = 1, stream: str = "out") -> str:
        """Block until the `count`-th line matching `pattern` (a regex) has been printed."""
        regex = re.compile(pattern)
        lines = self.out if stream == "out" else self.err

        def found() -> list[str]:
            return [line for line in lines if regex.search(line)]

        with self._cond:
            done = self._cond.wait_for(
                lambda: len(found()) >= count or self.proc.poll() is not None, WAIT_S
            )
            hits = found()
        if not done or len(hits) < count:
            raise AssertionError(f"no {count}x /{pattern}/ on {stream}\n{self.dump()}")
        return hits[count - 1]

    def reruns(self) -> list[str]:
        """The label of every cycle so far, in order."""
        with self._cond:
            return [m.group(1) for line in self.out if (m := RERUN.match(line))]

    def stop(self, signo: int = signal.SIGINT) -> int:
        """Send signo, wait for the exit, return its code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signo)
        try:
            code = self.proc.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self._join()
            raise AssertionError(f"vx watch did not stop on {signo}\n{self.dump()}") from None
        self._join()
        return code

    def _join(self) -> None:
        for reader in self._readers:
            reader.join(WAIT_S)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def processes_with(token: str) -> list[int]:
    """Pids whose command line holds `token` (a test's unique marker), zombies aside."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def edit(path: Path, text: str) -> None:
    """Write a file as an editor saves it: whole, in one go."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
