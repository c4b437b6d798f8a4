"""`vx upgrade [TAG]`: replace this vx (the binary or vx.pyz) with a release's, verified."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from vx.cli.parser import Command, Section
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams
    from vx.selfupdate.origin import Origin

COMMAND = Command(
    "upgrade",
    words="tag",
    most_words=1,
    sections=(
        Section(
            "Arguments",
            (("TAG", "the release to install (v1.2.3); default: the latest"),),
        ),
        Section(
            "What it does",
            (
                ("", "reads the release document, downloads this platform's asset, checks its"),
                ("", "SHA-256, renames it over this vx keeping its mode (and owner, as root),"),
                ("", "and runs it with --version: one that does not answer within 10 s is"),
                ("", "swapped back for the previous vx. A pip, npm or source install is"),
                ("", "refused with the command that upgrades it."),
            ),
        ),
        Section(
            "Environment",
            (
                ("VX_UPGRADE_URL", "the releases base URL (a mirror), instead of the one"),
                ("", "install.sh recorded or vx's own GitHub releases"),
            ),
        ),
        Section("Examples", (("vx upgrade", ""), ("vx upgrade v0.2.0", ""))),
    ),
)


_HOW = {
    "source": "runs from a source checkout",
    "pip": "was installed by pip",
    "npm": "was installed by npm",
}


class UpgradeSettings(NamedTuple):
    """The tag wanted (None: latest), how this vx was installed, and where releases are."""

    tag: str | None
    origin: Origin
    base: str
    asset: str
    current: str


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> UpgradeSettings:  # noqa: ARG001
    """Tell how this vx was installed; refuse the installs another tool owns."""
    import vx
    from vx.selfupdate.origin import UPGRADED_BY, Kind, detect
    from vx.selfupdate.release import DEFAULT_BASE, check_tag, platform_asset

    tag = check_tag(args.words[0]) if args.words else None
    origin = detect(
        compiled="__compiled__" in globals(),
        executable=_executable(),
        archive=getattr(getattr(vx, "__loader__", None), "archive", None),
        package_dir=os.path.dirname(vx.__file__ or ""),  # noqa: PTH120
        env=env,
    )
    if origin.kind in UPGRADED_BY:
        raise UserError(
            ErrorCode.REFUSED,
            f"this vx {_HOW[origin.kind]} ({origin.path}); vx upgrade replaces only the "
            f"binary or vx.pyz — update this one with: {UPGRADED_BY[origin.kind]}",
        )
    receipt = origin.receipt
    base = env.get("VX_UPGRADE_URL", "").strip() or (receipt.url if receipt else DEFAULT_BASE)
    if receipt is not None:
        asset = receipt.asset
    else:
        asset = "vx.pyz" if origin.kind is Kind.ZIPAPP else platform_asset()
    return UpgradeSettings(tag, origin, base, asset, vx.__version__)


def _executable() -> str:
    """The file that is this vx. Nuitka's onefile binary runs an unpacked copy from a cache
    dir, so the file to replace is the one the user ran: the parent process's executable when
    it lies in the directory Nuitka names, else that directory and argv[0]'s name. Otherwise
    the running executable (the standalone binary, or the interpreter)."""
    compiled = globals().get("__compiled__")
    if compiled is not None and getattr(compiled, "onefile", False):
        home = Path(str(compiled.containing_dir)).resolve()
        try:  # the bootstrap that unpacked us is our parent: its file, under any name
            parent = Path(f"/proc/{os.getppid()}/exe").readlink()
        except OSError:
            parent = None
        if parent is not None and parent.parent == home:
            return str(parent)
        name = os.path.basename(getattr(compiled, "original_argv0", None) or "vx")  # noqa: PTH119
        return str(home / name)
    return sys.executable


def execute(settings: UpgradeSettings, streams: Streams) -> int:
    """Read the release, then swap (or say it is already there)."""
    from vx.selfupdate.origin import write_receipt
    from vx.selfupdate.release import read_release
    from vx.selfupdate.swap import check_writable, install

    path = Path(settings.origin.path)
    check_writable(path)
    release = read_release(settings.base, settings.tag, settings.asset)
    if release.version == settings.current:
        streams.out.write(f"already at {settings.current} ({path}) — nothing downloaded\n")
        return 0
    asset = release.asset
    streams.err.write(f"downloading {asset.name} {release.version} from {asset.url}\n")
    installed = install(release, path)
    receipt = settings.origin.receipt
    if receipt is not None:
        write_receipt(str(path.parent), receipt._replace(version=installed.version))
    streams.out.write(f"vx {settings.current} → {installed.version}: installed at {path}\n")
    return 0
