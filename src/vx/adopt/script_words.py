"""Reading package.json scripts as shell: segments, the scripts a line runs, servers, outputs.

`vx init` maps scripts to tasks by what their commands do; this module answers those
questions about one command line, and knows nothing of packages or files.
"""

from __future__ import annotations

import re
import shlex

from vx.util.record import Record

MANAGERS = frozenset({"npm", "pnpm", "pn", "yarn", "bun"})
OPERATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&"})
LAUNCHERS = frozenset({"npx", "bunx", "cross-env", "dotenv", "env", "pnpx", "time", "nice"})


def _verbs(text: str) -> frozenset[str]:
    return frozenset(text.split())


# The verbs each manager keeps for itself: `pnpm install` is never a script called install.
MANAGER_VERBS: dict[str, frozenset[str]] = {
    "npm": _verbs(
        "add audit cache ci config dedupe docs exec fund i info init install link login ls "
        "outdated pack prune publish query rebuild uninstall update version view whoami x"
    ),
    "pnpm": _verbs(
        "add approve-builds audit bin config create dedupe deploy dlx docs env exec fetch i "
        "import init install licenses link list ls m multi outdated pack patch patch-commit "
        "prune publish rebuild recursive remove rm root self-update server setup store unlink "
        "up update version why"
    ),
    "yarn": _verbs(
        "add autoclean bin cache check config constraints create dedupe dlx exec explain "
        "generate-lock-entry global import info init install licenses link login logout node "
        "npm outdated owner pack patch patch-commit plugin policies publish rebuild remove "
        "search set stage tag team unlink up upgrade upgrade-interactive version why "
        "workspace workspaces"
    ),
    "bun": _verbs(
        "a add audit build create deploy exec i info init install link outdated patch pm "
        "publish remove repl rm test unlink update upgrade why x"
    ),
}
YARN_BUILTIN_RUN = "run"
NPM_SHORTCUTS = frozenset({"test", "t", "start", "stop", "restart"})
SERVER_VERBS = frozenset({"dev", "serve", "start", "preview"})
SERVERS = frozenset({"serve", "http-server", "live-server", "nodemon", "browser-sync"})
# Flags that make a server-shaped command (`karma start`) run once and exit.
ONE_SHOT = frozenset({"--single-run", "--singleRun", "--no-watch"})
WATCH_W_TOOLS = frozenset({"tsc", "rollup", "tsup", "babel", "esbuild", "vitest", "jest"})
RUNNERS = frozenset({"run-s", "run-p", "npm-run-all", "npm-run-all2"})
# Programs whose arguments name scripts, commands or URLs to run or wait for, not a verb of
# their own: `start-server-and-test start http://localhost:3000 cy` runs tests and exits.
COMMAND_RUNNERS = RUNNERS | frozenset(
    {"start-server-and-test", "server-test", "start-test", "concurrently", "wait-on"}
)
WORKSPACE_TOOLS = frozenset({"turbo", "nx", "lerna", "vx", "vp", "ultra", "wireit"})
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_NPM_VAR = re.compile(r"\$\{?(npm_[A-Za-z0-9_]+)")
_NAME_SPLIT = re.compile(r"[:._-]")

Segment = tuple[str, ...]


class Line(Record):
    """A command cut at its operators: each segment's words, and whether it runs in the
    background (`&`), which no server detection may count."""

    segments: tuple[Segment, ...]
    background: tuple[bool, ...]
    readable: bool  # False: quotes that do not close, so nothing about it is inferred


def read_line(command: str) -> Line:
    """`command` as segments of words, quotes removed; an unreadable one is one opaque segment."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        return Line(((command,),), (False,), readable=False)
    segments: list[Segment] = []
    background: list[bool] = []
    current: list[str] = []
    for word in tokens:
        if word in OPERATORS or (word and set(word) <= set(";&|")):
            if current:
                segments.append(tuple(current))
                background.append(word == "&")
            current = []
            continue
        current.append(word)
    if current:
        segments.append(tuple(current))
        background.append(False)
    return Line(tuple(segments), tuple(background), readable=True)


def program(words: Segment) -> tuple[str, Segment]:
    """The program a segment runs past env assignments and launchers (`cross-env X=1 vite`,
    `npx --package netlify-cli netlify dev`), and its arguments."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGN.match(word):
            i += 1
            continue
        if word in LAUNCHERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                takes_value = words[i] in ("--package", "-p")
                i += 2 if takes_value else 1
            continue
        if (
            word in ("pnpm", "yarn", "bun")
            and i + 1 < len(words)
            and words[i + 1]
            in (
                "dlx",
                "exec",
                "x",
            )
        ):
            i += 2
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in ("--package", "-p") else 1
            continue
        break
    if i >= len(words):
        return "", ()
    return words[i].rsplit("/", 1)[-1], words[i + 1 :]


def script_run(words: Segment, scripts: frozenset[str]) -> str | None:
    """The script of this package a segment runs through its manager, if it is only that:
    `npm run x`, `pnpm x`, `yarn run x`, `bun run x`, `npm test`. A manager's own verb
    (`pnpm install`, `bun test`, `yarn check`) is not a script. Yarn 2+'s shell builtin
    `run x` counts too (no other shell has a `run`)."""
    name, args = program(words)
    if name == YARN_BUILTIN_RUN:
        return args[0] if args and args[0] in scripts else None
    if name not in MANAGERS or not args:
        return None
    manager = "pnpm" if name == "pn" else name
    first = args[0]
    if first in ("run", "run-script", "rs"):
        return args[1] if len(args) > 1 and args[1] in scripts else None
    if first.startswith("-"):
        return None
    if manager == "npm":
        target = "test" if first == "t" else first
        return target if first in NPM_SHORTCUTS and target in scripts else None
    if first in MANAGER_VERBS[manager] or first not in scripts:
        return None
    return first


def delegate(command: str, scripts: frozenset[str]) -> str | None:
    """The script `command` is nothing but a manager's run of: such a script is a group."""
    line = read_line(command)
    if not line.readable or len(line.segments) != 1:
        return None
    words = line.segments[0]
    if words[0] not in MANAGERS and words[0] != YARN_BUILTIN_RUN:
        return None  # an env prefix or launcher makes it a real command
    args = words[1:]
    target = script_run(words, scripts)
    if target is None:
        return None
    run_words = 3 if words[0] in MANAGERS and args[0] in ("run", "run-script", "rs") else 2
    return target if len(words) == run_words else None


def scripts_run(words: Segment, scripts: frozenset[str]) -> tuple[str, ...]:
    """Every script of this package a segment runs: through its manager, `run-s`/`run-p`
    (globs like `build:*` included), or `concurrently "npm:x"`."""
    direct = script_run(words, scripts)
    if direct is not None:
        return (direct,)
    name, args = program(words)
    found: list[str] = []
    if name in RUNNERS:
        for arg in args:
            if arg.startswith("-"):
                continue
            found.extend(s for s in sorted(scripts) if _glob(arg).fullmatch(s))
    elif name == "concurrently":
        for arg in args:
            if arg.startswith("-"):
                continue
            head, _, target = arg.partition(":")
            if head in ("npm", "pnpm", "yarn", "bun") and target:
                found.extend(s for s in sorted(scripts) if _glob(target).fullmatch(s))
                continue
            for inner in read_line(arg).segments:
                if inner != words:
                    found.extend(scripts_run(inner, scripts))
    return tuple(dict.fromkeys(found))


def _glob(pattern: str) -> re.Pattern[str]:
    """npm-run-all's script glob: `*` stays inside one `:` part, `**` crosses them."""
    return re.compile(re.escape(pattern).replace(r"\*\*", ".*").replace(r"\*", "[^:]*"))


def uses_runner(words: Segment) -> bool:
    """The segment runs scripts through `run-s`, `run-p` or `npm-run-all`."""
    return program(words)[0] in RUNNERS


def watches_or_serves(words: Segment) -> bool:
    """The segment starts a watcher or a server: one that never exits on its own."""
    name, args = program(words)
    if not name or name in MANAGERS or name in COMMAND_RUNNERS:
        return False
    if name in SERVERS:
        return True
    if any(a in ONE_SHOT for a in args):
        return False
    if any(a in ("--watch", "--watchAll") or a.startswith("--watch=") for a in args):
        return True
    if name in WATCH_W_TOOLS and "-w" in args:
        return True
    if name == "vite":
        verbs = [a for a in args if not a.startswith("-")]
        return not verbs or verbs[0] not in ("build", "optimize")
    return bool(args) and args[0] in SERVER_VERBS


def watch_name(name: str) -> bool:
    """A script name that says it never exits: dev, start, serve, preview, or a watch part."""
    return name in SERVER_VERBS or name == "watch" or "watch" in _NAME_SPLIT.split(name)


def npm_variables(command: str) -> tuple[str, ...]:
    """The `$npm_*` variables a command reads, in first-use order."""
    return tuple(dict.fromkeys(_NPM_VAR.findall(command)))


def workspace_part(words: Segment, members: tuple[str, ...], here: str) -> str | None:
    """The words of a segment that run other members' work, or None.

    `members` are the members' root-relative dirs and `here` this package's, `.` for the
    root: a `cd` or `-C`/`--cwd`/`--prefix` into another member counts, a directory inside
    this package does not. A flag counts on the manager, never on the program it runs.
    """
    name, args = program(words)
    shown = " ".join(words)
    if name in WORKSPACE_TOOLS:
        return shown
    if name == "cd" and args:
        return shown if _other_member(args[0], members, here) else None
    if name not in MANAGERS:
        return None
    manager = "pnpm" if name == "pn" else name
    own_list = _manager_list(manager, args)
    own = frozenset(own_list)
    filtered = any(w.startswith(("--filter=", "--workspace=")) for w in own)
    if manager == "pnpm" and (own & {"-r", "--recursive", "--filter", "-F"} or filtered):
        return shown
    if manager == "yarn" and args and args[0] in ("workspace", "workspaces"):
        return shown
    if manager == "npm" and (own & {"--workspaces", "-ws", "--workspace", "-w"} or filtered):
        return shown
    if manager == "bun" and (own & {"--filter", "-F", "--workspaces"} or filtered):
        return shown
    for flag in ("-C", "--dir", "--cwd", "--prefix"):
        for i, word in enumerate(own_list):
            target = None
            if word == flag and i + 1 < len(own_list):
                target = own_list[i + 1]
            elif word.startswith(flag + "="):
                target = word.partition("=")[2]
            if target is not None and _other_member(target, members, here):
                return shown
    return None


def _manager_list(manager: str, args: Segment) -> Segment:
    """A manager's own words: up to `exec`/`dlx`/`node`, whose words are the program's."""
    out: list[str] = []
    for word in args:
        if word == "exec" or (manager != "npm" and word in ("dlx", "node", "x")):
            break
        out.append(word)
    return tuple(out)


def _other_member(target: str, members: tuple[str, ...], here: str) -> bool:
    """`target` (relative to `here`) is another member's dir or one above a member."""
    import posixpath

    base = "" if here == "." else here
    path = posixpath.normpath(posixpath.join(base, target))
    if path.startswith("../") or path == "..":
        return False
    if path == ".":
        return here != "." and bool(members)
    for member in members:
        if member == here:
            continue
        if member == path or member.startswith(path + "/"):
            if here != "." and (here == path or here.startswith(path + "/")):
                continue
            return True
    return False
