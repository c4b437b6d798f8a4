"""`vx.mcp.answers`' bounds: task output masked and cut to its end, and file excerpts only
inside the workspace, masked too."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from vx.mcp.answers import OUTPUT_CHARS, Sources, _bounded, _excerpt

if TYPE_CHECKING:
    from pathlib import Path

TOKEN = "tok-0123456789abcdef"  # noqa: S105  a value no answer may carry


def sources(root: Path) -> Sources:
    return Sources(
        root=root,
        history=root / ".vx",
        env={"NPM_TOKEN": TOKEN, "HOME": "/home/me"},
        plan_doc=lambda _plan: {},
        why_doc=lambda _why: {},
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"using {TOKEN}\n", "using ***\n"),
        ("x" * OUTPUT_CHARS, "x" * OUTPUT_CHARS),
        (
            "a" * 5 + "b" * OUTPUT_CHARS,
            "[… 5 earlier characters cut]\n" + "b" * OUTPUT_CHARS,
        ),
    ],
)
def test_output_is_masked_and_cut_to_its_end(tmp_path: Path, text: str, expected: str) -> None:
    assert _bounded(text, sources(tmp_path)) == expected


def test_an_excerpt_is_masked_and_centred_on_the_line(tmp_path: Path) -> None:
    lines = [f"line {n}" for n in range(1, 31)]
    lines[14] = f"const key = '{TOKEN}';"
    (tmp_path / "src").mkdir()
    (tmp_path / "src/a.ts").write_text("\n".join(lines) + "\n")
    got = _excerpt(sources(tmp_path), {"file": str(tmp_path / "src/a.ts"), "line": 15})
    assert got == {
        "file": "src/a.ts",
        "line": 15,
        "firstLine": 9,
        "text": "\n".join([*lines[8:14], "const key = '***';", *lines[15:21]]),
    }


def test_no_excerpt_outside_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("private\n")
    src = sources(root)
    assert _excerpt(src, {"file": str(tmp_path / "secret.txt"), "line": 1}) is None
    assert _excerpt(src, {"file": str(root / "missing.ts")}) is None
