"""`vx worker`: serve a REAPI server's Bots API, running the actions it leases until stopped."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Section, Takes
from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams

COMMAND = Command(
    "worker",
    flags=(
        Flag("--url", "the server, grpc://host:port (default: VX_REAPI_URL)", Takes.VALUE, "URL"),
        Flag(
            "--instance",
            "the REAPI instance name (default: VX_REAPI_INSTANCE, else none)",
            Takes.VALUE,
            "NAME",
        ),
        Flag(
            "--dir",
            "where each action's input root is laid out (default: a temporary directory)",
            Takes.VALUE,
            "DIR",
        ),
    ),
    sections=(
        Section(
            "Examples",
            (
                ("vx worker --url grpc://buildgrid:50051", ""),
                ("VX_REAPI_URL=grpc://127.0.0.1:50051 vx worker --dir /var/tmp/vx-worker", ""),
            ),
        ),
    ),
)


class WorkerSettings(Record):
    """Which server to serve and where actions run."""

    url: str
    instance: str
    scratch: Path | None


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> WorkerSettings:
    url = args.text("url") or env.get("VX_REAPI_URL", "")
    if not url:
        raise UserError(
            ErrorCode.USAGE,
            "vx worker: no server — pass --url grpc://host:port or set VX_REAPI_URL",
        )
    if not url.startswith(("grpc://", "grpcs://")):
        raise UserError(
            ErrorCode.USAGE, f"vx worker: --url {url} is not grpc://host:port or grpcs://host:port"
        )
    instance = args.text("instance")
    scratch = args.text("dir")
    return WorkerSettings(
        url=url,
        instance=instance if instance is not None else env.get("VX_REAPI_INSTANCE", ""),
        scratch=cwd / scratch if scratch else None,
    )


def execute(settings: WorkerSettings, streams: Streams) -> int:
    """Serve until SIGTERM or Ctrl-C; a lost server ends the worker with one line."""
    import tempfile

    try:
        from vx.cache.remote.reapi import ReapiCache, ReapiConfig
    except ImportError:
        raise UserError(
            ErrorCode.CONFIG,
            "vx worker needs grpcio, which is not installed — pip install 'vx-runner[reapi]'",
        ) from None
    from vx.cache.remote.base import RemoteError
    from vx.run.groups.registry import ProcessRegistry
    from vx.worker.action import Runner, sandbox_works
    from vx.worker.bots import Bot

    cas = ReapiCache(ReapiConfig(settings.url, settings.instance))
    stop = threading.Event()
    registry = ProcessRegistry()
    with tempfile.TemporaryDirectory(prefix="vx-worker-") as tmp:
        scratch = settings.scratch or Path(tmp)
        bwrap = sandbox_works()
        runner = Runner(cas, scratch, registry, bwrap)

        def log(line: str) -> None:
            streams.err.write(line + "\n")
            streams.err.flush()

        bot = Bot(cas, runner, log)
        sandbox = "in bubblewrap" if bwrap else "unsandboxed (bwrap does not work here)"
        log(f"[vx worker] {bot.bot_id}: serving {settings.url}, actions run {sandbox}")
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
        try:
            bot.serve(stop)
        except RemoteError as err:
            streams.err.write(f"vx worker: {err} — is {settings.url} up?\n")
            return 1
        except KeyboardInterrupt:
            return 130
        finally:
            signal.signal(signal.SIGTERM, previous)
            registry.close(2000)
    return 0
