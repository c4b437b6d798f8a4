"""A release host on 127.0.0.1 for the upgrade and install tests: files, statuses, cut bodies."""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Self

from tests.conftest import REPO

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from types import ModuleType


@dataclass
class Route:
    """What one path answers: a body, a status, extra headers, or a body cut after `cut` bytes."""

    body: bytes = b""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    cut: int | None = None


class ReleaseServer:
    """Serves `routes` (path → Route) and records every path asked for."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.asked: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.asked.append(self.path)
                route = server.routes.get(self.path, Route(b"not found", 404))
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                body = route.body if route.cut is None else route.body[: route.cut]
                self.wfile.write(body)
                if route.cut is not None:
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def release(
        self,
        version: str,
        assets: Mapping[str, bytes],
        *,
        latest: bool = True,
        digests: Mapping[str, str] | None = None,
    ) -> None:
        """Publish a release: its document, each asset and each asset's `.sha256` file."""
        tag = f"v{version}"
        entries = []
        for name, data in assets.items():
            digest = (digests or {}).get(name, hashlib.sha256(data).hexdigest())
            entry = {"name": name, "url": name, "size": len(data)}
            if digest:
                entry["sha256"] = digest
            entries.append(entry)
            for prefix in [f"/download/{tag}"] + (["/latest/download"] if latest else []):
                self.routes[f"{prefix}/{name}"] = Route(data)
                self.routes[f"{prefix}/{name}.sha256"] = Route(f"{digest}  {name}\n".encode())
        doc = json.dumps({"version": version, "tag": tag, "assets": entries}).encode()
        self.routes[f"/download/{tag}/release.json"] = Route(doc)
        if latest:
            self.routes["/latest/download/release.json"] = Route(doc)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def load_build_script(name: str) -> ModuleType:
    """One of build/'s scripts as a module (build/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "build" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def folder_tarball(work: Path, version: str, vx: bytes, plat: str | None = None) -> Path:
    """A release tarball as build/tarball.py packs it, its folder holding `vx` (here a small
    script answering as the binary would) and a library beside it."""
    tarball = load_build_script("tarball")
    folder = work / f"folder-{version}-{hashlib.sha256(vx).hexdigest()[:8]}"
    folder.mkdir(parents=True)
    (folder / "vx").write_bytes(vx)
    (folder / "vx").chmod(0o755)
    (folder / "libpython3.11.so.1.0").write_bytes(b"a library the binary loads")
    (folder / "share" / "docs").mkdir(parents=True)
    (folder / "share" / "docs" / "cli.md").write_text("# cli\n")
    path: Path = tarball.pack(folder, work / "assets", version, plat or tarball.host_platform())
    return path


def serve() -> Iterator[ReleaseServer]:
    """A fixture body: one server for the test."""
    with ReleaseServer() as server:
        yield server


def hanging_vx(marker: Path) -> bytes:
    """A new `vx` that writes its pid to `marker` once it runs, then hangs in --version."""
    return f'#!/bin/sh\necho $$ >"{marker}.tmp" && mv "{marker}.tmp" "{marker}"\nexec sleep 600\n'.encode()


def interrupt_when_marked(
    args: list[str], env: dict[str, str], marker: Path, *, whole_group: bool = False
) -> tuple[int, str, int]:
    """Run `args`, send it SIGINT once the probed vx has written `marker`; its exit code and
    stderr, and the probed vx's pid. SIGINT goes to `args` alone (as Ctrl-C reaches the
    upgrade, not its probe in a session of its own), or with `whole_group` to its whole
    process group, as Ctrl-C reaches a shell script and what it runs."""
    proc = subprocess.Popen(
        args,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=whole_group,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert marker.exists(), "the new vx was never probed"
        if whole_group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err, int(marker.read_text())


def gone_by_deadline(pid: int, seconds: float = 30) -> bool:
    """`gone`, waited for: a killed process is reaped by its parent in its own time."""
    deadline = time.monotonic() + seconds
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return gone(pid)


def gone(pid: int) -> bool:
    """The process has exited (absent, or a zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
