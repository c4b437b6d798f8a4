"""Assembling a Workspace from discovery, configs and the foreign readers; vx-lock.json over it."""

__all__: list[str] = []
