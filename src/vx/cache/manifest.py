"""What the index knows of an artifact without opening it: its paths, size and digest.

Kept apart from `archive` so a warm run, which only compares outputs on disk against these
rows, never imports `tarfile` or `zstandard`.
"""

from __future__ import annotations

import json
from typing import Literal

from vx.util.record import Record

Kind = Literal["file", "dir", "link"]


class Recorded(Record):
    """One path as the artifact holds it; the disk is compared against it for `up-to-date`."""

    path: str
    kind: Kind
    mode: int = 0
    size: int = 0
    digest: str = ""
    target: str = ""


class ArtifactInfo(Record):
    """What the index keeps of an artifact: its bytes' size and xxh3 digest, and its paths."""

    size: int
    digest: str
    manifest: tuple[Recorded, ...] = ()

    def manifest_json(self) -> str:
        rows: list[list[str | int]] = []
        for r in self.manifest:
            if r.kind == "file":
                rows.append([r.path, "f", r.mode, r.size, r.digest])
            elif r.kind == "dir":
                rows.append([r.path, "d", r.mode])
            else:
                rows.append([r.path, "l", r.target])
        return json.dumps(rows, separators=(",", ":"))

    @staticmethod
    def parse_manifest(text: str) -> tuple[Recorded, ...]:
        """The rows `manifest_json` wrote; ValueError for anything else (a `{}`, a short row).

        An index row is data anyone with the store can edit: a shape vx never writes must not
        read as some other manifest, an empty one above all.
        """
        rows = json.loads(text)
        if not isinstance(rows, list):
            msg = "a manifest is a list of rows"
            raise ValueError(msg)  # noqa: TRY004  the index reader catches ValueError
        return tuple(_recorded(row) for row in rows)


def _recorded(row: object) -> Recorded:
    if not isinstance(row, list) or len(row) < 3 or not isinstance(row[0], str):
        msg = f"not a manifest row: {row!r}"
        raise ValueError(msg)
    path, tag = row[0], row[1]
    if tag == "f" and len(row) == 5 and _counts(row[2], row[3]) and isinstance(row[4], str):
        return Recorded(path, "file", row[2], row[3], row[4])
    if tag == "d" and len(row) == 3 and _counts(row[2]):
        return Recorded(path, "dir", row[2])
    if tag == "l" and len(row) == 3 and isinstance(row[2], str):
        return Recorded(path, "link", target=row[2])
    msg = f"not a manifest row: {row!r}"
    raise ValueError(msg)


def _counts(*values: object) -> bool:
    return all(type(v) is int and v >= 0 for v in values)


class CorruptArtifact(Exception):  # noqa: N818  the name says what the caller learns
    """An artifact that must not be restored: a miss for the caller, never a partial restore.

    `blocked` means the bytes may be fine but the disk refused them (a symlink or a
    directory in the way, a full disk): keep the entry. `missing` means there is no file: a
    prune took it after its row was read, a plain miss. Otherwise the entry is bad: drop it.
    """

    def __init__(
        self, path: str, reason: str, *, blocked: bool = False, missing: bool = False
    ) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.blocked = blocked
        self.missing = missing


class Unarchivable(Exception):  # noqa: N818
    """An output the format will not hold: a socket or device, or a symlink out of the root."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def normalize(path: str) -> str:
    """A root-relative path in the one spelling the archive and the manifest use."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if path.startswith("/") or ".." in parts or not parts:
        msg = f"not a root-relative path: {path!r}"
        raise ValueError(msg)
    return "/".join(parts)
