"""dependsOn spec parsing: every accepted shape, and the reason each malformed one is refused."""

from __future__ import annotations

import pytest

from vx.graph.deps import DepKind, DepSpec, parse_dep


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("build", DepSpec(DepKind.SAME, "build")),
        ("build.bun", DepSpec(DepKind.SAME, "build.bun")),
        ("test:unit", DepSpec(DepKind.SAME, "test:unit")),
        ("^build", DepSpec(DepKind.UPSTREAM, "build")),
        ("ui#build", DepSpec(DepKind.ANCHORED, "build", "ui")),
        ("@acme/ui#build", DepSpec(DepKind.ANCHORED, "build", "@acme/ui")),
        ("//#codegen", DepSpec(DepKind.ANCHORED, "codegen", "//")),
    ],
)
def test_parse_accepts_each_shape_and_spells_it_back(text: str, spec: DepSpec) -> None:
    assert parse_dep(text) == spec
    assert str(spec) == text


@pytest.mark.parametrize(
    ("text", "is_root"),
    [("//#gen", True), ("ui#gen", False), ("^gen", False), ("gen", False)],
)
def test_is_root_only_for_the_root_anchor(text: str, is_root: bool) -> None:
    assert parse_dep(text).is_root is is_root


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", '"" names no task'),
        ("^", '"^" names no task after ^'),
        ("^^build", '"^^build" has a task name starting with ^'),
        ("^ui#build", '"^ui#build" mixes ^ with pkg#task: write ^build or ui#build'),
        ("ui#", '"ui#" names no task after #'),
        ("#build", '"#build" names no project before # (the root\'s task is //#build)'),
        ("a#b#c", '"a#b#c" holds more than one #'),
        ("ui#^build", '"ui#^build" has a task name starting with ^'),
        ("my task", '"my task" holds whitespace in its task name'),
        ("^my task", '"^my task" holds whitespace in its task name'),
        ("ui#my\ttask", '"ui#my\ttask" holds whitespace in its task name'),
        ("my ui#build", '"my ui#build" holds whitespace in its project name'),
    ],
)
def test_parse_refuses_malformed_specs(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_dep(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("kind", "project"),
    [(DepKind.SAME, "ui"), (DepKind.UPSTREAM, "ui"), (DepKind.ANCHORED, None)],
)
def test_project_is_set_exactly_for_anchored_specs(kind: DepKind, project: str | None) -> None:
    with pytest.raises(ValueError, match="only an anchored spec names a project"):
        DepSpec(kind, "build", project)
