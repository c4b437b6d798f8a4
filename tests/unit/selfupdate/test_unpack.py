"""The release tarball's checks before `vx upgrade` unpacks it: one top folder, no way out."""

from __future__ import annotations

import io
import tarfile

import pytest

from vx.errors import UserError
from vx.selfupdate.folder import _unpack

TOP = "vx-9-linux-x64"
NAME = f"{TOP}.tar.gz"


def member(name, kind=tarfile.REGTYPE, data=b"", linkname=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = 0o755 if kind in (tarfile.DIRTYPE, tarfile.REGTYPE) else 0o777
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def tarball(tmp_path, *members):
    path = tmp_path / NAME
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, data)
    return path


def good():
    return [
        member(TOP, tarfile.DIRTYPE),
        member(f"{TOP}/vx", data=b"#!/bin/sh\necho vx 9\n"),
        member(f"{TOP}/lib", tarfile.DIRTYPE),
        member(f"{TOP}/lib/libpython3.11.so.1.0", data=b"elf"),
    ]


def test_a_well_formed_folder_unpacks_with_its_inner_links(tmp_path):
    path = tarball(
        tmp_path,
        *good(),
        member(f"{TOP}/lib/libpython3.so", tarfile.SYMTYPE, linkname="libpython3.11.so.1.0"),
        member(f"{TOP}/share", tarfile.SYMTYPE, linkname="lib"),
        member(f"{TOP}/vx-again", tarfile.LNKTYPE, linkname=f"{TOP}/vx"),
    )
    stage = tmp_path / "stage"
    stage.mkdir()
    top = _unpack(path, stage, NAME)
    assert top == stage / TOP
    assert (top / "lib" / "libpython3.so").read_bytes() == b"elf"
    assert (top / "vx-again").read_bytes() == (top / "vx").read_bytes()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (member(f"{TOP}/up", tarfile.SYMTYPE, linkname=".."), f"{TOP}/up links to .., outside"),
        (member(f"{TOP}/self", tarfile.SYMTYPE, linkname="."), f"{TOP}/self links to ., outside"),
        (
            member(f"{TOP}/lib/etc", tarfile.SYMTYPE, linkname="../../etc"),
            "links to ../../etc, outside",
        ),
        (member(f"{TOP}/abs", tarfile.SYMTYPE, linkname="/etc/passwd"), "links to /etc/passwd"),
        (
            member(f"{TOP}/hard", tarfile.LNKTYPE, linkname="other/file"),
            "links to other/file, outside",
        ),
        (member(f"{TOP}/../escape", data=b"x"), f"{TOP}/../escape lies outside {TOP}/"),
        (member("other/vx", data=b"x"), f"other/vx lies outside {TOP}/"),
    ],
)
def test_a_link_or_member_leading_out_of_the_folder_is_refused(tmp_path, extra, words):
    path = tarball(tmp_path, *good(), extra)
    stage = tmp_path / "stage"
    stage.mkdir()
    with pytest.raises(UserError) as caught:
        _unpack(path, stage, NAME)
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"could not unpack {NAME} (")
    assert "\n" not in str(caught.value)
    assert list(stage.iterdir()) == []


def test_a_top_member_that_is_a_symlink_is_refused(tmp_path):
    path = tarball(
        tmp_path,
        member(TOP, tarfile.SYMTYPE, linkname="/tmp"),
        member(f"{TOP}/vx", data=b"x"),
    )
    stage = tmp_path / "stage"
    stage.mkdir()
    with pytest.raises(UserError, match=f"{TOP} is not a folder"):
        _unpack(path, stage, NAME)
    assert list(stage.iterdir()) == []
