"""Where the manual (`docs/`) and the JSON Schemas (`schemas/`) vx ships with are, per channel.

A build (zipapp, wheel) copies both into the package as `vx/_data/docs` and
`vx/_data/schemas`, read through importlib.resources so a zip archive serves them as well as a
directory. The Nuitka binary cannot hold a `vx/` directory beside its `vx` executable, so it
carries them in `share/` beside itself. A checkout or an editable install has no copy: there
they are the repository's own `docs/` and `schemas/`, two levels above the package.
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

Shipped = Literal["docs", "schemas"]
DATA_DIR = "_data"


def shipped_dir(kind: Shipped) -> Traversable | None:
    """The directory of shipped `kind` files, or None when this vx carries none."""
    if "__compiled__" in globals():
        beside = Path(sys.executable).resolve().parent / "share" / kind
        return beside if beside.is_dir() else None
    bundled = resources.files("vx") / DATA_DIR / kind
    if bundled.is_dir():
        return bundled
    util = os.path.dirname(os.path.abspath(__file__))  # noqa: PTH100, PTH120
    repo = os.path.dirname(os.path.dirname(os.path.dirname(util)))  # noqa: PTH120
    checkout = Path(repo, kind)
    return checkout if checkout.is_dir() else None
