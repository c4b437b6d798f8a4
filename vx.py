#!/usr/bin/env python3
"""Run vx from a checkout (`python vx.py run build`); also the entry the zipapp and binary build."""

import sys
from pathlib import Path

_SRC = Path(__file__).resolve().parent / "src"
if _SRC.is_dir():
    # First, even when an editable install already lists it: this file's own directory sits
    # at sys.path[0], and a later src would leave `import vx` finding this script instead.
    if str(_SRC) in sys.path:
        sys.path.remove(str(_SRC))
    sys.path.insert(0, str(_SRC))

from vx.cli.main import entry  # noqa: E402

if __name__ == "__main__":
    entry()
