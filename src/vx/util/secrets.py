"""What makes a variable's name look like it holds a secret, and which values are worth masking.

One rule for the three places that ask: a task's log masks such a variable's value, `vx lock`
refuses to commit a config that evaluated to one, and a failed task's frame names one it was
not given. A name looks secret when it holds any of the words below anywhere (`GH_TOKEN`,
`DB_PASSWD`, `OPENAI_API_KEY`, `APIKEY`): a false match only masks a harmless value or lists
one more name, a missed one prints a credential.
"""

from __future__ import annotations

SECRET_NAME_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "KEY")
MIN_SECRET_LENGTH = 4
"""Shorter values are not masked: `***` in place of every `on` or `123` would eat the log."""


def secret_name(name: str) -> bool:
    """The variable `name` looks like it holds a credential."""
    upper = name.upper()
    return any(word in upper for word in SECRET_NAME_WORDS)


def maskable(value: str) -> bool:
    """`value` is long enough to mask without eating ordinary words."""
    return len(value) >= MIN_SECRET_LENGTH
