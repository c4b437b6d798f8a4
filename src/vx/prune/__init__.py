"""`vx prune`: a copy of the workspace cut down to some projects, for a Docker build."""

__all__: list[str] = []
