"""The process entry of `vx`: the version from the package alone, everything else via cli.main.

`vx --version` is what scripts and installers call to learn whether vx is there at all, so it
must cost little more than the interpreter's own start: this module imports nothing beyond
`os`, `sys` and `vx` itself (which imports no `typing`), and `cli.main` with its parser, verb
table and error types loads only for the other verbs.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

_VERSION_ARGS = (["--version"], ["version"])


def entry() -> NoReturn:
    """The `vx` command: run, flush, and leave without tearing the interpreter down.

    Every file vx writes is closed by then (the index explicitly); what remains is freeing
    tens of thousands of objects one by one, which costs a warm run tens of milliseconds.
    """
    if sys.argv[1:] in _VERSION_ARGS:
        from vx import __version__

        code = _say(f"vx {__version__}\n")
    else:
        import gc

        # A run allocates a few hundred thousand objects it keeps to the end (configs, the
        # graph, keys), and the default threshold scans them again every 700 allocations:
        # ~8% of a thousand-task plan. Collections still happen, a few dozen times less often.
        gc.set_threshold(20_000)
        from vx.cli.main import main

        code = main()
    if any(name in sys.modules for name in _EXTENDED):
        _run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            silence_stdout()
    os._exit(code)


# Loaded only when a plugin or an optional extra was: the code that may have registered an
# `atexit` handler (a telemetry SDK's flush) that the fast exit would otherwise skip.
_EXTENDED = ("vx.plugins.load", "opentelemetry", "mcp", "grpc")
EXIT_HANDLERS_S = 2.0


def _run_exit_handlers() -> None:
    """Run the `atexit` handlers, as a normal interpreter exit would, for at most 2 s.

    They run on a daemon thread so one that hangs (a flush to a dead collector) cannot hold
    the exit: past the bound vx says so once and leaves without them.
    """
    import atexit
    import threading

    done = threading.Event()

    def run() -> None:
        try:
            atexit._run_exitfuncs()  # the interpreter's own exit step, run before _exit
        finally:
            done.set()

    threading.Thread(target=run, name="vx-atexit", daemon=True).start()
    if not done.wait(EXIT_HANDLERS_S):
        import contextlib

        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(
                f"vx: exit handlers still running after {EXIT_HANDLERS_S:g} s;"
                " leaving without them\n"
            )


def _say(text: str) -> int:
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    return 0


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush into a closed pipe is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
