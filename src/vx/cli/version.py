"""`vx version`: print the version; it reads only the package, so it never loads the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx import __version__
from vx.cli.parser import Command
from vx.cli.settings import VersionSettings

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams

COMMAND = Command("version", words="argument", most_words=0)


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> VersionSettings:  # noqa: ARG001
    """The version vx was built as."""
    return VersionSettings(__version__)


def execute(settings: VersionSettings, streams: Streams) -> int:
    """Print `vx <version>`."""
    streams.out.write(f"vx {settings.version}\n")
    return 0
