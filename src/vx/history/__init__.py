"""The read side of the run history."""

__all__: list[str] = []
