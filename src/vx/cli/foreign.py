"""What a Turborepo, Nx or Vite Task user types into `vx run`: one table, read before the parse.

Each row says whether vx takes the flag as it is (`same`), rewrites it into its own spelling
before the parse (`alias`), or refuses it with the vx way to say it (`refuse`), so no such
flag is dropped in silence or met with an unrelated "did you mean". The help's section, the
rewrite and the per-row tests all read ROWS. A row that needs a vx flag the verb does not
have yet (`needs`) refuses, naming it, until that flag lands.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, NoReturn

from vx.cli.parser import Section
from vx.errors import ErrorCode, UserError
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from vx.cli.parser import Command


class Outcome(StrEnum):
    """What vx does with a foreign flag."""

    SAME = "same"
    ALIAS = "alias"
    REFUSE = "refuse"


class Arg(StrEnum):
    """What a foreign flag reads after its name."""

    NONE = "none"  # a switch
    VALUE = "value"  # `--x v` or `--x=v`
    BOOL = "bool"  # bare or `=true` (on), `=false` (left out)
    OPTIONAL = "optional"  # bare, or a value after `=` only
    NUMBER = "number"  # `=<n>`, or a following word of digits; bare falls to the next row


class Row(Record):
    """One foreign flag: its spellings, what it reads, what vx does, and the words it becomes.

    `when` narrows the row to some values (`--output-logs=new-only`). `becomes` turns the
    value into vx's words for an alias (None for a `same` row: the words stay). `answer` is
    the help's text and, for a refusal, what the one-line refusal tells the user to do.
    """

    runner: str
    names: tuple[str, ...]
    shown: str
    outcome: Outcome
    answer: str
    arg: Arg = Arg.NONE
    when: Callable[[str | None], bool] | None = None
    becomes: Callable[[str | None], tuple[str, ...]] | None = None
    needs: str | None = None


def _to(*words: str) -> Callable[[str | None], tuple[str, ...]]:
    return lambda _value: words


def _with(flag: str) -> Callable[[str | None], tuple[str, ...]]:
    return lambda value: (f"{flag}={value}",) if value is not None else (flag,)


def _items(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _nx_projects(value: str | None) -> tuple[str, ...]:
    """Nx's `-p a,b,!c`: a filter per project; a list opening with `!` starts from all."""
    items = _items(value)
    out = ["--filter=*"] if items and items[0].startswith("!") else []
    for item in items:
        bang = "!" if item.startswith("!") else ""
        name = item.removeprefix("!")
        if name.startswith("directory:"):
            name = "./" + name.removeprefix("directory:")
        elif name.startswith("name:"):
            name = name.removeprefix("name:")
        out.append(f"--filter={bang}{name}")
    return tuple(out)


def _nx_parallel(value: str | None) -> tuple[str, ...]:
    return ("--concurrency=1",) if value == "false" else (f"--concurrency={value}",)


def _not_dot(value: str | None) -> bool:
    return value is not None and bool(value) and not value.endswith(".dot")


def _is(*values: str) -> Callable[[str | None], bool]:
    return lambda value: value in values


def _number_or_false(value: str | None) -> bool:
    return value is not None and (value.isdigit() or value == "false")


_FRAMES = "vx frames each task's output: --output-logs <mode> sets how much"
_DROP = ": drop it"
T, N, V = "turbo", "nx", "vp"
S, A, R = Outcome.SAME, Outcome.ALIAS, Outcome.REFUSE

ROWS: tuple[Row, ...] = (
    Row(T, ("--filter",), "--filter <v>", S, "--filter, the same grammar ([ref], {dir}, ^, !)",
        Arg.VALUE),
    Row(T, ("-F",), "-F <v>", A, "--filter <v>", Arg.VALUE, becomes=_with("--filter")),
    Row(T, ("--concurrency",), "--concurrency <v>", S, "--concurrency <n|n%>", Arg.VALUE),
    Row(T, ("--continue",), "--continue=dependencies-successful", A, "--continue=deps-ok",
        Arg.OPTIONAL, when=_is("dependencies-successful"), becomes=_to("--continue=deps-ok")),
    Row(T, ("--continue",), "--continue", S, "--continue[=never|deps-ok|always]", Arg.OPTIONAL),
    Row(T, ("--dry-run",), "--dry-run", A, "--dry[=text|json]", Arg.OPTIONAL,
        becomes=_with("--dry"), needs="--dry"),
    Row(T, ("--graph",), "--graph=<file>.svg|png|json|html|…", R,
        "vx writes Graphviz DOT only: --graph=<file>.dot, then dot -Tsvg", Arg.OPTIONAL,
        when=_not_dot, needs="--graph"),
    Row(T, ("--graph",), "--graph", S, "--graph[=<file>.dot]", Arg.OPTIONAL, needs="--graph"),
    Row(T, ("--force",), "--force[=<bool>]", S, "--force: no cache reads, fresh writes", Arg.BOOL),
    Row(T, ("--affected",), "--affected", S, "--affected[=<base>]", Arg.OPTIONAL,
        needs="--affected"),
    Row(T, ("--summarize",), "--summarize[=<bool>]", S, "--summarize[=<path>]", Arg.BOOL),
    Row(T, ("--output-logs",), "--output-logs=new-only", R,
        "use --output-logs=full (a cache hit replays its log) or errors-only", Arg.VALUE,
        when=_is("new-only")),
    Row(T, ("--output-logs",), "--output-logs <v>", S,
        "--output-logs full|errors-only|hash-only|none", Arg.VALUE),
    Row(T, ("--no-cache",), "--no-cache", S,
        "--no-cache reads nothing either; Turbo's (reads, no writes) is --cache local:r"),
    Row(T, ("--cache",), "--cache <v>", S, "--cache local:rw", Arg.VALUE),
    Row(T, ("--cache-dir",), "--cache-dir <v>", S, "--cache-dir <path>", Arg.VALUE),
    Row(T, ("--profile",), "--profile", S, "--profile[=<path>] (Chrome trace)", Arg.OPTIONAL,
        needs="--profile"),
    Row(T, ("--only",), "--only", A, "--exclude-dependencies",
        becomes=_to("--exclude-dependencies")),
    Row(T, ("--include-dependencies",), "--include-dependencies", R,
        "vx already runs what dependsOn reaches: drop it (--exclude-dependencies leaves it out)"),
    Row(T, ("--color",), "--color", R, "set FORCE_COLOR=1"),
    Row(T, ("--no-color",), "--no-color", R, "set NO_COLOR=1"),
    Row(T, ("--heap", "--trace"), "--heap <v>, --trace <v>", R,
        "vx has no heap or trace profile of its own: drop it", Arg.VALUE),
    Row(T, ("--login",), "--login <v>", R,
        "vx has no login: the turbo remote-cache plugin reads TURBO_TOKEN (docs/plugins.md)",
        Arg.VALUE),
    Row(T, ("--no-update-notifier",), "--no-update-notifier", R,
        "vx prints no update notice" + _DROP),
    Row(T, ("--skip-infer",), "--skip-infer", R, "vx runs the binary it is" + _DROP),
    Row(T, ("--root-turbo-json",), "--root-turbo-json <v>", R,
        "vx reads no turbo.json: declare tasks in each package's vx.config", Arg.VALUE),
    Row(T, ("--experimental-otel-",), "--experimental-otel-*", R,
        "vx traces a run when OTEL_EXPORTER_OTLP_ENDPOINT is set (vx-runner[otel])" + _DROP,
        Arg.OPTIONAL),
    Row(N, ("--parallel",), "--parallel <n>", A, "--concurrency <n> (--parallel=false is 1)",
        Arg.NUMBER, when=_number_or_false, becomes=_nx_parallel),
    Row(T, ("--parallel",), "--parallel", R,
        "vx always honours dependsOn; --concurrency <n> sets how many run at once", Arg.OPTIONAL),
    Row(T, ("--scope",), "--scope <v>", R, "use --filter <pkg>", Arg.VALUE),
    Row(T, ("--since",), "--since <v>", R, "use --filter '[<ref>]'", Arg.VALUE),
    Row(T, ("--remote-only",), "--remote-only[=<bool>]", R,
        "use --cache local:,remote:rw", Arg.BOOL),
    Row(T, ("--remote-cache-read-only",), "--remote-cache-read-only[=<bool>]", R,
        "use --cache local:rw,remote:r", Arg.BOOL),
    Row(T, ("--anon-profile",), "--anon-profile", R, "vx has no redacted profile" + _DROP),
    Row(T, ("--cache-workers",), "--cache-workers <v>", R, "vx sizes its own cache I/O" + _DROP,
        Arg.VALUE),
    Row(T, ("--cwd",), "--cwd <v>", R, "run vx from that directory: cd <dir> && vx run …",
        Arg.VALUE),
    Row(T, ("--dangerously-disable-package-manager-check",),
        "--dangerously-disable-package-manager-check", R,
        "vx reads no packageManager field" + _DROP),
    Row(T, ("--env-mode",), "--env-mode <v>", R,
        "vx passes only what a task declares: list the rest in exec.env.passThrough", Arg.VALUE),
    Row(T, ("--framework-inference",), "--framework-inference <v>", R,
        "vx infers no framework variables: declare them in cache.inputs.env", Arg.VALUE),
    Row(T, ("--global-deps",), "--global-deps <v>", R,
        "declare them in cache.inputs.workspaceFiles", Arg.VALUE),
    Row(T, ("--json",), "--json", R, "use --format json for the run's result on stdout"),
    Row(T, ("--log-file",), "--log-file", R, "use --summarize[=<path>] for the run's JSON record",
        Arg.OPTIONAL),
    Row(T, ("--preflight",), "--preflight", R,
        "vx's remote caches are plugins and take no preflight" + _DROP),
    Row(T, ("--remote-cache-timeout",), "--remote-cache-timeout <v>", R,
        "set TURBO_REMOTE_CACHE_TIMEOUT for the turbo remote-cache plugin", Arg.VALUE),
    Row(T, ("--single-package",), "--single-package", R,
        "a repo with no workspaces is one project already" + _DROP),
    Row(T, ("--token", "--team", "--api"), "--token <v>, --team <v>, --api <v>", R,
        "set TURBO_TOKEN, TURBO_TEAM and TURBO_API for the turbo remote-cache plugin",
        Arg.VALUE),
    Row(T, ("--no-daemon", "--daemon"), "--no-daemon, --daemon", R, "vx has no daemon" + _DROP),
    Row(T, ("--ui", "--log-order", "--log-prefix"), "--ui <v>, --log-order <v>, --log-prefix <v>",
        R, _FRAMES, Arg.VALUE),
    Row(N, ("-t", "--targets", "--target"), "-t <v>, --targets <v>, --target <v>", A,
        "the task names, positional: vx run build test", Arg.VALUE,
        becomes=lambda v: tuple(_items(v))),
    Row(N, ("-p", "--projects"), "-p <v>, --projects <v>", A,
        "--filter <pattern> per project (directory:<d> is ./<d>, name:<n> is <n>);"
        " a list opening with ! starts from all (--filter '*')", Arg.VALUE, becomes=_nx_projects),
    Row(N, ("--exclude",), "--exclude <v>", A, "--filter '!<pattern>' per project", Arg.VALUE,
        becomes=lambda v: tuple(f"--filter=!{p}" for p in _items(v))),
    Row(N, ("--base",), "--base <v>", A, "--affected=<ref>", Arg.VALUE,
        becomes=_with("--affected"), needs="--affected"),
    Row(N, ("--head",), "--head HEAD", A, "nothing: vx compares with the work tree", Arg.VALUE,
        when=_is("HEAD"), becomes=_to()),
    Row(N, ("--head",), "--head <v>", R,
        "vx compares with the work tree: check out the head first", Arg.VALUE),
    Row(N, ("--skip-nx-cache",), "--skip-nx-cache[=<bool>]", A, "--force", Arg.BOOL,
        becomes=_to("--force")),
    Row(N, ("--all",), "--all", S, "--all"),
    Row(N, ("--nx-bail",), "--nx-bail[=<bool>]", A, "--continue=never", Arg.BOOL,
        becomes=_to("--continue=never")),
    Row(N, ("-c", "--configuration"), "-c <v>, --configuration <v>", R,
        "a configuration is a task of its own: vx run <target>-<configuration>", Arg.VALUE),
    Row(N, ("--output-style",), "--output-style <v>", R, "use --output-logs <mode>", Arg.VALUE),
    Row(N, ("--uncommitted", "--untracked"), "--uncommitted, --untracked", R,
        "use --filter '[HEAD]' (the work tree against the last commit)"),
    Row(N, ("--max-parallel",), "--max-parallel <v>", A, "--concurrency <n>", Arg.VALUE,
        becomes=_with("--concurrency")),
    Row(N, ("--exclude-task-dependencies",), "--exclude-task-dependencies[=<bool>]", A,
        "--exclude-dependencies", Arg.BOOL, becomes=_to("--exclude-dependencies")),
    Row(N, ("--skip-remote-cache",), "--skip-remote-cache[=<bool>]", A,
        "--cache local:rw,remote:", Arg.BOOL, becomes=_to("--cache=local:rw,remote:")),
    Row(N, ("--verbose",), "--verbose", R, "use --verbosity 1 (adds the per-task table)"),
    Row(N, ("--files",), "--files <v>", R, "vx asks git what changed: --filter '[<base>]'",
        Arg.VALUE),
    Row(N, ("--batch",), "--batch", R, "vx runs one command per task" + _DROP),
    Row(N, ("--dte", "--use-agents"), "--dte, --use-agents", R, "vx distributes nothing" + _DROP),
    Row(N, ("--nx-ignore-cycles",), "--nx-ignore-cycles", R,
        "vx refuses a task cycle by name: break it"),
    Row(N, ("--runner",), "--runner <v>", R,
        "a remote cache is a plugin named in vx.workspace.*" + _DROP, Arg.VALUE),
    Row(N, ("--skip-sync",), "--skip-sync", R, "vx runs no sync generators" + _DROP),
    Row(N, ("--tui", "--no-tui", "--tui-auto-exit"), "--tui, --no-tui, --tui-auto-exit", R,
        _FRAMES),
    Row(N, ("--no-cloud",), "--no-cloud", R, "vx has no cloud" + _DROP),
    Row(V, ("-r", "--recursive"), "-r, --recursive", A, "--all", becomes=_to("--all")),
    Row(V, ("-w", "--workspace-root"), "-w, --workspace-root", A, "--filter // (the root project)",
        becomes=_to("--filter=//")),
    Row(V, ("--concurrency-limit",), "--concurrency-limit <v>", A, "--concurrency <n>", Arg.VALUE,
        becomes=_with("--concurrency")),
    Row(V, ("--ignore-depends-on",), "--ignore-depends-on", A, "--exclude-dependencies",
        becomes=_to("--exclude-dependencies")),
    Row(V, ("--fail-if-no-match",), "--fail-if-no-match", A,
        "nothing: a filter that matches nothing already fails the run", becomes=_to()),
    Row(V, ("--log",), "--log <v>", R, _FRAMES, Arg.VALUE),
    Row(V, ("--last-details",), "--last-details", R,
        "vx --summarize[=<path>] writes each run's record"),
)  # fmt: skip

_RUNNERS = {T: "Turbo", N: "Nx", V: "Vite Task"}


def _kebab(name: str) -> str:
    """Nx's camelCase spelling (`--nxBail`) as its kebab-case row (`--nx-bail`)."""
    if not name.startswith("--") or name.lower() == name:
        return name
    return "--" + "".join(f"-{c.lower()}" if c.isupper() else c for c in name[2:])


def _rows_for(name: str) -> list[Row]:
    return [
        row
        for row in ROWS
        if name in row.names
        or any(n.endswith("-") and name.startswith(n) and len(name) > len(n) for n in row.names)
    ]


def rewrite(command: Command, own: Sequence[str]) -> list[str]:
    """vx's own words for argv before `--`: aliases rewritten, refused flags refused."""
    known = {f.name for f in command.flags}
    out: list[str] = []
    i = 0
    while i < len(own):
        token = own[i]
        i += 1
        if not token.startswith("-") or token in {"-", "--"}:
            out.append(token)
            continue
        name, eq, value = token.partition("=")
        name = _kebab(name)
        rows = _rows_for(name)
        if not rows:
            out.append(token)
            continue
        nxt = own[i] if i < len(own) else None
        for row in rows:
            given, takes_next = _value(row, value if eq else None, nxt)
            if row.when is not None and not row.when(given):
                continue
            out.extend(_apply(command, known, row, token, given, eq=bool(eq)))
            if row.outcome is Outcome.ALIAS:
                i += takes_next
            break
        else:
            out.append(token)
    return out


def _value(row: Row, after_eq: str | None, nxt: str | None) -> tuple[str | None, int]:
    """The row's value and how many following words it takes (0 or 1)."""
    if after_eq is not None or row.arg in {Arg.NONE, Arg.BOOL, Arg.OPTIONAL}:
        return after_eq, 0
    if row.arg is Arg.NUMBER:
        return (nxt, 1) if nxt is not None and nxt.isdigit() else (None, 0)
    if nxt is None or nxt.startswith("-"):
        return None, 0
    return nxt, 1


def _apply(
    command: Command, known: set[str], row: Row, token: str, value: str | None, *, eq: bool
) -> list[str]:
    """The words one matched row leaves in argv; a refusal raises."""
    runner = _RUNNERS[row.runner]
    spelled = token if eq or value is None else f"{token} {value}"
    if row.needs is not None and row.needs not in known:
        _refuse(
            command,
            f"vx {command.verb} has no {row.needs} yet, so {runner}'s {spelled} has nothing"
            " to become: drop it",
        )
    if row.outcome is Outcome.REFUSE:
        _refuse(command, f"vx {command.verb} does not take {runner}'s {spelled}: {row.answer}")
    name = _kebab(token.partition("=")[0])
    if row.arg is Arg.BOOL and eq:
        if value == "false":
            return []
        if value == "true":
            value = None
        elif row.outcome is Outcome.ALIAS:
            _refuse(command, f"{name} takes =true or =false, not ={value}")
    if row.outcome is Outcome.SAME:
        return [name] if row.arg is Arg.BOOL and eq and value is None else [token]
    if row.becomes is None:
        raise ValueError(f"an alias row names the words it becomes: {row.shown}")
    return list(row.becomes(value))


def _refuse(command: Command, message: str) -> NoReturn:
    raise UserError(ErrorCode.USAGE, message, f"see vx {command.verb} --help")


def help_section(known: Iterable[str]) -> Section:
    """The rows as `vx run --help` prints them: spelling, then the outcome and the vx way; a
    row waiting for a flag the verb (`known`: its flag names) lacks says so."""
    have = set(known)
    rows = tuple(
        (row.shown, f"{row.runner} {row.outcome}: {row.answer}")
        if row.needs is None or row.needs in have
        else (row.shown, f"{row.runner}: refused until vx has {row.needs}")
        for row in ROWS
    )
    return Section("Turbo, Nx and Vite Task flags", rows)
