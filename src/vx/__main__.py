"""`python -m vx`: the standalone binary when a platform wheel installed one, else vx right here.

The platform wheel installs the binary as the `vx` script beside this interpreter and marks
the package with `vx/_data/binary`; running that binary keeps `python -m vx` as fast as `vx`.
The pure wheel and a checkout run the package in this interpreter.
"""

from __future__ import annotations

import os
import sys
import sysconfig


def _binary() -> str | None:
    """The binary the platform wheel installed, when this package is marked as carrying one."""
    here = os.path.dirname(os.path.abspath(__file__))  # noqa: PTH100, PTH120
    if not os.path.exists(os.path.join(here, "_data", "binary")):  # noqa: PTH110, PTH118
        return None
    script = os.path.join(sysconfig.get_path("scripts"), "vx")  # noqa: PTH118
    return script if os.access(script, os.X_OK) else None


if __name__ == "__main__":
    binary = _binary()
    if binary is not None:
        os.execv(binary, [binary, *sys.argv[1:]])  # noqa: S606
    from vx.cli.entry import entry

    sys.argv[0] = "vx"
    entry()
