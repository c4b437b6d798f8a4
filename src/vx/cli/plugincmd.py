"""A word core does not know, offered to the workspace's plugins before it is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cli import verbs
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from vx.cli.settings import Streams
    from vx.plugins.model import Plugin


def plugin_verbs(cwd: Path) -> tuple[Path, tuple[Plugin, ...]] | None:
    """The workspace root and its plugins; None outside a workspace or where it declares none.

    A plugin that does not load is refused here too: the user typed a verb it may own.
    """
    from vx.plugins.load import workspace_plugins
    from vx.workspace.discover import find_root

    try:
        root = find_root(cwd).root
    except UserError as err:
        if err.code is ErrorCode.NO_WORKSPACE:
            return None
        raise
    plugins = workspace_plugins(root, reserved=verbs.names())
    return (root, plugins) if plugins else None


def run_plugin_verb(
    word: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    streams: Streams,
    found: tuple[Path, tuple[Plugin, ...]],
) -> int | None:
    """Run `word` if a plugin declares it (the first declaring plugin runs); None if none does.

    The command's return value is the exit code; anything but an int from 0 to 255 fails
    naming the plugin and the verb, and anything it raises but a UserError fails in one line.
    """
    from vx.plugins.model import CommandContext

    root, plugins = found
    for plugin in plugins:
        command = plugin.commands.get(word)
        if command is None:
            continue
        ctx = CommandContext(root, cwd, env, streams.out, streams.err, plugin.name)
        try:
            code = command.run(tuple(args), ctx)
        except (UserError, KeyboardInterrupt):
            raise
        except Exception as err:  # noqa: BLE001  a plugin's failure is one line, no stack
            raise UserError(
                ErrorCode.REFUSED,
                f"plugin '{plugin.name}' failed in command '{word}': {type(err).__name__}: {err}",
            ) from None
        if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code <= 255:
            raise UserError(
                ErrorCode.REFUSED,
                f"plugin '{plugin.name}' command '{word}' returned {code!r}, not an exit code"
                " (an int from 0 to 255) — return 0 for success",
            )
        return code
    return None


def declared_verbs(found: tuple[Path, tuple[Plugin, ...]] | None) -> tuple[str, ...]:
    """Every verb the workspace's plugins declare, for the did-you-mean of an unknown word."""
    if found is None:
        return ()
    return tuple(dict.fromkeys(v for p in found[1] for v in p.commands))
