"""`vx watch`: `vx run`'s flags, less the ones about one run's record, then the watch loop."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from vx.cli import run as run_verb
from vx.cli.parser import Command, Section
from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.run import RunSettings
    from vx.cli.settings import Streams
    from vx.events import Event

COMMAND = Command(
    "watch",
    flags=run_verb.FLAGS,
    words="task",
    most_words=None,
    forwards=True,
    rewrite=run_verb.COMMAND.rewrite,
    sections=(
        Section(
            "What it does",
            (
                ("1.", "runs the task as vx run would (same selection, graph and cache)"),
                ("2.", "watches every project a cycle can run, the root's lockfiles and"),
                ("", "vx.workspace.*, where member globs can add a package (any shape:"),
                ("", "packages/*, libs/*/pkg, apps/**) and files configs import"),
                ("3.", "re-runs on each settled edit: 150 ms after the last event, at most"),
                ("", "1 s after the first; what a run writes itself never starts a cycle"),
                ("", "(declared outputs, git-ignored files, bytes it left as they were)"),
                ("4.", "a persistent task (dev server) stays up across cycles; it restarts"),
                ("", "when its config or forwarded args change, or when it died"),
                ("5.", "an edit while a cycle waits only on a server's readyWhen line ends"),
                ("", "the wait: the server is left running and the next cycle starts"),
            ),
        ),
        Section(
            "Not in watch mode (refused before the initial run)",
            (
                ("--dry, --graph", "they run nothing, so there is nothing to watch"),
                ("--summarize, --profile", "every cycle would overwrite the file"),
                ("--report, --report-file", "they format one run's result"),
                ("--shard, --shard-run, --shard-wait", "one CI machine's part of one run"),
                ("--verbosity N>0, --format json", "the same (--verbosity 0 is accepted)"),
            ),
        ),
        Section(
            "Exit codes",
            (
                ("0", "stopped by Ctrl-C, SIGTERM or SIGHUP (the cycle in flight and any"),
                ("", "held server are stopped first), or --affected selected nothing"),
                ("1", "a refusal: a flag above, no task, a task no project in scope declares"),
            ),
        ),
        Section(
            "Environment",
            (
                ("VX_WATCH_POLL=1", "poll every 250 ms instead of OS file events"),
                ("VX_KILL_GRACE_MS", "SIGTERM → SIGKILL grace for a stopped task (2000)"),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx watch test", "re-test this project on every edit"),
                ("vx watch test --all", "every project that declares test"),
                ("vx watch lint --filter '@scope/*'", "a filtered scope"),
                ("vx watch build -- --sourcemap", "forwarded args reach every cycle"),
                ("vx watch dev", "a dev server kept up while its libraries rebuild"),
            ),
        ),
    ),
)


class WatchSettings(Record):
    """`vx run`'s settings for each cycle, and whether to poll instead of OS events."""

    run: RunSettings
    poll: bool


REFUSED = ("dry", "graph", "summarize", "profile", "report", "report-file")
"""`vx run`'s flags watch refuses (`_refusal`): its completions leave them out."""


def _refusal(args: ParsedArgs) -> str | None:
    """The line refusing a flag that makes no sense for a loop of runs, if one was given."""
    for name in REFUSED[:2]:
        if args.given(name):
            return f"vx watch: --{name} runs nothing, so there is nothing to watch; use vx run"
    for name in REFUSED[2:4]:
        if args.given(name):
            return (
                f"vx watch: --{name} writes one run's file, which every cycle would overwrite;"
                " use vx run"
            )
    for name in REFUSED[4:]:
        if args.given(name):
            return f"vx watch: --{name} formats one run's result, and a watch has many; use vx run"
    for name in ("shard", "shard-run", "shard-wait"):
        if args.given(name):
            return f"vx watch: --{name} splits one CI run across machines; use vx run"
    if (args.integer("verbosity") or 0) > 0:
        return "vx watch: --verbosity above 0 formats one run's result; watch accepts only 0"
    if args.text("format") == "json":
        return "vx watch: --format json prints one run's summary, and a watch has many runs"
    if not args.words:
        return "vx watch: name the task to watch (vx watch build)"
    return None


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> WatchSettings:
    """`vx run`'s resolution, after the refusals; every cycle then runs the same options."""
    refusal = _refusal(args)
    if refusal is not None:
        raise UserError(ErrorCode.USAGE, refusal)
    settings = run_verb.resolve(args, env, cwd)
    from vx.util.text import shell_quote

    words = ("vx", "watch", *run_verb.args_words(args))
    # a CI's node variables shard a CI run, never a loop on someone's machine
    options = settings.options._replace(command=" ".join(shell_quote(w) for w in words), shard=None)
    poll = env.get("VX_WATCH_POLL", "").strip() not in ("", "0")
    return WatchSettings(settings._replace(options=options), poll)


def execute(settings: WatchSettings, streams: Streams) -> int:
    """Run the loop until a stop signal; each cycle renders as `vx run` would."""
    from vx.output.console import Console
    from vx.watch.loop import CycleOutput, WatchHooks, WatchLoop

    out = Console.for_stream(streams.out, env=settings.run.env)
    err = Console.for_stream(streams.err, env=settings.run.env)
    lock = threading.Lock()

    def say(line: str) -> None:
        with lock:
            out.write(line + "\n")

    def notice(line: str) -> None:
        with lock:
            err.write(line + "\n")

    def output() -> CycleOutput:
        renderer = run_verb.make_renderer(settings.run, streams)

        def sink(event: Event) -> None:
            with lock:
                renderer.handle(event)

        def tick() -> None:
            with lock:
                renderer.tick(time.monotonic())

        def close() -> None:
            with lock:
                renderer.close()

        return CycleOutput(sink, tick, close)

    loop = WatchLoop(
        settings.run.options,
        WatchHooks(say=say, notice=notice, output=output),
        env=settings.run.env,
        poll=settings.poll,
        own_files=stream_files(streams),
    )
    return loop.run()


def stream_files(streams: Streams) -> tuple[str, ...]:
    """The regular files vx's stdout and stderr go to (`vx watch build > watch.log`).

    Each cycle appends to them; heard as edits, they would start the next cycle, forever.
    """
    import os
    import stat

    found: list[str] = []
    for stream in (streams.out, streams.err):
        try:
            fd = stream.fileno()
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            path = _fd_path(fd)
        except (OSError, ValueError):
            continue
        if path is not None and path not in found:
            found.append(path)
    return tuple(found)


def _fd_path(fd: int) -> str | None:
    """Where an open file lives: /proc on Linux, F_GETPATH on macOS; None elsewhere."""
    import os
    import sys
    from pathlib import Path

    if sys.platform == "darwin":
        import fcntl

        raw = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))
        return str(Path(os.fsdecode(raw.split(b"\0", 1)[0])).resolve())
    proc = Path(f"/proc/self/fd/{fd}")
    if not proc.exists():
        return None
    return str(proc.resolve())
