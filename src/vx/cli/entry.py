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
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            silence_stdout()
    os._exit(code)


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
