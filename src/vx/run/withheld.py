"""Which of vx's variables a failed task was not given, by name, for the end of its frame.

A task sees only the variables it declares; a build that needs `DATABASE_URL` and was not told
fails with an error that says nothing of vx. So a failed task's frame names what vx had and
kept back. Not all of it: a shell carries dozens of variables no build reads (the prompt, the
terminal, the ssh agent, the CA paths of every other tool, `npm run`'s own `npm_*` set), and a
list of forty names hides the one that matters. The rule, documented in docs/config.md, lists
a kept-back variable when

- the task's command or output names it (`DATABASE_URL is not set`), or
- its name says it points a program at a service or holds a credential: it ends in `_URL`,
  `_URI`, `_DSN`, `_HOST`, `_PORT`, `_ENDPOINT`, `_REGION` or `_PROFILE`, or it looks secret
  as util/secrets.py says (`TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`, `KEY`);

never vx's own (`VX_*`) or the session's. Names the output mentions come first, then the
rest, sorted; values are never shown.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from vx.util.secrets import secret_name

if TYPE_CHECKING:
    from collections.abc import Mapping

# The shell, the terminal and the login session: what they describe is where a person sits,
# never what a build reads (not listed even when an output names one).
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
# On top of the secret-looking names (util/secrets.py): what points a program at a service.
_SERVICE = re.compile(r"_(?:URL|URI|DSN|HOST|PORT|ENDPOINT|REGION|PROFILE)$")
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
    """The names worth telling, of those in `base` (vx's environment) and not in `given`."""
    names = [
        name
        for name in base
        if name not in given and name not in SESSION and not name.startswith(SESSION_PREFIXES)
    ]
    if not names:
        return ()
    mentioned = _mentioned(names, said)
    kept = [n for n in names if n in mentioned or secret_name(n) or _SERVICE.search(n.upper())]
    return tuple(sorted(kept, key=lambda n: (n not in mentioned, n)))


def _mentioned(names: list[str], text: str) -> frozenset[str]:
    if not text:
        return frozenset()
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    found = re.finditer(rf"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])", text)
    return frozenset(m.group(0) for m in found)
