"""The boundary's pure parts: when a refusal is a JSON document, and how an OSError reads."""

from __future__ import annotations

import errno

import pytest

from vx.cli.main import _os_refusal, wants_json


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], False),
        (["show", "--format", "json"], True),
        (["show", "--format=json"], True),
        (["run", "build", "--dry=json"], True),
        (["show", "--format", "pretty"], False),
        (["show", "--format"], False),
        (["run", "build", "--dry"], False),
        (["run", "build", "--", "--format", "json"], False),
        (["run", "build", "--", "--dry=json"], False),
        (["show", "--format=json", "--"], True),
        (["show", "json"], False),
    ],
)
def test_wants_json(args, expected):
    assert wants_json(args) is expected


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            PermissionError(errno.EACCES, "Permission denied", "/ro/vx-lock.json"),
            "EACCES: permission denied, '/ro/vx-lock.json' — a path vx must write is not writable by this user",
        ),
        (
            OSError(errno.EROFS, "Read-only file system", "/ro/x"),
            "EROFS: read-only file system, '/ro/x' — a path vx must write is not writable by this user",
        ),
        (
            OSError(errno.ENOSPC, "No space left on device", "/full/x"),
            "ENOSPC: no space left on device, '/full/x' — the disk that path is on is full",
        ),
        (
            OSError(errno.EMFILE, "Too many open files"),
            "EMFILE: too many open files — the process is out of file descriptors; raise the limit (ulimit -n 4096) and re-run",
        ),
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "/x"), None),
        (OSError("no errno at all"), None),
    ],
)
def test_os_refusal(error, expected):
    refusal = _os_refusal(error)
    assert (refusal.message if refusal is not None else None) == expected
    if refusal is not None:  # the advice is the hint, apart in a JSON document
        assert refusal.message == f"{refusal.reason} — {refusal.hint}"
