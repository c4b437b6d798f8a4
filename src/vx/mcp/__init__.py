"""`vx mcp`: a Model Context Protocol server over what vx knows (`vx-runner[mcp]`).

`answers` reads the history and plans, as data; `server` lists them as tools over stdio
with the official SDK, which only `vx mcp` imports.
"""

from __future__ import annotations

__all__: list[str] = []
