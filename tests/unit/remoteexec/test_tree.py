"""Input roots and REAPI messages: symlinks kept, directories walked once a run, messages
read back as written, and a tree laid out again byte for byte."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.cache.remote.reapi import Digest
from vx.remoteexec.client import output_roots
from vx.remoteexec.messages import Action, ActionResult, Command, Directory
from vx.remoteexec.tree import TreeBuilder, lay_out

if TYPE_CHECKING:
    from pathlib import Path


def _workspace(root: Path) -> Path:
    (root / "pkg" / "src").mkdir(parents=True)
    (root / "pkg" / "src" / "a.txt").write_text("a\n")
    (root / "pkg" / "src" / "skip.txt").write_text("not declared\n")
    tool = root / "node_modules" / ".store" / "tool.sh"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho hi\n")
    tool.chmod(0o755)
    (root / "node_modules" / ".bin").mkdir()
    (root / "node_modules" / ".bin" / "tool").symlink_to("../.store/tool.sh")
    return root


def test_a_root_holds_the_declared_files_and_whole_dirs_with_symlinks_kept(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    builder = TreeBuilder(str(ws))
    digest = builder.root(["pkg/src/a.txt"], ["node_modules"])

    def read(d: Digest) -> bytes:
        blob = builder.blobs[d]
        return blob if isinstance(blob, bytes) else open(blob, "rb").read()  # noqa: PTH123

    out = tmp_path / "out"
    lay_out(Directory.decode(read(digest)), out, read, lambda d: Directory.decode(read(d)))
    assert (out / "pkg" / "src" / "a.txt").read_text() == "a\n"
    assert not (out / "pkg" / "src" / "skip.txt").exists()
    link = out / "node_modules" / ".bin" / "tool"
    assert link.is_symlink()
    assert str(link.readlink()) == "../.store/tool.sh"
    assert (out / "node_modules" / ".store" / "tool.sh").stat().st_mode & 0o100


def test_a_whole_directory_is_walked_once_a_run(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    builder = TreeBuilder(str(ws))
    first = builder.root(["pkg/src/a.txt"], ["node_modules"])
    (ws / "node_modules" / "late.txt").write_text("added after the first walk\n")
    assert builder.root(["pkg/src/a.txt"], ["node_modules"]) == first
    assert TreeBuilder(str(ws)).root(["pkg/src/a.txt"], ["node_modules"]) != first


def test_messages_read_back_as_written() -> None:
    d = Digest.of(b"x")
    command = Command(("sh", "-c", "make"), (("A", "1"), ("PATH", "/bin")), "pkg", ("dist",))
    assert Command.decode(command.encode()) == command
    action = Action(d, Digest.of(b"root"), 30)
    assert Action.decode(action.encode()) == action
    result = ActionResult(3, (("out.txt", d, True),), (("dist", d),), d, None)
    assert ActionResult.decode(result.encode()) == result


def test_output_roots_are_the_globs_literal_leading_dirs() -> None:
    assert output_roots(["dist/**", "out/*.js", "!dist/tmp/**", "report.txt", "**/*.map"]) == (
        "dist",
        "out",
        "report.txt",
    )
