"""Prepare, schedule, execute and record a run."""

__all__: list[str] = []
