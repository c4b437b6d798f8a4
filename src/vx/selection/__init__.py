"""Which projects a run selects: the --filter DSL, changed files and the affected set."""

__all__: list[str] = []
