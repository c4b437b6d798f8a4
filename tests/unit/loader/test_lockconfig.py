"""vx-lock.json's reader, the secret finder and the drift pointer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from vx.errors import ConfigError
from vx.loader import lockconfig
from vx.loader.lockconfig import LockedProject, read_lock, secret_places

if TYPE_CHECKING:
    from pathlib import Path


def test_the_lock_format_version_is_pinned() -> None:
    """Bumping it makes every committed lock unreadable: `vx run --frozen` fails in CI until
    each repo runs `vx lock` again. Do it only with a reader for the old version."""
    assert lockconfig.LOCK_VERSION == 1


def test_no_lock_reads_as_none(tmp_path: Path) -> None:
    assert read_lock(tmp_path) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "vx-lock.json: is not valid JSON"),
        ('{"version": 2, "projects": {}}', "vx-lock.json: is not a version 1 lock — run vx lock"),
        ('{"version": 1, "projects": []}', "vx-lock.json: is not a version 1 lock — run vx lock"),
        (
            '{"version": 1, "projects": {"a": {"dir": "a"}}}',
            "vx-lock.json: a: a project entry is malformed — run vx lock",
        ),
    ],
)
def test_a_malformed_lock_is_refused(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "vx-lock.json").write_text(text)
    with pytest.raises(ConfigError) as info:
        read_lock(tmp_path)
    assert info.value.message.startswith(message)


def test_a_lock_reads_back(tmp_path: Path) -> None:
    entry = LockedProject(
        "a", "packages/a", "packages/a/vx.config.json", "sha256:0", (), {"tasks": {}}
    )
    doc = lockconfig.lock_document((entry,))
    (tmp_path / "vx-lock.json").write_text(json.dumps(doc))
    assert read_lock(tmp_path) == {"a": entry}


def _entry(resolved: object) -> LockedProject:
    return LockedProject("a", "a", "a/vx.config.py", "sha256:0", (), resolved)


def test_secret_places_name_the_field_and_the_variable_never_the_value() -> None:
    resolved = {
        "tasks": {
            "deploy": {"exec": {"command": "deploy --token abcd1234", "env": {"secret": ["MY_*"]}}},
            "tag": {"exec": "echo release-42"},
        }
    }
    env = {"API_TOKEN": "abcd1234", "MY_VALUE": "release-42", "HOME": "/root", "SHORT_KEY": "ab"}
    assert secret_places((_entry(resolved),), env) == [
        "a: tasks.deploy.exec.command holds $API_TOKEN",
        "a: tasks.tag.exec holds $MY_VALUE",
    ]
    # The names a log masks: PASSWD and CREDENTIAL count here too.
    env = {"DEPLOY_PASSWD": "abcd1234", "GCP_CREDENTIAL": "release-42"}
    assert secret_places((_entry(resolved),), env) == [
        "a: tasks.deploy.exec.command holds $DEPLOY_PASSWD",
        "a: tasks.tag.exec holds $GCP_CREDENTIAL",
    ]


def test_first_difference_points_at_the_field() -> None:
    old = {"tasks": {"build": {"exec": "a", "dependsOn": ["^build"]}}}
    new = {"tasks": {"build": {"exec": "a", "dependsOn": ["^build", "gen"]}}}
    assert lockconfig._first_difference(old, new) == "tasks.build.dependsOn"
    assert lockconfig._first_difference(old, {}) == "tasks"
