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


_SAFE_SHELL = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_#^"
)


def escape_controls(text: str) -> str:
    """`text` with every control character as `\\xNN`, so a file name cannot drive a terminal."""
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in text)


def shell_quote(word: str) -> str:
    """`word` as a POSIX shell reads it back: bare when it holds only safe characters, else in
    single quotes (`shlex.quote`'s rule without importing `shlex` and `re` on every run)."""
    if word and all(ch in _SAFE_SHELL for ch in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"
