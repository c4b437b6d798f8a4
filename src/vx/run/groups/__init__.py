"""What surrounds task processes: their groups, the stop signals that reach them, the lifeline,
strays that leave them, and the terminal an interactive one holds."""

__all__: list[str] = []
