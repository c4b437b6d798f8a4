"""Where forwarded args land in a command."""

from __future__ import annotations

import pytest

from vx.run.forward import append_args


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        ("vitest run", ("--watch",), "vitest run --watch"),
        ("vitest run", (), "vitest run"),
        ("echo", ("a b", "it's"), "echo 'a b' 'it'\"'\"'s'"),
        ("tsc -b\n", ("--x",), "tsc -b --x"),
        ("mkdir -p dist\ntsc -b\n\n\n", ("--x",), "mkdir -p dist\ntsc -b --x"),
        ("echo args: # show", ("--x",), "echo args: --x # show"),
        ("echo hi # greet\n# more\n# notes", ("--x",), "echo hi --x # greet\n# more\n# notes"),
        ("echo 'a # not a comment'", ("--x",), "echo 'a # not a comment' --x"),
        ("echo a#b", ("--x",), "echo a#b --x"),
        ("cat <<X\nbody line\nX", ("--x",), "cat <<X --x\nbody line\nX"),
        ("cat <<'EOF'\n$HOME 'open\nEOF\n", ("-n",), "cat <<'EOF' -n\n$HOME 'open\nEOF"),
        ("cat <<-X\n\tbody\n\tX", ("--x",), "cat <<-X --x\n\tbody\n\tX"),
        ("echo '<<X'\necho done", ("--x",), "echo '<<X'\necho done --x"),
        ("echo hi # <<X\necho after", ("--x",), "echo hi # <<X\necho after --x"),
        ("cat <<X\nX\necho last", ("--x",), "cat <<X\nX\necho last --x"),
        ('echo "multi\nline"', ("--x",), 'echo "multi\nline" --x'),
        ("cat <<<word", ("--x",), "cat <<<word --x"),
    ],
)
def test_append_args(command: str, args: tuple[str, ...], expected: str) -> None:
    assert append_args(command, args) == expected
