"""vx's own manual, searched offline: the shipped docs cut into sections and ranked."""

from __future__ import annotations

__all__ = ["search"]
