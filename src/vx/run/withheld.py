"""Which of vx's variables a failed task was not given, by name, for the end of its frame.

A task sees only the variables it declares; a build that needs `DATABASE_URL` and was not told
fails with an error that says nothing of vx. So a failed task's frame names what vx had and
kept back. Not everything: a shell session carries dozens of variables no build reads (the
prompt, the terminal, the desktop session, the ssh agent, `npm run`'s own `npm_*` set), and a
list full of them hides the one that matters. The rule, documented in docs/config.md:

- vx's own (`VX_*`) and the session and terminal variables below are never listed;
- every other variable vx had and the task did not get is listed by name: first those the
  task's command or output mentions, then the rest, sorted (the frame shows the first
  twelve, then a count of the rest). Values are never shown.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

# The shell, the terminal and the login session: what they describe is where a person sits,
# never what a build reads.
SESSION = frozenset(
    {
        "_",
        "COLORTERM",
        "COLUMNS",
        "DBUS_SESSION_BUS_ADDRESS",
        "DESKTOP_SESSION",
        "DISPLAY",
        "EDITOR",
        "GPG_AGENT_INFO",
        "GPG_TTY",
        "HISTCONTROL",
        "HISTFILE",
        "HISTFILESIZE",
        "HISTSIZE",
        "HOSTNAME",
        "HOSTTYPE",
        "INFOPATH",
        "INSIDE_EMACS",
        "LESS",
        "LESSCLOSE",
        "LESSOPEN",
        "LINES",
        "LOGNAME",
        "LS_COLORS",
        "LSCOLORS",
        "MACHTYPE",
        "MAIL",
        "MAILCHECK",
        "MANPAGER",
        "MANPATH",
        "MOTD_SHOWN",
        "OLDPWD",
        "OSTYPE",
        "PAGER",
        "PROMPT_COMMAND",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "PWD",
        "SESSION_MANAGER",
        "SHLVL",
        "SSH_AGENT_PID",
        "SSH_AUTH_SOCK",
        "SSH_CLIENT",
        "SSH_CONNECTION",
        "SSH_TTY",
        "STY",
        "TMUX",
        "TMUX_PANE",
        "VISUAL",
        "VTE_VERSION",
        "WAYLAND_DISPLAY",
        "WINDOWID",
        "XAUTHORITY",
    }
)
SESSION_PREFIXES = (
    "VX_",  # vx's own knobs
    "XDG_",  # the desktop session's directories
    "TERM_",  # TERM_PROGRAM, TERM_SESSION_ID: which terminal app
    "ITERM_",
    "KONSOLE_",
    "GNOME_",
    "KDE_",
    "BASH_FUNC_",  # exported shell functions
    "npm_",  # what `npm run` sets for vx itself: its config, package and lifecycle
)


def withheld(base: Mapping[str, str], given: Mapping[str, str], said: str = "") -> tuple[str, ...]:
    """The names worth telling: in `base` (vx's environment), not in `given`, not session.

    Those `said` (the task's command and output) names come first, as an error that says
    `DATABASE_URL is not set` points at the one that matters; then the rest, sorted.
    """
    names = [
        name
        for name in base
        if name not in given and name not in SESSION and not name.startswith(SESSION_PREFIXES)
    ]
    if not names:
        return ()
    mentioned = _mentioned(names, said)
    return tuple(sorted(names, key=lambda n: (n not in mentioned, n)))


def _mentioned(names: list[str], text: str) -> frozenset[str]:
    if not text:
        return frozenset()
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    found = re.finditer(rf"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])", text)
    return frozenset(m.group(0) for m in found)
