"""`vx upgrade [TAG]`: replace this vx (the binary or vx.pyz) with a release's, verified."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Section
from vx.errors import ErrorCode, UserError
from vx.util.record import Record

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
                ("", "reads the release document, downloads this platform's asset and checks"),
                ("", "its SHA-256. The binary (install.sh's layout): unpacks the tarball into"),
                ("", "lib/vx-<version>/ and flips bin/vx to it; vx.pyz: renames the file over"),
                ("", "this one. Mode (and owner, as root) are kept, and a new vx that does not"),
                ("", "answer --version within 10 s is swapped back for the previous one. A pip,"),
                ("", "npm or source install is refused with the command that upgrades it."),
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


class UpgradeSettings(Record):
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
    if origin.root is not None:
        asset = platform_asset()
    elif origin.kind is Kind.BINARY:
        raise UserError(
            ErrorCode.REFUSED,
            f"this vx binary ({origin.path}) is not in the layout install.sh makes "
            "(<root>/lib/vx-<version>/ linked from <root>/bin/vx), so vx upgrade cannot swap "
            "it — install with install.sh, or replace its folder by hand",
        )
    else:
        asset = receipt.asset if receipt is not None else "vx.pyz"
    return UpgradeSettings(tag, origin, base, asset, vx.__version__)


def _executable() -> str:
    """The file that is this vx. Nuitka's onefile binary runs an unpacked copy from a cache
    dir, so the file to replace is the one the user ran: the parent process's executable when
    it lies in the directory Nuitka names, else that directory and argv[0]'s name. The
    standalone binary is `vx` (build/binary.py names it) in its folder, where Nuitka's
    sys.executable names a `python3` beside it. Otherwise the interpreter."""
    compiled = globals().get("__compiled__")
    if compiled is not None and not getattr(compiled, "onefile", False):
        return str(Path(sys.executable).parent / "vx")
    if compiled is not None:
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
    from vx.selfupdate.folder import install_folder
    from vx.selfupdate.origin import write_receipt
    from vx.selfupdate.release import read_release
    from vx.selfupdate.swap import check_writable, install

    path = Path(settings.origin.path)
    root = settings.origin.root
    for directory in (path.parent,) if root is None else (Path(root, "lib"), Path(root, "bin")):
        check_writable(directory)
    release = read_release(settings.base, settings.tag, settings.asset)
    shown = path if root is None else Path(root, "bin", "vx")
    if release.version == settings.current:
        streams.out.write(f"already at {settings.current} ({shown}) — nothing downloaded\n")
        return 0
    asset = release.asset
    streams.err.write(f"downloading {asset.name} {release.version} from {asset.url}\n")
    if root is None:
        installed = install(release, path)
    else:
        installed = install_folder(release, Path(root), path)
    receipt = settings.origin.receipt
    if receipt is not None:
        write_receipt(
            root or str(path.parent),
            receipt._replace(asset=asset.name, version=installed.version),
        )
    streams.out.write(f"vx {settings.current} → {installed.version}: installed at {shown}\n")
    return 0
