"""The three spellings `vx init` writes load back, through the real loader, as the same config."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from vx.adopt.init_render import render_project, render_workspace
from vx.adopt.init_tasks import CACHE_REASON, TaskDraft, Todo
from vx.workspace.config_load import load_project_config

if TYPE_CHECKING:
    from pathlib import Path

TASKS = (
    TaskDraft(
        "build",
        ("^build",),
        "tsc -b && echo \"done\\n\" 'quoted'",
        todos=(Todo(CACHE_REASON),),
        outputs=(".next/**", "!.next/cache/**"),
    ),
    TaskDraft("build:watch", (), "tsc -w", persistent=True),
    TaskDraft("dev", ("build",)),
    TaskDraft(
        "banner",
        (),
        "echo $npm_package_name $npm_lifecycle_event",
        define=(("npm_package_name", "@a/ü", "name"), ("npm_lifecycle_event", "banner", None)),
    ),
    TaskDraft("x y", (), "true"),
)


def _load(tmp_path: Path, fmt: str, text: str) -> dict[str, object]:
    (tmp_path / f"vx.config.{fmt}").write_text(text, encoding="utf-8")
    (tmp_path / "package.json").write_text('{"name": "@a/ü"}', encoding="utf-8")
    config = load_project_config(tmp_path, root=tmp_path)
    assert config is not None
    return {name: json.loads(json.dumps(task.resolved)) for name, task in config.tasks.items()}


@pytest.mark.parametrize("fmt", ["json", "toml", "py"])
def test_every_format_loads_as_the_same_tasks(tmp_path: Path, fmt: str) -> None:
    tasks = tuple(t for t in TASKS if t.name != "x y")
    loaded = _load(tmp_path, fmt, render_project(tasks, fmt, manifest_name="package.json"))
    assert list(loaded) == ["build", "build:watch", "dev", "banner"]
    assert loaded["build"]["exec"]["command"] == TASKS[0].command  # type: ignore[index]
    assert loaded["build:watch"]["exec"]["persistent"] is True  # type: ignore[index]
    assert loaded["dev"]["exec"] is None
    env = loaded["banner"]["exec"]["env"]  # type: ignore[index]
    assert env["define"] == {"npm_package_name": "@a/ü", "npm_lifecycle_event": "banner"}
    assert loaded["build"]["cache"] is None


@pytest.mark.parametrize("fmt", ["json", "toml", "py"])
def test_uncommenting_the_cache_hint_caches_the_task(tmp_path: Path, fmt: str) -> None:
    text = render_project(TASKS[:1], fmt, manifest_name="package.json")
    mark = "// " if fmt == "json" else "# "
    hint = next(
        line for line in text.splitlines() if f'{mark}"cache"' in line or f"{mark}cache" in line
    )
    text = text.replace(hint, hint.replace(mark, "", 1))
    loaded = _load(tmp_path, fmt, text)
    outputs = loaded["build"]["cache"]["outputs"]  # type: ignore[index]
    assert outputs["files"] == [".next/**", "!.next/cache/**"]


@pytest.mark.parametrize("fmt", ["json", "toml", "py"])
def test_the_workspace_file_loads(tmp_path: Path, fmt: str) -> None:
    from vx.workspace.config_load import load_workspace_config

    (tmp_path / f"vx.workspace.{fmt}").write_text(render_workspace(fmt))
    assert load_workspace_config(tmp_path).plugins == ()


def test_json_text_is_stable() -> None:
    text = render_project(TASKS[1:3], "json", manifest_name="package.json")
    assert text == (
        "{\n"
        '  "tasks": {\n'
        '    "build:watch": {\n'
        '      "exec": {"command": "tsc -w", "persistent": true}\n'
        "    },\n"
        '    "dev": {\n'
        '      "dependsOn": ["build"]\n'
        "    }\n"
        "  }\n"
        "}\n"
    )
    json.loads(text)


OBSERVED = (
    TaskDraft(
        "build",
        ("^build",),
        "node build.js",
        cache={"inputs": {"files": ["src/**"]}, "outputs": {"files": ["lib/**", "meta.json"]}},
    ),
    TaskDraft("stamp", (), "date > out", uncached="its outputs differ between two runs (out)"),
)


@pytest.mark.parametrize("fmt", ["json", "toml", "py"])
def test_an_observed_block_and_an_uncached_reason_load_in_every_format(
    tmp_path: Path, fmt: str
) -> None:
    text = render_project(OBSERVED, fmt, manifest_name="package.json")
    mark = "//" if fmt == "json" else "#"
    assert f"{mark} not cached: its outputs differ between two runs (out)\n" in text
    loaded = _load(tmp_path, fmt, text)
    cache = loaded["build"]["cache"]
    assert cache["inputs"]["files"] == ["src/**"]  # type: ignore[index]
    assert cache["outputs"]["files"] == ["lib/**", "meta.json"]  # type: ignore[index]
    assert loaded["stamp"]["cache"] is None


@pytest.mark.parametrize("fmt", ["json", "toml", "py"])
def test_a_workspace_file_with_shared_tasks_loads(tmp_path: Path, fmt: str) -> None:
    from vx.workspace.config_load import load_workspace_config

    (tmp_path / f"vx.workspace.{fmt}").write_text(render_workspace(fmt, OBSERVED[:1]))
    build = load_workspace_config(tmp_path).tasks["build"]
    assert build.depends_on == ("^build",)
    assert build.cache_spec is not None
    assert build.cache_spec.outputs.files == ("lib/**", "meta.json")
