"""Tasks read live from turbo.json, nx.json and project.json, as vx task configs."""

__all__: list[str] = []
