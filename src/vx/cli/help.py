"""`vx help [VERB]`, `vx --help`, `vx VERB --help`: pages built from the verb and flag tables.

Nothing here is written twice: usage lines come from verbs.py, flags from each verb's COMMAND.
Help is painted only on a terminal (headings bold, `vx <verb>`, flags and examples cyan), so
FORCE_COLOR may turn the paint off there but never on off a terminal.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING

from vx import __version__
from vx.cli import verbs
from vx.cli.parser import Command, Section
from vx.cli.settings import HelpSettings
from vx.output.console import decide_color

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams

COMMAND = Command("help", words="verb", most_words=1)

_BOLD, _CYAN, _RESET = "\x1b[1m", "\x1b[36m", "\x1b[0m"
_HELP_ROW = ("-h, --help", "print this help")
_WIDEST = 28
_META = (
    Section(
        "Also",
        (
            ("vx", "in a workspace, this overview; outside one, says so and exits 1"),
            ("vx --help, -h", "this overview"),
            ("vx --version", "the version, as vx version prints it"),
        ),
    ),
    Section(
        "Exit codes",
        (
            ("0", "success"),
            ("1", "a refusal or an error: one line on stderr (with --format json, a JSON"),
            ("", 'document {"ok":false,"error":{"code","message"}} on stdout too)'),
            ("130", "interrupted (Ctrl-C)"),
        ),
    ),
    Section(
        "Environment",
        (("NO_COLOR, FORCE_COLOR=0", "keep this help plain on a terminal too"),),
    ),
)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> HelpSettings:
    """A page name must be a verb: anything else is refused the way `vx <name>` is."""
    name = args.words[0] if args.words else None
    if name is not None and verbs.find(name) is None:
        from vx.cli.unknown import refuse_unknown

        refuse_unknown(name, (), cwd=cwd)
    return HelpSettings(
        name,
        paint_allowed=decide_color(None, env, is_tty=True),
        plugin_verbs=_plugin_rows(cwd) if name is None else (),
    )


def _plugin_rows(cwd: Path) -> tuple[tuple[str, str], ...]:
    """The verbs the workspace's plugins add, each with its plugin's name; () where there are
    none, or where they do not load (running the verb says why).

    Only a `vx.workspace.*` here or above can declare plugins: without one the help loads
    nothing of the engine.
    """
    names = [f"vx.workspace{suffix}" for suffix in (".json", ".toml", ".py")]
    if not any((d / n).is_file() for d in (cwd, *cwd.parents) for n in names):
        return ()
    from vx.cli.plugincmd import plugin_verbs
    from vx.errors import UserError

    try:
        found = plugin_verbs(cwd)
    except UserError:
        return ()
    if found is None:
        return ()
    rows: dict[str, str] = {}
    for plugin in found[1]:
        for verb, command in plugin.commands.items():
            what = command.description or "a plugin command"
            rows.setdefault(verb, f"{what} (plugin {plugin.name})")
    return tuple(rows.items())


def execute(settings: HelpSettings, streams: Streams) -> int:
    """Print the overview or one verb's page."""
    page = overview(settings.plugin_verbs) if settings.verb is None else verb_page(settings.verb)
    paint = settings.paint_allowed and streams.out_is_tty()
    streams.out.write(painted(page) if paint else page)
    return 0


def overview(plugin_verbs: tuple[tuple[str, str], ...] = ()) -> str:
    """Every verb's usage lines and summary, the workspace's plugin verbs, then what holds for
    all of them."""
    lines = [f"vx {__version__} — runs a monorepo's tasks in dependency order, from a cache", ""]
    lines += ["Usage:", *(f"  {s}" for v in verbs.VERBS for s in v.synopsis), ""]
    lines += _section(Section("Verbs", tuple((v.name, v.summary) for v in verbs.VERBS)))
    if plugin_verbs:
        lines += _section(Section("Plugin commands", plugin_verbs))
    for section in _META:
        lines += _section(section)
    lines.append("vx help VERB (or vx VERB --help) prints one verb's page.")
    return "\n".join(lines) + "\n"


def verb_page(name: str) -> str:
    """One verb's usage lines, summary, flags and sections, then where the rest is."""
    verb = verbs.find(name)
    if verb is None:
        raise ValueError(f"no help page for a verb the table lacks: {name}")
    command: Command = importlib.import_module(verb.module).COMMAND
    lines = ["Usage:", *(f"  {s}" for s in verb.synopsis), ""]
    lines += [verb.summary[0].upper() + verb.summary[1:] + ".", ""]
    flags = tuple((f.usage, f.help) for f in command.flags)
    lines += _section(Section("Flags", (*flags, _HELP_ROW)))
    for section in command.sections:
        lines += _section(section)
    lines.append("Full reference: vx help")
    return "\n".join(lines) + "\n"


def _section(section: Section) -> list[str]:
    """Two aligned columns; a left cell too wide for the column gets a line of its own."""
    width = max(
        (len(left) for left, right in section.rows if right and len(left) <= _WIDEST), default=0
    )
    rows: list[str] = []
    for left, right in section.rows:
        if not right:
            rows.append(f"  {left}")
        elif len(left) > width:
            rows += [f"  {left}", f"  {'':{width}}  {right}"]
        else:
            rows.append(f"  {left:{width}}  {right}")
    return [f"{section.heading}:", *rows, ""]


_HEADING = re.compile(r"^[A-Z][^\s:]*(?: [^\s:]+)*:$")
_VERB = "|".join(verbs.names())
_TOKEN = re.compile(rf"(?<![\w-])(?:vx(?: (?:{_VERB})\b|(?= -|  |$))|--?[a-z][\w-]*)")


def painted(page: str) -> str:
    """The page with headings in bold and `vx <verb>`, flags and examples in cyan."""
    out: list[str] = []
    for line in page.split("\n"):
        if _HEADING.match(line):
            out.append(f"{_BOLD}{line}{_RESET}")
        else:
            out.append(_TOKEN.sub(lambda m: f"{_CYAN}{m.group(0)}{_RESET}", line))
    return "\n".join(out)
