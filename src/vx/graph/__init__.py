"""dependsOn specs, the task graph, groups, cycles."""

__all__: list[str] = []
