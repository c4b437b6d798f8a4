"""Adoption by observation: `vx init --observe` runs each new task under the tracer (`vx.trace`)
and writes the cache block its reads and writes call for. Imported by `vx init --observe` only."""
