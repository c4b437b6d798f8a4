"""The release document `vx upgrade` reads: where it is, what it says, which asset is ours.

A release publishes `release.json` (schemas/release.json) beside its assets: the version and,
per asset, its name and SHA-256. The document sits at `<base>/download/<tag>/release.json`
and, for the newest release, `<base>/latest/download/release.json` (GitHub's release download
URLs; a mirror lays its files out the same way). An asset's URL is relative to the document's
final URL, so a redirect from `latest` lands the asset on the same release.
"""

from __future__ import annotations

import json
import platform
import re
from urllib.parse import urljoin

from vx.errors import ErrorCode, UserError
from vx.selfupdate.fetch import get, host
from vx.util.record import Record

DEFAULT_BASE = "https://github.com/vx-runner/vx/releases"
DOCUMENT = "release.json"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TAG = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*")
_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


class Asset(Record):
    """One downloadable file of a release, with the digest that proves the transfer."""

    name: str
    url: str
    sha256: str
    size: int | None


class Release(Record):
    """What the release document says about one release, and this platform's asset in it."""

    version: str
    tag: str
    asset: Asset


def document_url(base: str, tag: str | None) -> str:
    """Where the release document for `tag` (None: the newest) lives under `base`."""
    base = base.rstrip("/")
    if tag is None:
        return f"{base}/latest/download/{DOCUMENT}"
    return f"{base}/download/{tag}/{DOCUMENT}"


def check_tag(tag: str) -> str:
    """A tag as releases name them (v1.2.3, or 1.2.3 taken as v1.2.3)."""
    from vx.util.text import clip

    if not _TAG.fullmatch(tag):
        raise UserError(
            ErrorCode.USAGE,
            f'vx upgrade: "{clip(tag)}" is not a release tag — name one like v1.2.3, or none for'
            " the latest",
        )
    return tag if tag.startswith("v") else f"v{tag}"


def platform_key(system: str | None = None, machine: str | None = None) -> str:
    """This OS and CPU as asset names spell them (`linux-x64`), as install.sh picks them."""
    os_name = (system or platform.system()).lower()
    arch = _ARCH.get((machine or platform.machine()).lower(), (machine or "").lower())
    return f"{os_name}-{arch}"


def platform_asset(system: str | None = None, machine: str | None = None) -> str:
    """The binary's asset name for this platform, with `{version}` still to fill in from the
    release document (`vx-{version}-linux-x64.tar.gz`): the name carries the version."""
    return "vx-{version}-" + platform_key(system, machine) + ".tar.gz"


def read_release(base: str, tag: str | None, asset_name: str) -> Release:
    """Fetch and check the release document, and pick `asset_name` from it (any `{version}`
    in the name is the document's version)."""
    url = document_url(base, tag)
    body = get(url, "the release")
    try:
        doc = json.loads(body.data)
    except (ValueError, RecursionError):
        # RecursionError: nesting deeper than the parser's stack, which no release document has.
        doc = None
    where = host(url)
    if not isinstance(doc, dict) or not isinstance(doc.get("version"), str):
        raise UserError(
            ErrorCode.REFUSED,
            f"could not read the release from {where} (not a release document: is a proxy "
            "or a portal answering?) — nothing replaced",
        )
    version: str = doc["version"]
    asset_name = asset_name.replace("{version}", version)
    assets = doc.get("assets")
    found = (
        next(
            (a for a in assets if isinstance(a, dict) and a.get("name") == asset_name),
            None,
        )
        if isinstance(assets, list)
        else None
    )
    if found is None:
        raise UserError(
            ErrorCode.REFUSED,
            f"release {version} at {where} has no {asset_name} for this platform — "
            "nothing downloaded",
        )
    digest = found.get("sha256")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise UserError(
            ErrorCode.REFUSED,
            f"release {version} at {where} publishes no SHA-256 for {asset_name}, so its "
            "download could not be checked — nothing downloaded",
        )
    size = found.get("size")
    asset = Asset(
        asset_name,
        urljoin(body.url, str(found.get("url") or asset_name)),
        digest,
        size if isinstance(size, int) and not isinstance(size, bool) else None,
    )
    tag_name = doc.get("tag")
    return Release(version, tag_name if isinstance(tag_name, str) else f"v{version}", asset)
