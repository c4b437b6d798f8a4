"""Glob → regex translation, brace expansion, ordered negation lists and literal prefixes."""

from __future__ import annotations

import re

import pytest

from vx.util.globs import (
    climbs,
    compile_globs,
    expand_braces,
    fixed_prefix,
    glob_to_regex,
    has_magic,
    normalize,
    segment_regex,
)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("packages/*", "packages/a", True),
        ("packages/*", "packages/a/b", False),
        ("packages/*", "packages", False),
        ("*.md", "README.md", True),
        ("*.md", "docs/README.md", False),
        ("*", ".hidden", True),
        ("**", "a/b/c", True),
        ("**", "a", True),
        ("**/*.ts", "index.ts", True),
        ("**/*.ts", "src/deep/index.ts", True),
        ("**/*.ts", "src/deep/index.tsx", False),
        ("src/**", "src", True),
        ("src/**", "src/a/b.js", True),
        ("src/**", "srcs/a.js", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("a/**/**/b", "a/x/b", True),
        ("a**b", "axxb", True),
        ("a**b", "ax/xb", False),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("file?", "file/", False),
        ("[abc].js", "b.js", True),
        ("[abc].js", "d.js", False),
        ("[a-c]x", "bx", True),
        ("[!a-c]x", "dx", True),
        ("[!a-c]x", "ax", False),
        ("[^a]x", "bx", True),
        ("a[/]b", "a/b", False),
        ("[]]", "]", True),
        ("[unclosed", "[unclosed", True),
        ("\\*.md", "*.md", True),
        ("\\*.md", "a.md", False),
        ("a.b", "axb", False),
        ("(x)+", "(x)+", True),
        ("./packages/*", "packages/a", True),
        ("dist/", "dist", True),
        ("Packages/*", "packages/a", False),
    ],
)
def test_glob_matches(pattern: str, path: str, expected: bool) -> None:
    assert bool(re.match(glob_to_regex(pattern), path)) is expected


@pytest.mark.parametrize(
    ("patterns", "path", "expected"),
    [
        (["dist/**", "!dist/cache/**"], "dist/a.js", True),
        (["dist/**", "!dist/cache/**"], "dist/cache/x", False),
        (["dist/**", "!dist/cache/**", "dist/cache/keep"], "dist/cache/keep", True),
        (["!dist/cache/**", "dist/**"], "dist/cache/x", True),
        (["!x"], "x", False),
        (["!x"], "y", False),
        ([], "anything", False),
        (["src/*.{ts,tsx}"], "src/a.tsx", True),
        (["src/*.{ts,tsx}"], "src/a.js", False),
        (["packages/*", "!packages/{internal,private}"], "packages/private", False),
        (["packages/*", "!packages/{internal,private}"], "packages/public", True),
        (["packages/*"], "./packages/a", True),
        (["packages/*"], "packages/a/", True),
    ],
)
def test_matcher_is_ordered(patterns: list[str], path: str, expected: bool) -> None:
    assert compile_globs(patterns).match(path) is expected


def test_matcher_keeps_its_patterns_and_lists_includes() -> None:
    matcher = compile_globs(["a/*", "!a/b", "c"])
    assert matcher.patterns == ("a/*", "!a/b", "c")
    assert matcher.includes == ("a/*", "c")


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("packages/*", "packages"),
        ("src/**/*.ts", "src"),
        ("*.md", ""),
        ("**", ""),
        ("a/b/c.txt", "a/b/c.txt"),
        ("./apps/web/*", "apps/web"),
        ("!dist/cache/**", "dist/cache"),
        ("src/{a,b}/x", "src"),
        ("pkg[0-9]/x", ""),
        (".", ""),
    ],
)
def test_fixed_prefix(pattern: str, expected: str) -> None:
    assert fixed_prefix(pattern) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("a", ("a",)),
        ("*.{ts,tsx}", ("*.ts", "*.tsx")),
        ("{a,b}/{c,d}", ("a/c", "a/d", "b/c", "b/d")),
        ("x{a,{b,c}}", ("xa", "xb", "xc")),
        ("{a,a}", ("a",)),
        ("{solo}", ("{solo}",)),
        ("{open", ("{open",)),
        ("\\{a,b}", ("\\{a,b}",)),
        ("{,.min}.js", (".js", ".min.js")),
    ],
)
def test_expand_braces(pattern: str, expected: tuple[str, ...]) -> None:
    assert expand_braces(pattern) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [("./a/", "a"), ("/a/b", "a/b"), ("", "."), ("./", "."), ("a", "a"), ("././a", "a")],
)
def test_normalize(pattern: str, expected: str) -> None:
    assert normalize(pattern) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("packages", False), ("pkg*", True), ("a?", True), ("[ab]", True), ("{a,b}", True)],
)
def test_has_magic(text: str, expected: bool) -> None:
    assert has_magic(text) is expected


@pytest.mark.parametrize(
    ("segment", "name", "expected"),
    [("*", "anything", True), ("a*", "abc", True), ("a*", "ba", False), ("?", "ab", False)],
)
def test_segment_regex(segment: str, name: str, expected: bool) -> None:
    assert bool(segment_regex(segment).match(name)) is expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("..", True),
        ("../lib/**", True),
        ("!../lib/**", True),
        ("a/../../x", True),
        ("a/..", True),
        ("{..,a}/b", True),
        ("src/{a,{b,..}}/x", True),
        ("\\.\\./x", True),
        (".\\./x", True),
        ("dist/**", False),
        ("...", False),
        ("a..b", False),
        ("..x/y", False),
        ("x../y", False),
        ("{.,a}/b", False),
        ("*", False),
    ],
)
def test_climbs(pattern: str, expected: bool) -> None:
    assert climbs(pattern) is expected
