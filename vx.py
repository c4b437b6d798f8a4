#!/usr/bin/env python3
"""Run vx from a checkout (`python vx.py run build`); also the entry the zipapp and binary build."""

import os
import sys

# os.path, not pathlib: pathlib's import alone costs `vx --version` as much as the rest of it.
_SRC = os.path.join(os.path.dirname(os.path.realpath(__file__)), "src")  # noqa: PTH118, PTH120
if os.path.isdir(_SRC):  # noqa: PTH112
    # First, even when an editable install already lists it: this file's own directory sits
    # at sys.path[0], and a later src would leave `import vx` finding this script instead.
    if _SRC in sys.path:
        sys.path.remove(_SRC)
    sys.path.insert(0, _SRC)

from vx.cli.entry import entry  # noqa: E402

if __name__ == "__main__":
    entry()
