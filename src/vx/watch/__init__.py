"""The watch loop."""

__all__: list[str] = []
