"""Run one command as a REAPI Action: upload its inputs, Execute, wait, fetch what it made.

The server's scheduler owns retries: a worker that stops reporting loses its lease and the
action is queued again, so the client only waits on the operation. A stop (Ctrl-C) cancels
the operation on the server before the call returns, so nothing keeps running there.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vx.cache.remote import protowire as pw
from vx.cache.remote.base import RemoteError
from vx.remoteexec.messages import RESPONSE_TYPE, Action, ActionResult, Command, unpack_any
from vx.remoteexec.tree import TreeBuilder, lay_out_tree
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from vx.cache.remote.reapi import Digest, ReapiCache

_EXECUTE = "/build.bazel.remote.execution.v2.Execution/Execute"
_CANCEL = "/google.longrunning.Operations/CancelOperation"
_BATCH = 2000  # digests asked about in one FindMissingBlobs
_STOP_POLL_S = 0.1
_BUSY = "RESOURCE_EXHAUSTED"
_BUSY_FIRST_S, _BUSY_MAX_S, _BUSY_FOR_S = 0.2, 5.0, 300.0


class ActionSpec(Record):
    """One task as an action: paths are POSIX, relative to the workspace root (`cwd` too);
    `outputs` are relative to `cwd`, as REAPI wants them."""

    command: str
    env: tuple[tuple[str, str], ...]
    cwd: str
    files: tuple[str, ...]
    dirs: tuple[str, ...]
    outputs: tuple[str, ...]
    timeout_ms: int | None


class Executed(Record):
    """How the action ended: exit code and logs, or `error` when the server could not run it."""

    exit_code: int
    stdout: str
    stderr: str
    duration_ms: float
    error: str | None = None


class RemoteExecutor:
    """Executes actions on one server, outputs landing under `root`; safe across threads."""

    def __init__(self, cas: ReapiCache, root: Path) -> None:
        self.cas = cas
        self.root = root
        self.builder = TreeBuilder(str(root))
        self._present: set[Digest] = set()
        self._lock = threading.Lock()

    def execute(self, spec: ActionSpec, stopping: threading.Event) -> Executed:
        started = time.monotonic()
        command = Command(("sh", "-c", spec.command), spec.env, spec.cwd, spec.outputs)
        root = self.builder.root(spec.files, spec.dirs)
        command_digest = self._put(command.encode())
        timeout_s = -(-spec.timeout_ms // 1000) if spec.timeout_ms else 0
        action_digest = self._put(Action(command_digest, root, timeout_s).encode())
        response = self._busy_retry(lambda: self._run(action_digest, stopping), stopping)
        elapsed = (time.monotonic() - started) * 1000
        if isinstance(response, str):
            return Executed(exit_code=1, stdout="", stderr="", duration_ms=elapsed, error=response)
        result = response
        self._land(spec, result)
        return Executed(
            exit_code=result.exit_code,
            stdout=self._text(result.stdout),
            stderr=self._text(result.stderr),
            duration_ms=elapsed,
        )

    def _run(self, action: Digest, stopping: threading.Event) -> ActionResult | str:
        self._upload()
        return self._wait(action, stopping)

    def _busy_retry(
        self, attempt: Callable[[], ActionResult | str], stopping: threading.Event
    ) -> ActionResult | str:
        """A server out of threads (RESOURCE_EXHAUSTED) is asked again, backing off, for a
        while: a burst of tasks must not fail because the server briefly had no room."""
        delay, deadline = _BUSY_FIRST_S, time.monotonic() + _BUSY_FOR_S
        while True:
            try:
                answer = attempt()
            except RemoteError as err:
                answer = str(err)
                if _BUSY not in answer or time.monotonic() > deadline:
                    raise
            if not isinstance(answer, str) or _BUSY not in answer:
                return answer
            if time.monotonic() > deadline or stopping.wait(delay):
                return answer
            delay = min(delay * 2, _BUSY_MAX_S)

    def _put(self, data: bytes) -> Digest:
        from vx.cache.remote.reapi import Digest

        digest = Digest.of(data)
        with self._lock:
            self.builder.blobs[digest] = data
        return digest

    def _upload(self) -> None:
        """Send the blobs the server lacks; what it was once found to hold is not asked again."""
        with self._lock:
            pending = [d for d in self.builder.blobs if d not in self._present]
        for start in range(0, len(pending), _BATCH):
            batch = pending[start : start + _BATCH]
            for digest in self.cas.missing(batch):
                blob = self.builder.blobs[digest]
                self.cas.write_blob(blob if isinstance(blob, bytes) else Path(blob).read_bytes())
            with self._lock:
                self._present.update(batch)

    def _wait(self, action: Digest, stopping: threading.Event) -> ActionResult | str:
        """The action's result, or a line saying why there is none."""
        request = pw.message([(1, self.cas.instance), (6, action.encode())])
        call: Any = self.cas.stream(_EXECUTE, request)
        name: list[str] = []
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                if stopping.wait(_STOP_POLL_S):
                    call.cancel()
                    if name:
                        self.cas.call(_CANCEL, pw.message([(1, name[0])]))
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            for raw in call:
                op = pw.parse(raw)
                if not name:
                    name.append(pw.first_bytes(op, 1).decode())
                if pw.first_int(op, 3):
                    return _response(op)
        except Exception as err:  # noqa: BLE001  grpc's RpcError, whose class is grpc's own
            if stopping.is_set():
                return "cancelled"
            return f"Execute failed: {err}"
        finally:
            done.set()
            watcher.join()
        return "the server ended the operation stream before the action was done"

    def _land(self, spec: ActionSpec, result: ActionResult) -> None:
        cwd = self.root / spec.cwd
        for path, digest, executable in result.files:
            target = cwd / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.cas.read_blob(digest))
            if executable:
                target.chmod(0o755)
        for path, digest in result.trees:
            lay_out_tree(self.cas.read_blob(digest), cwd / path, self.cas.read_blob)

    def _text(self, digest: Digest | None) -> str:
        if digest is None or digest.size == 0:
            return ""
        return self.cas.read_blob(digest).decode(errors="replace")


def _response(op: dict[int, list[int | bytes]]) -> ActionResult | str:
    error = pw.first_bytes(op, 4)
    if error:
        return "the server failed the action: " + _status_text(error)
    type_url, value = unpack_any(pw.first_bytes(op, 5))
    if type_url != RESPONSE_TYPE:
        return f"the server answered {type_url or 'nothing'} instead of an ExecuteResponse"
    fields = pw.parse(value)
    status = pw.first_bytes(fields, 3)
    raw = pw.first_bytes(fields, 1)
    if status and pw.first_int(pw.parse(status), 1) and not raw:
        return "the server failed the action: " + _status_text(status)
    return ActionResult.decode(raw)


def _status_text(status: bytes) -> str:
    fields = pw.parse(status)
    message = pw.first_bytes(fields, 2).decode(errors="replace")
    return f"code {pw.first_int(fields, 1)}: {message or 'no message'}"


def output_roots(patterns: Sequence[str]) -> tuple[str, ...]:
    """What each output glob can write under: its literal leading directories (or the file)."""
    roots: list[str] = []
    for pattern in patterns:
        if pattern.startswith("!"):
            continue
        parts: list[str] = []
        for part in pattern.strip("/").split("/"):
            if any(c in part for c in "*?[{"):
                break
            parts.append(part)
        if parts and parts != ["."]:
            roots.append("/".join(parts))
    return tuple(dict.fromkeys(roots))
