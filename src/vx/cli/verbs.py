"""The one table of vx's verbs: what `vx help` lists, what dispatch imports, what a typo is near.

Only a verb that works has a row: the help, the did-you-mean and the completions all read
this table, so a row for an unbuilt verb would advertise it.

Adding a verb takes a row here and a module `vx.cli.<name>` that holds three things:

    COMMAND: parser.Command
        The verb's flag table (parser.Flag rows), its positional words and whether it takes
        args after `--`. The parser, `vx <verb> --help` and the completions all read it, and
        a test holds the row's synopsis to it: the synopsis spells every flag of the table,
        or says [OPTIONS] and spells none the table lacks.
    resolve(args: parser.ParsedArgs, env: Mapping[str, str], cwd: Path) -> <Verb>Settings
        Turns the parsed args (and env, cwd, workspace config) into a frozen settings value
        (settings.py); every user mistake it finds raises UserError.
    execute(settings: <Verb>Settings, streams: settings.Streams) -> int
        Calls the engine, renders what it returns on `streams`, returns the exit code.

The module is imported only when its verb runs, so its top level imports nothing heavy:
engine modules load inside `execute`.
"""

from __future__ import annotations

from vx.util.record import Record


class Verb(Record):
    """One verb: where it lives, how it is called, and what it does in one line."""

    name: str
    module: str
    synopsis: tuple[str, ...]
    summary: str


VERBS: tuple[Verb, ...] = (
    Verb(
        "run",
        "vx.cli.run",
        ("vx run [OPTIONS] [TASK | PKG#TASK ...] [-- forwarded-args...]",),
        "run tasks in dependency order, in parallel",
    ),
    Verb(
        "watch",
        "vx.cli.watch",
        ("vx watch [OPTIONS] TASK [-- forwarded-args...]",),
        "run a task, then again on every edit to the projects it can reach",
    ),
    Verb(
        "show",
        "vx.cli.show",
        (
            (
                "vx show [PROJECT[#TASK] | TASK] [--filter <pattern>] [--affected[=<base>]]"
                " [--format pretty|json]"
            ),
        ),
        "print the workspace's projects, or the tasks a name resolves to, as a run sees them",
    ),
    Verb(
        "info",
        "vx.cli.info",
        ("vx info [--format pretty|json] [--cache-dir <path>]",),
        "print the facts a bug report needs: versions, workers, git, the cache, flaky tasks",
    ),
    Verb(
        "cache",
        "vx.cli.cache",
        (
            (
                "vx cache prune [--older-than <duration>] [--max-size <size>] [--dry-run]"
                " [--format pretty|json] [--cache-dir <path>]"
            ),
        ),
        "evict old or oversized cache entries and reap files no entry names",
    ),
    Verb(
        "last",
        "vx.cli.last",
        (
            (
                "vx last [RUNID] [--list[=N]] [--failed] [--log PKG#TASK] [--format pretty|json]"
                " [--cache-dir <path>]"
            ),
        ),
        "replay a recorded run: its verdict, its tasks, what failed and how to re-run it",
    ),
    Verb(
        "why",
        "vx.cli.why",
        ("vx why (TASK | PKG#TASK) [--run RUNID] [--format pretty|json] [--cache-dir <path>]",),
        "explain why a task re-ran: its key's components against its previous run's",
    ),
    Verb(
        "audit",
        "vx.cli.audit",
        ("vx audit [--suggest | --apply] [--cache-dir <path>]",),
        "list what the last audited runs found, or turn it into config changes",
    ),
    Verb(
        "mcp",
        "vx.cli.mcp",
        ("vx mcp [--allow-run] [--cache-dir <path>]",),
        "serve the history, failures, miss reasons and plans to an MCP client over stdio",
    ),
    Verb(
        "init",
        "vx.cli.init",
        (
            (
                "vx init [--dry | --observe] [--force] [--toml | --py] [--native | --keep]"
                " [--format pretty|json]"
            ),
        ),
        "write a vx.config per package from its package.json scripts",
    ),
    Verb(
        "lock",
        "vx.cli.lock",
        ("vx lock [--check] [--format pretty|json]",),
        "freeze every project's evaluated config into vx-lock.json, or audit it (--check)",
    ),
    Verb(
        "prune",
        "vx.cli.prune",
        ("vx prune <project...> [--out-dir <dir>] [--docker] [--production] [--untracked]",),
        "copy some projects and what they depend on, with pruned lockfiles, for a Docker build",
    ),
    Verb(
        "migrate",
        "vx.cli.migrate",
        ("vx migrate [--from turbo|nx] [--dry] [--force]",),
        "write native vx.config.json files from turbo.json or nx.json",
    ),
    Verb(
        "upgrade",
        "vx.cli.upgrade",
        ("vx upgrade [TAG]",),
        "replace this vx (the binary or vx.pyz) with a release's, checked against its SHA-256",
    ),
    Verb(
        "completions",
        "vx.cli.completion.completions",
        ("vx completions bash|zsh|fish",),
        "print a shell completion script for verbs, flags, flag values and task names",
    ),
    Verb(
        "docs",
        "vx.cli.docs",
        ("vx docs <query> [--limit <n>] [--format pretty|json]",),
        "search the manual shipped with vx, offline",
    ),
    Verb(
        "help",
        "vx.cli.help",
        ("vx help [VERB]",),
        "print this overview, or one verb's usage and flags",
    ),
    Verb(
        "worker",
        "vx.cli.worker",
        ("vx worker [--url URL] [--instance NAME] [--dir DIR]",),
        "run REAPI actions a server (BuildGrid) leases, for `vx run --executor reapi`",
    ),
    Verb(
        "version",
        "vx.cli.version",
        ("vx version",),
        "print vx's version (vx --version does the same)",
    ),
)


def find(name: str) -> Verb | None:
    """The verb called `name`."""
    for verb in VERBS:
        if verb.name == name:
            return verb
    return None


def names() -> tuple[str, ...]:
    """Every verb's name, in table order."""
    return tuple(v.name for v in VERBS)
