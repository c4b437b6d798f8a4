"""argv to verbs: flag parsing, help text, dispatch."""

__all__: list[str] = []
