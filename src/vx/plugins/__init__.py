"""Plugins: `module:factory` entries of `vx.workspace.*`, and the seams they fill.

A plugin is a `Plugin` value a factory returns. It may fill three seams: `cache` (a remote
cache layer under the local one), `commands` (verbs core does not have) and `telemetry` (every
event of a run). `vx.plugins.turbo:plugin` and `vx.plugins.reapi:plugin` are built in.
"""

from __future__ import annotations

from vx.plugins.model import CacheContext, CacheOff, Command, CommandContext, Plugin

__all__ = ["CacheContext", "CacheOff", "Command", "CommandContext", "Plugin"]
