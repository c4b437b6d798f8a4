"""Lockfile readers, one per format, and the per-project closure they feed."""

__all__: list[str] = []
