"""strace's log read back: unfinished calls joined, children followed from their fork."""

from __future__ import annotations

from vx.trace.parse import parse_lines


def test_joins_unfinished_halves_and_follows_a_child_seen_before_its_fork_returns() -> None:
    log = [
        '10 chdir("/w/pkg") = 0\n',
        "10 vfork( <unfinished ...>\n",
        '11 openat(AT_FDCWD, "src/a.ts", O_RDONLY <unfinished ...>\n',
        "10 <... vfork resumed>) = 11\n",
        "11 <... openat resumed>) = 3\n",
        '11 openat(AT_FDCWD, "/w/pkg/lib", O_RDONLY|O_DIRECTORY) = 4\n',
        '11 openat(4, "x\\"y\\303\\251.js", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 5\n',
        "11 fchdir(4) = 0\n",
        '11 unlinkat(AT_FDCWD, "old.js", 0) = 0\n',
        '10 openat(AT_FDCWD, "gone", O_RDONLY) = -1 ENOENT (No such file or directory)\n',
        '10 execve("./bin/tool", ["tool"], 0x1 /* 3 vars */) = 0\n',
    ]
    trace = parse_lines(log, "/w")
    assert trace.reads == {"/w/pkg/src/a.ts"}
    assert trace.writes == {'/w/pkg/lib/x"yé.js'}
    assert trace.unlinks == {"/w/pkg/lib/old.js"}
    assert trace.execs == {"/w/pkg/bin/tool"}


def test_a_child_whose_lines_come_before_its_fork_line_starts_in_its_parents_directory() -> None:
    """With `-z` strace prints a fork whole, once it returned; a child may have run first."""
    log = [
        '10 chdir("/w/a") = 0\n',
        '11 execve("/usr/bin/mv", ["mv"], 0x1 /* 3 vars */) = 0\n',
        "10 vfork() = 11\n",
        '11 renameat2(AT_FDCWD, "out.txt", AT_FDCWD, "moved.txt", RENAME_NOREPLACE) = 0\n',
        '12 unlinkat(AT_FDCWD, "moved.txt", 0) = 0\n',
        "10 vfork() = 12\n",
    ]
    trace = parse_lines(log, "/w")
    assert trace.renames == (("/w/a/out.txt", "/w/a/moved.txt"),)
    assert trace.unlinks == {"/w/a/out.txt", "/w/a/moved.txt"}
