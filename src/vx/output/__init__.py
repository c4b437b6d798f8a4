"""Frames, one-liners, footer, live region and colours."""

__all__: list[str] = []
