"""`vx watch`: watchers that prove delivery, the path and state judgement, and the loop."""

__all__: list[str] = []
