"""How the running vx was installed, and so whether `vx upgrade` may replace it.

Only what vx owns outright is replaced: the binary's folder install.sh laid out
(`<root>/lib/vx-<version>/` with `<root>/bin/vx` linked to the executable inside), or a
vx.pyz put somewhere by hand. A checkout, a pip install and an npm install each belong to a
tool that would put its own version back, so upgrading there is that tool's job.
"""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

# Imported here, not when the receipt is written: by then a zipapp's own archive has been
# replaced, and zipimport would read the new file's bytes at the old file's offsets.
from vx.util.atomic import write_atomic
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

RECEIPT_NAME = ".vx-receipt.json"
# The distribution is `vx-runner` (`vx` on PyPI is another project's): its dist-info folder.
DIST_INFO = "vx_runner-*.dist-info"
RECEIPT_FIELDS = ("installer", "asset", "url", "version")


class Kind(StrEnum):
    """The ways vx gets onto a machine."""

    BINARY = "binary"
    ZIPAPP = "zipapp"
    PIP = "pip"
    NPM = "npm"
    SOURCE = "source"


# What upgrades an install `vx upgrade` leaves to another tool.
UPGRADED_BY = {
    Kind.SOURCE: "git pull",
    Kind.PIP: "python3 -m pip install --upgrade vx-runner",
    Kind.NPM: "npm install -g vx-runner@latest",
}


class Receipt(Record):
    """What install.sh wrote beside the file it installed: the asset and where it came from."""

    installer: str
    asset: str
    url: str
    version: str


class Origin(Record):
    """This vx: how it was installed and, for a file vx may replace, which file. `root` is
    the install root when the file sits in install.sh's layout (a folder per version)."""

    kind: Kind
    path: str
    receipt: Receipt | None = None
    root: str | None = None


def detect(
    *,
    compiled: bool,
    executable: str,
    archive: str | None,
    package_dir: str,
    env: Mapping[str, str],
) -> Origin:
    """Tell the install kind from where the running code lives.

    `compiled` is Nuitka's mark on the binary's modules, `executable` the binary or the
    interpreter, `archive` the zip the `vx` package was imported from (vx.pyz, whatever its
    file is called), `package_dir` the package's directory otherwise. npm's launcher sets
    VX_INSTALLED_BY=npm, and any file under node_modules is npm's too.
    """
    if compiled:
        path = os.path.realpath(executable)
    elif archive:
        path = os.path.realpath(archive)
    else:
        checkout = os.path.dirname(os.path.dirname(package_dir))  # noqa: PTH120
        if os.path.basename(os.path.dirname(package_dir)) == "src" and os.path.exists(  # noqa: PTH110, PTH119, PTH120
            os.path.join(checkout, "pyproject.toml")  # noqa: PTH118
        ):
            return Origin(Kind.SOURCE, checkout)
        return Origin(Kind.PIP, package_dir)
    if env.get("VX_INSTALLED_BY") == "npm" or f"{os.sep}node_modules{os.sep}" in path:
        return Origin(Kind.NPM, path)
    if pip_owned(path):
        return Origin(Kind.PIP, path)
    kind = Kind.BINARY if compiled else Kind.ZIPAPP
    root = folder_root(path)
    receipt = read_receipt(root or os.path.dirname(path))  # noqa: PTH120
    return Origin(kind, path, receipt, root)


def folder_root(path: str) -> str | None:
    """The install root when `path` is `<root>/lib/vx-<version>/vx` and `<root>/bin/vx`
    leads to it (install.sh's layout), else None."""
    folder = os.path.dirname(path)  # noqa: PTH120
    lib = os.path.dirname(folder)  # noqa: PTH120
    if os.path.basename(lib) != "lib" or not os.path.basename(folder).startswith("vx-"):  # noqa: PTH119
        return None
    root = os.path.dirname(lib)  # noqa: PTH120
    link = os.path.join(root, "bin", "vx")  # noqa: PTH118
    return root if os.path.realpath(link) == path else None


def pip_owned(path: str) -> bool:
    """The file is one a wheel installed: the platform wheel's binary inside the package
    (`<site-packages>/vx/_bin/vx`) or a script in a venv's or a prefix's bin/, listed in the
    RECORD of vx's dist-info (`vx_runner-<version>.dist-info`)."""
    import glob

    folder = os.path.dirname(path)  # noqa: PTH120
    if os.path.basename(folder) == "_bin" and os.path.basename(os.path.dirname(folder)) == "vx":  # noqa: PTH119, PTH120
        sites = [os.path.dirname(os.path.dirname(folder))]  # noqa: PTH120
    else:
        prefix = os.path.dirname(folder)  # noqa: PTH120
        sites = glob.glob(os.path.join(prefix, "lib", "python3*", "*-packages"))  # noqa: PTH118, PTH207
    pattern = os.path.join(DIST_INFO, "RECORD")  # noqa: PTH118
    records = [r for s in sites for r in glob.glob(os.path.join(s, pattern))]  # noqa: PTH118, PTH207
    for record in records:
        site = os.path.dirname(os.path.dirname(record))  # noqa: PTH120
        try:
            with open(record, encoding="utf-8") as f:  # noqa: PTH123
                listed = [line.split(",", 1)[0] for line in f]
        except OSError:
            continue
        owned = {os.path.realpath(os.path.join(site, name)) for name in listed}  # noqa: PTH118
        if path in owned:
            return True
    return False


def read_receipt(directory: str) -> Receipt | None:
    """The receipt install.sh left in `directory`, or None (none, or not one we can read)."""
    try:
        with open(os.path.join(directory, RECEIPT_NAME), encoding="utf-8") as f:  # noqa: PTH118, PTH123
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), str) for k in RECEIPT_FIELDS):
        return None
    return Receipt(*(doc[k] for k in RECEIPT_FIELDS))


def write_receipt(directory: str, receipt: Receipt) -> None:
    """Record a new version in the receipt (vx upgrade keeps it true after a swap)."""
    write_atomic(Path(directory, RECEIPT_NAME), json.dumps(receipt._asdict(), indent=2) + "\n")
