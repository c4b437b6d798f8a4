"""vx replacing itself: how this vx was installed, the release it reads, the verified swap."""

from __future__ import annotations

__all__ = ["fetch", "origin", "release", "swap"]
