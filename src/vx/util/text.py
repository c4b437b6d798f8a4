"""Cutting user-supplied words down to a length a one-line message can echo."""

from __future__ import annotations

ECHO_LIMIT = 60


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """`text`, or its first `limit - 1` characters and an ellipsis when it is longer.

    A refusal echoes the name it refuses; a 10 000-character name would make the line
    unreadable, and its head is what the user needs to find it.
    """
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def clip_repr(value: object, limit: int = ECHO_LIMIT) -> str:
    """A short `repr` of any value a program handed vx, however large or deep it is."""
    import reprlib  # only a refusal of a `.py` config's odd value needs it

    shortened = reprlib.Repr()
    shortened.maxlevel = 3
    shortened.maxstring = shortened.maxother = limit
    return clip(shortened.repr(value), limit)
