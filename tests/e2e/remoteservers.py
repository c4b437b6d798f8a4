"""Real remote cache servers for the end-to-end tests, started on 127.0.0.1 by the test.

`turborepo-remote-cache` (npm) is installed once into a cache dir shared by test sessions
(`VX_TEST_TOOLS`, default `~/.cache/vx-tests`); where npm or the registry is missing, the test
skips and says why. `FaultProxy` stands between vx and a server to break what it answers.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

TOKEN = "tok-3f9a1c77e2b84d"  # noqa: S105  a test server's token, searched for in every output
TEAM = "team_vx"
TURBO_VERSION = "2.12.0"


def tools_dir() -> Path:
    return Path(os.environ.get("VX_TEST_TOOLS") or Path.home() / ".cache" / "vx-tests")


@contextlib.contextmanager
def _install_lock(name: str) -> Iterator[None]:
    """One installer at a time per tool, across pytest-xdist workers."""
    import fcntl

    tools_dir().mkdir(parents=True, exist_ok=True)
    with (tools_dir() / f".{name}.lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def turbo_server_script() -> Path:
    """The server's entry script, installed on first use; skips when it cannot be."""
    with _install_lock("turborepo-remote-cache"):
        return _turbo_server_script()


def _turbo_server_script() -> Path:
    prefix = tools_dir() / f"turborepo-remote-cache-{TURBO_VERSION}"
    script = prefix / "node_modules" / "turborepo-remote-cache" / "dist" / "cli.js"
    if script.is_file():
        return script
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm and node are needed to run turborepo-remote-cache; neither is on PATH")
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
         f"turborepo-remote-cache@{TURBO_VERSION}"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not script.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"npm could not install turborepo-remote-cache: {tail[0]}")
    return script


TURBO_CLI_VERSION = "2.11.13"


def turbo_cli() -> Path:
    """Turborepo's own `turbo`, installed from npm on first use; skips when it cannot be."""
    with _install_lock("turbo"):
        prefix = tools_dir() / f"turbo-{TURBO_CLI_VERSION}"
        binary = prefix / "node_modules" / ".bin" / "turbo"
        if binary.exists():
            return binary
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is needed to install turbo; it is not on PATH")
        prefix.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             f"turbo@{TURBO_CLI_VERSION}"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if done.returncode != 0 or not binary.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            pytest.skip(f"npm could not install turbo: {tail[0]}")
        return binary


class TurboServer:
    """One `turborepo-remote-cache` process with local storage under `storage`."""

    def __init__(self, storage: Path, *, signature_key: str | None = None) -> None:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(storage),
            "STORAGE_PROVIDER": "local",
            "STORAGE_PATH": str(storage),
            "STORAGE_PATH_USE_TMP_FOLDER": "false",
            "TURBO_TOKEN": TOKEN,
            "HOST": "127.0.0.1",
            "PORT": "0",
            "LOG_LEVEL": "info",
        }
        if signature_key:
            env["TURBO_REMOTE_CACHE_SIGNATURE_KEY"] = signature_key
        storage.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [shutil.which("node") or "node", str(turbo_server_script())],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.url = self._wait_listening()
        threading.Thread(target=self._drain, daemon=True).start()

    def _wait_listening(self) -> str:
        assert self.proc.stdout is not None
        seen: list[str] = []
        for line in self.proc.stdout:
            seen.append(line)
            with contextlib.suppress(ValueError):
                message = str(json.loads(line).get("message", ""))
                if message.startswith("Server listening at "):
                    return message.removeprefix("Server listening at ").strip()
        self.stop()
        pytest.fail("turborepo-remote-cache did not start:\n" + "".join(seen[-20:]))

    def _drain(self) -> None:
        if self.proc.stdout is not None:
            for _ in self.proc.stdout:
                pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@contextlib.contextmanager
def turbo_server(storage: Path, *, signature_key: str | None = None) -> Iterator[TurboServer]:
    server = TurboServer(storage, signature_key=signature_key)
    try:
        yield server
    finally:
        server.stop()


class FaultProxy:
    """An HTTP proxy to one server that breaks GETs (or every request) as `mode` says.

    `500`: every request answers HTTP 500. `truncate`: a GET sends half its body under the
    full Content-Length, then closes. `tamper`: a GET's body has one byte flipped in its
    middle, length unchanged.
    """

    def __init__(self, upstream: str, mode: str) -> None:
        host, _, port = upstream.removeprefix("http://").rstrip("/").partition(":")
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if mode == "500":
                    self._send(500, {}, b'{"error":"boom"}')
                    return
                conn = http.client.HTTPConnection(host, int(port), timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=body, headers=headers)
                reply = conn.getresponse()
                data = reply.read()
                kept = {
                    k: v
                    for k, v in reply.getheaders()
                    if k.lower() not in ("content-length", "transfer-encoding", "connection")
                }
                conn.close()
                if self.command == "GET" and reply.status == 200 and data:
                    proxy.broken += 1
                    if mode == "truncate":
                        self.send_response(200)
                        for k, v in kept.items():
                            self.send_header(k, v)
                        self.send_header("Content-Length", str(len(data)))
                        self.send_header("Connection", "close")
                        self.end_headers()
                        self.wfile.write(data[: len(data) // 2])
                        self.close_connection = True
                        return
                    if mode == "tamper":
                        middle = len(data) // 2
                        data = data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :]
                self._send(reply.status, kept, data if self.command != "HEAD" else b"")

            def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_HEAD = _forward  # noqa: N815

        self.broken = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


BGD_CONFIG = """\
server:
  - !channel
    address: "127.0.0.1:{port}"
    insecure-mode: true
authorization:
  method: none
storages:
  - !lru-storage &cas
    size: 256MB
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
instances:
  - name: ""
    services:
      - !action-cache
        cache: *ac
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
"""


def bgd_binary() -> Path:
    """BuildGrid's `bgd`, from PATH or a venv the tests install it into; skips when it cannot be.

    BuildGrid pins its own grpcio and protobuf, so it lives in a venv of its own rather than in
    vx's environment.
    """
    found = shutil.which("bgd")
    if found:
        return Path(found)
    with _install_lock("buildgrid"):
        return _bgd_in_venv()


def _bgd_in_venv() -> Path:
    venv = tools_dir() / "buildgrid-venv"
    bgd = venv / "bin" / "bgd"
    if bgd.is_file():
        return bgd
    made = subprocess.run(
        [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, check=False
    )
    if made.returncode != 0:
        pytest.skip(f"could not create a venv for buildgrid: {made.stderr.strip()[-200:]}")
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "buildgrid", "psycopg2-binary"],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not bgd.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"pip could not install buildgrid: {tail[0]}")
    return bgd


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class BuildGrid(NamedTuple):
    """A running `bgd server`: its grpc:// URL and its process (a test may kill it)."""

    url: str
    proc: subprocess.Popen[bytes]


@contextlib.contextmanager
def buildgrid_server(workdir: Path) -> Iterator[BuildGrid]:
    """A BuildGrid server with in-memory CAS and action cache on 127.0.0.1."""
    bgd = bgd_binary()
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "bgd.yml"
    config.write_text(BGD_CONFIG.format(port=port))
    log = (workdir / "bgd.log").open("w")
    proc = subprocess.Popen(
        [str(bgd), "server", "start", str(config)], stdout=log, stderr=subprocess.STDOUT,
        cwd=workdir,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("bgd did not start:\n" + (workdir / "bgd.log").read_text()[-2000:])
            time.sleep(0.2)
        yield BuildGrid(f"grpc://127.0.0.1:{port}", proc)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        log.close()


BGD_EXEC_CONFIG = """\
thread-pool-size: 200
server:
  - !channel
    address: "127.0.0.1:{port}"
    insecure-mode: true
authorization:
  method: none
connections:
  - !sql-connection &sql
    connection-string: {database}
storages:
  - !lru-storage &cas
    size: 1024MB
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 100000
    allow-updates: true
schedulers:
  - !sql-scheduler &sched
    sql: *sql
    storage: *cas
    action-cache: *ac
    bot-session-keepalive-timeout: {keepalive}
    session-expiry-timer-interval: 1
    poll-interval: 0.1
    bot-poll-interval: 0.1
    property-set: !dynamic-property-set
      match-property-keys: []
instances:
  - name: ""
    services:
      - !action-cache
        cache: *ac
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
      - !execution
        scheduler: *sched
        operation-stream-keepalive-timeout: 5
"""


def _postgres_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    pytest.skip(f"PostgreSQL's {name} is not installed (BuildGrid's scheduler needs PostgreSQL)")


def _as_postgres_user() -> list[str]:
    """PostgreSQL refuses to run as root: under root, drop to nobody for it."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@contextlib.contextmanager
def postgres_server(workdir: Path) -> Iterator[str]:
    """A throwaway PostgreSQL on 127.0.0.1 with trust auth; yields its connection string."""
    initdb, postgres = _postgres_bin("initdb"), _postgres_bin("postgres")
    workdir.mkdir(parents=True, exist_ok=True)
    # Its own directory under /tmp: pytest's tmp dirs are closed to the user it may run as.
    home = Path(tempfile.mkdtemp(prefix="vx-pg-"))
    if os.geteuid() == 0:
        os.chown(home, 65534, 65534)
    data = home / "data"
    made = subprocess.run(
        [*_as_postgres_user(), initdb, "-D", str(data), "-U", "bgd", "--auth=trust"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"initdb failed: {(made.stderr or made.stdout).strip()[-300:]}")
    port = free_port()
    log = (workdir.parent / "postgres.log").open("w")
    proc = subprocess.Popen(
        [*_as_postgres_user(), postgres, "-D", str(data), "-h", "127.0.0.1", "-p", str(port),
         "-k", str(home)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        _wait_port(port, proc, workdir.parent / "postgres.log")
        yield f"postgresql+psycopg2://bgd@127.0.0.1:{port}/postgres"
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
        shutil.rmtree(home, ignore_errors=True)


def _wait_port(port: int, proc: subprocess.Popen[bytes], logfile: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(
                f"{logfile.name} says the server did not start:\n" + logfile.read_text()[-2000:]
            )
        time.sleep(0.2)


def _with_psycopg2(bgd: Path) -> None:
    """BuildGrid's scheduler talks to PostgreSQL through psycopg2, which a venv made before
    remote execution was tested may lack: add it, or skip saying why."""
    python = bgd.parent / "python"
    probe = [str(python), "-c", "import psycopg2"]
    if subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return
    with _install_lock("buildgrid"):
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "psycopg2-binary"],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"pip could not install psycopg2-binary for BuildGrid: {tail[0]}")


@contextlib.contextmanager
def buildgrid_exec_server(workdir: Path, *, keepalive_s: int = 10) -> Iterator[BuildGrid]:
    """BuildGrid with Execution and Bots besides CAS and action cache, on a fresh PostgreSQL.

    `keepalive_s` is how long a silent bot keeps its session: a killed worker's lease goes
    back to the queue once it passes.
    """
    bgd = bgd_binary()
    _with_psycopg2(bgd)
    with postgres_server(workdir / "pg") as database:
        migrated = subprocess.run(
            [str(bgd), "migrate", "apply", database],
            capture_output=True, text=True, check=False, timeout=300,
        )  # fmt: skip
        if migrated.returncode != 0:
            pytest.fail(f"bgd migrate failed: {(migrated.stderr or migrated.stdout)[-2000:]}")
        port = free_port()
        config = workdir / "bgd-exec.yml"
        config.write_text(
            BGD_EXEC_CONFIG.format(port=port, database=database, keepalive=keepalive_s)
        )
        logfile = workdir / "bgd.log"
        log = logfile.open("w")
        proc = subprocess.Popen(
            [str(bgd), "server", "start", str(config)], stdout=log, stderr=subprocess.STDOUT,
            cwd=workdir,
        )  # fmt: skip
        try:
            _wait_port(port, proc, logfile)
            yield BuildGrid(f"grpc://127.0.0.1:{port}", proc)
        finally:
            proc.kill()
            proc.wait(timeout=30)
            log.close()
