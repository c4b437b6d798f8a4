"""setuptools' hook for `pip install .`: the wheel it builds carries the manual and the schemas.

`vx docs` and the JSON Schemas read `vx/_data/docs` and `vx/_data/schemas` inside the package
(vx.util.shipped), which build/wheels.py and build/pyz.py fill from the repository's `docs/`
and `schemas/`. Those folders sit outside `src/`, where setuptools' package data cannot reach,
so this build step copies the same files in. An editable install has no copy: it reads the
checkout's own folders.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = (("docs", "*.md"), ("schemas", "*.json"))


class BuildWithManual(build_py):
    """build_py, then the manual and the schemas into the built package's `_data`."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for kind, pattern in SHIPPED:
            dest = Path(self.build_lib, "vx", "_data", kind)
            dest.mkdir(parents=True, exist_ok=True)
            for path in sorted((ROOT / kind).glob(pattern)):
                shutil.copyfile(path, dest / path.name)


setup(cmdclass={"build_py": BuildWithManual})
