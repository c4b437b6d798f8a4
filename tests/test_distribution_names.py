"""vx is published as `vx-runner` on PyPI and npm: `vx` on both belongs to other projects.

Every doc, message, build script and workflow names the published names, never the old ones
(`pip install vx` installed an unrelated 2018 project; the `@vx-runner` npm scope is not
ours). The command itself stays `vx`.
"""

from __future__ import annotations

import json
import re
import tomllib

import pytest
from tests.conftest import REPO
from tests.e2e.releaseserver import load_build_script

from vx.selfupdate.origin import UPGRADED_BY, Kind

DIST = "vx-runner"

# What an old name looks like wherever it could be written down.
OLD_NAMES = [
    re.compile(r"pip3? install (?:--upgrade |-U |--force-reinstall |--user )*'?vx(?![\w\-.\[])"),
    re.compile(r"'?\bvx\[(?:reapi|dev)\]"),
    re.compile(r"@vx-runner/"),
    re.compile(r"\bvx-(?:<v>|<version>|\d[\w.]*|\*)-py3-none"),
    re.compile(r"\bvx-(?:<v>|<version>|\d[\w.]*|\*)\.dist-info"),
]


def shipped_texts():
    """Every file a user or a release reads: docs, README, scripts, build, workflows, source."""
    roots = [REPO / "README.md", REPO / "install.sh", REPO / "Dockerfile", REPO / "pyproject.toml"]
    roots += sorted((REPO / "docs").glob("*.md"))
    roots += sorted((REPO / ".github").rglob("*.yml"))
    roots += sorted(p for p in (REPO / "build").rglob("*") if p.suffix in (".py", ".js"))
    roots += sorted((REPO / "src").rglob("*.py"))
    return [p for p in roots if p.is_file()]


@pytest.mark.parametrize("path", shipped_texts(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_file_names_the_old_distribution_names(path):
    text = path.read_text(encoding="utf-8")
    found = [m.group(0) for pattern in OLD_NAMES for m in pattern.finditer(text)]
    assert found == [], f"{path.relative_to(REPO)} names {found}: the distribution is {DIST}"


def test_the_package_metadata_and_the_builds_use_the_new_names():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DIST
    assert list(project["scripts"]) == ["vx"], "the command stays vx"
    assert load_build_script("npm").NAME == DIST
    assert (
        'const NAME = "vx-runner";' in (REPO / "build" / "npm" / "vx" / "bin" / "vx.js").read_text()
    )
    assert load_build_script("wheels").wheel_name(project) == "vx_runner"


def test_the_upgrade_refusals_name_the_published_packages():
    assert UPGRADED_BY[Kind.PIP] == f"python3 -m pip install --upgrade {DIST}"
    assert UPGRADED_BY[Kind.NPM] == f"npm install -g {DIST}@latest"


def test_the_npm_launcher_manifest_lists_the_platform_packages(tmp_path):
    npm = load_build_script("npm")
    manifest = json.loads((npm.launcher(tmp_path, "0.1.0") / "package.json").read_text())
    assert manifest["name"] == DIST
    assert manifest["bin"] == {"vx": "bin/vx.js"}
    assert sorted(manifest["optionalDependencies"]) == [
        f"{DIST}-darwin-arm64",
        f"{DIST}-linux-arm64",
        f"{DIST}-linux-x64",
    ]
