"""Remote cache layers: the wire clients (one module per protocol) and the layer over local."""

from __future__ import annotations

__all__: list[str] = []
