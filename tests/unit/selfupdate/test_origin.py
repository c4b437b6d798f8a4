"""How vx tells its install kind, and the receipt install.sh leaves."""

from __future__ import annotations

import json

import pytest

from vx.selfupdate.origin import (
    Kind,
    Receipt,
    detect,
    folder_root,
    pip_owned,
    read_receipt,
    write_receipt,
)
from vx.selfupdate.release import check_tag, document_url, platform_asset


def test_a_checkout_is_source(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "src" / "vx").mkdir(parents=True)
    found = detect(
        compiled=False,
        executable="python3",
        archive=None,
        package_dir=str(tmp_path / "src" / "vx"),
        env={},
    )
    assert found.kind is Kind.SOURCE


def test_site_packages_is_pip(tmp_path):
    found = detect(
        compiled=False,
        executable="python3",
        archive=None,
        package_dir=str(tmp_path / "lib" / "site-packages" / "vx"),
        env={},
    )
    assert found.kind is Kind.PIP


def test_a_zipapp_is_its_archive(tmp_path):
    found = detect(
        compiled=False,
        executable="python3",
        archive=f"{tmp_path}/bin/vx",
        package_dir=f"{tmp_path}/bin/vx/vx",
        env={},
    )
    assert found == (Kind.ZIPAPP, f"{tmp_path}/bin/vx", None, None)


@pytest.mark.parametrize(
    ("executable", "env", "kind"),
    [
        ("/home/u/.vx/bin/vx", {}, Kind.BINARY),
        ("/usr/lib/node_modules/vx-runner-linux-x64/bin/vx", {}, Kind.NPM),
        ("/opt/vx/vx", {"VX_INSTALLED_BY": "npm"}, Kind.NPM),
    ],
)
def test_the_binary_is_npms_under_node_modules(executable, env, kind):
    assert (
        detect(compiled=True, executable=executable, archive=None, package_dir="", env=env).kind
        is kind
    )


def test_the_receipt_round_trips_and_a_bad_one_is_none(tmp_path):
    receipt = Receipt("install.sh", "vx-linux-x64", "http://127.0.0.1:1/releases", "0.1.0")
    write_receipt(str(tmp_path), receipt)
    assert read_receipt(str(tmp_path)) == receipt
    (tmp_path / ".vx-receipt.json").write_text(json.dumps({"installer": 1}))
    assert read_receipt(str(tmp_path)) is None
    (tmp_path / ".vx-receipt.json").write_text("{")
    assert read_receipt(str(tmp_path)) is None


@pytest.mark.parametrize(
    ("system", "machine", "asset"),
    [
        ("Linux", "x86_64", "vx-{version}-linux-x64.tar.gz"),
        ("Linux", "aarch64", "vx-{version}-linux-arm64.tar.gz"),
        ("Darwin", "arm64", "vx-{version}-darwin-arm64.tar.gz"),
    ],
)
def test_the_platform_asset_matches_install_sh(system, machine, asset):
    assert platform_asset(system, machine) == asset


def test_document_urls_and_tags():
    assert document_url("http://h/r/", None) == "http://h/r/latest/download/release.json"
    assert document_url("http://h/r", "v1.2.3") == "http://h/r/download/v1.2.3/release.json"
    assert check_tag("1.2.3") == "v1.2.3"
    assert check_tag("v1.2.3-rc.1") == "v1.2.3-rc.1"


def test_install_sh_layout_is_a_folder_install_with_its_receipt(tmp_path):
    exe = tmp_path / "lib" / "vx-0.1.0" / "vx"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    assert folder_root(str(exe)) is None  # no bin/vx leading to it
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "vx").symlink_to("../lib/vx-0.1.0/vx")
    receipt = Receipt("install.sh", "vx-0.1.0-linux-x64.tar.gz", "http://127.0.0.1:1", "0.1.0")
    write_receipt(str(tmp_path), receipt)
    found = detect(compiled=True, executable=str(exe), archive=None, package_dir="", env={})
    assert found == (Kind.BINARY, str(exe), receipt, str(tmp_path))
    (tmp_path / "bin" / "vx").unlink()
    (tmp_path / "bin" / "vx").symlink_to("../lib/vx-0.0.9/vx")
    assert folder_root(str(exe)) is None  # bin/vx leads elsewhere


def test_the_platform_wheels_folder_in_the_package_is_pips(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    exe = site / "vx" / "_bin" / "vx"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    record = site / "vx_runner-0.1.0.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text("vx/_bin/vx,sha256=x,0\n")
    assert pip_owned(str(exe))
    assert detect(
        compiled=True, executable=str(exe), archive=None, package_dir="", env={}
    ).kind is (Kind.PIP)
    record.write_text("vx/__init__.py,sha256=x,0\n")
    assert not pip_owned(str(exe))
