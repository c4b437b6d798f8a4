"""What the index knows of an artifact without opening it: its paths, size and digest.

Kept apart from `archive` so a warm run, which only compares outputs on disk against these
rows, never imports `tarfile` or `zstandard`.
"""

from __future__ import annotations

import json
from typing import Literal, NamedTuple

Kind = Literal["file", "dir", "link"]


class Recorded(NamedTuple):
    """One path as the artifact holds it; the disk is compared against it for `up-to-date`."""

    path: str
    kind: Kind
    mode: int = 0
    size: int = 0
    digest: str = ""
    target: str = ""


class ArtifactInfo(NamedTuple):
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
        out: list[Recorded] = []
        for row in json.loads(text):
            path, tag = str(row[0]), row[1]
            if tag == "f":
                out.append(Recorded(path, "file", int(row[2]), int(row[3]), str(row[4])))
            elif tag == "d":
                out.append(Recorded(path, "dir", int(row[2])))
            else:
                out.append(Recorded(path, "link", target=str(row[2])))
        return tuple(out)


class CorruptArtifact(Exception):  # noqa: N818  the name says what the caller learns
    """An artifact that must not be restored: a miss for the caller, never a partial restore.

    `blocked` means the bytes may be fine but the disk refused them (a symlink or a
    directory in the way, a full disk): keep the entry. Otherwise the entry is bad: drop it.
    """

    def __init__(self, path: str, reason: str, *, blocked: bool = False) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.blocked = blocked


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
