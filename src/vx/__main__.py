"""`python -m vx`: the standalone binary when a platform wheel installed one, else vx right here.

The platform wheel carries the binary's folder in the package as `vx/_bin/` (the `vx` script
execs it); running that binary keeps `python -m vx` as fast as `vx`. The pure wheel and a
checkout have no `_bin/`, and run the package in this interpreter.
"""

from __future__ import annotations

import os
import sys


def _binary() -> str | None:
    """The binary the platform wheel installed in this package, if it did."""
    here = os.path.dirname(os.path.abspath(__file__))  # noqa: PTH100, PTH120
    binary = os.path.join(here, "_bin", "vx")  # noqa: PTH118
    return binary if os.access(binary, os.X_OK) else None


if __name__ == "__main__":
    binary = _binary()
    if binary is not None:
        os.execv(binary, [binary, *sys.argv[1:]])  # noqa: S606
    from vx.cli.entry import entry

    sys.argv[0] = "vx"
    entry()
