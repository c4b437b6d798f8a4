"""Prepare, schedule, execute and record a run.

`vx.run` is both this package and the public `vx.run(options, sink)`: once any part of the
engine is imported, Python binds the package to the name `run` on `vx`, so the package itself
is made callable and forwards to `vx.run.prepare.run`.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vx.run.outcome import RunOutcome
    from vx.run.prepare import RunOptions, Sink

__all__: list[str] = []


class _CallablePackage(ModuleType):
    def __call__(self, options: RunOptions, sink: Sink | None = None) -> RunOutcome:
        from vx.run.prepare import run

        return run(options, sink)


sys.modules[__name__].__class__ = _CallablePackage
