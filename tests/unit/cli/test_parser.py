"""The parse rules of a verb's flag table, driven through a small table shaped like `vx run`'s."""

from __future__ import annotations

import pytest

from vx.cli.parser import (
    Command,
    Flag,
    Number,
    ParsedArgs,
    Percent,
    Takes,
    parse,
    split_forwarded,
    unknown_flag,
)
from vx.errors import ErrorCode, UserError

FAKE = Command(
    "fake",
    flags=(
        Flag("--all", "every project"),
        Flag("--filter", "pick projects", Takes.VALUE, metavar="<pattern>", repeat=True),
        Flag("--affected", "changed since", Takes.OPTIONAL, metavar="<base>", empty_is_bare=True),
        Flag("--graph", "DOT", Takes.OPTIONAL, metavar="<path>", empty_is_bare=True),
        Flag("--dry", "plan only", Takes.OPTIONAL, choices=("text", "json"), bare="text"),
        Flag("--exclude-dependencies", "drop edges", Takes.OPTIONAL, metavar="<names>"),
        Flag(
            "--concurrency",
            "at once",
            Takes.VALUE,
            metavar="<n|n%>",
            number=Number.INT_OR_PERCENT,
            minimum=1,
        ),
        Flag("--retry", "again", Takes.VALUE, metavar="<n>", number=Number.INT),
        Flag("--cache-dir", "where", Takes.VALUE, metavar="<path>", no_dash=True),
        Flag("--format", "how", Takes.VALUE, choices=("pretty", "json")),
    ),
    words="task",
    most_words=None,
    forwards=True,
)
BARE = Command("bare")
ONE = Command("one", words="target", most_words=1)


def values(args: ParsedArgs) -> dict[str, object]:
    return dict(args.values)


@pytest.mark.parametrize(
    ("argv", "words", "flags", "forwarded"),
    [
        ([], (), {}, None),
        (["build", "lint"], ("build", "lint"), {}, None),
        (["build", "--all", "lint"], ("build", "lint"), {"all": True}, None),
        # value flags: space form and `=` form, verbatim values
        (["--filter", "app"], (), {"filter": ("app",)}, None),
        (["--filter=app"], (), {"filter": ("app",)}, None),
        (["--filter", "!app", "--filter=...lib"], (), {"filter": ("!app", "...lib")}, None),
        (["--filter", "-x"], (), {"filter": ("-x",)}, None),
        (["--filter=a=b"], (), {"filter": ("a=b",)}, None),
        (["--filter", "--"], (), None, None),
        # optional-value flags: a value only after `=`; the next word stays a positional
        (["--affected", "build"], ("build",), {"affected": ""}, None),
        (["--affected=origin/main", "build"], ("build",), {"affected": "origin/main"}, None),
        (["--affected="], (), {"affected": ""}, None),
        (["--graph="], (), {"graph": ""}, None),
        (["--graph=out.dot"], (), {"graph": "out.dot"}, None),
        (["--dry"], (), {"dry": "text"}, None),
        (["--dry=json", "build"], ("build",), {"dry": "json"}, None),
        (["--exclude-dependencies", "gen"], ("gen",), {"exclude-dependencies": ""}, None),
        (["--exclude-dependencies=gen,lint"], (), {"exclude-dependencies": "gen,lint"}, None),
        # numbers: plain decimal integers, and n% where the flag takes it
        (["--concurrency", "4"], (), {"concurrency": 4}, None),
        (["--concurrency=50%"], (), {"concurrency": Percent(50)}, None),
        (["--concurrency", "007"], (), {"concurrency": 7}, None),
        (["--retry", "0"], (), {"retry": 0}, None),
        (["--retry", str(2**53)], (), {"retry": 2**53}, None),
        # no-dash values: the `=` form still takes a leading dash
        (["--cache-dir", "/tmp/c"], (), {"cache-dir": "/tmp/c"}, None),
        (["--cache-dir=-odd"], (), {"cache-dir": "-odd"}, None),
        (["--format", "json"], (), {"format": "json"}, None),
        # `--` ends vx's flags
        (["build", "--", "--watch", "-x"], ("build",), {}, ("--watch", "-x")),
        (["build", "--"], ("build",), {}, ()),
        (["--", "--all", "--", "x"], (), {}, ("--all", "--", "x")),
        (["build", "--", "--help"], ("build",), {}, ("--help",)),
        (["-"], ("-",), {}, None),
    ],
)
def test_accepted(argv, words, flags, forwarded):
    if flags is None:
        with pytest.raises(UserError):
            parse(FAKE, argv)
        return
    args = parse(FAKE, argv)
    assert (args.words, values(args), args.forwarded, args.help) == (words, flags, forwarded, False)


@pytest.mark.parametrize(
    ("command", "argv", "message"),
    [
        # unknown flags name the nearest one the verb has
        (FAKE, ["--concurency", "4"], "unknown flag: --concurency (did you mean --concurrency?)"),
        (FAKE, ["--concurency=4"], "unknown flag: --concurency (did you mean --concurrency?)"),
        (FAKE, ["--json"], "unknown flag: --json (did you mean --format json?)"),
        (FAKE, ["--hlp"], "unknown flag: --hlp (did you mean --help?)"),
        (FAKE, ["--zebra"], "unknown flag: --zebra — see vx fake --help"),
        (FAKE, ["-x"], "unknown flag: -x — see vx fake --help"),
        (BARE, ["--hlp"], "unknown flag: --hlp (did you mean --help?)"),
        (BARE, ["--json"], "unknown flag: --json — see vx bare --help"),
        # numbers
        *[
            (
                FAKE,
                ["--concurrency", bad],
                f'--concurrency takes a whole number or a percentage like 50% in plain decimal digits, not "{bad}" — see vx fake --help',
            )
            for bad in ("0x10", "1e3", "2.7", "+4", " 4", "4 ", "-1", "%", "5.5%", "\uff14")
        ],
        (
            FAKE,
            ["--retry", "50%"],
            '--retry takes a whole number in plain decimal digits, not "50%" — see vx fake --help',
        ),
        (
            FAKE,
            ["--retry=1e3"],
            '--retry takes a whole number in plain decimal digits, not "1e3" — see vx fake --help',
        ),
        (
            FAKE,
            ["--retry", str(2**53 + 1)],
            f"--retry {2**53 + 1} is too large: the most is {2**53} — see vx fake --help",
        ),
        (
            FAKE,
            ["--concurrency", "0"],
            "--concurrency must be at least 1, not 0 — see vx fake --help",
        ),
        (
            FAKE,
            ["--concurrency", "0%"],
            "--concurrency must be at least 1, not 0% — see vx fake --help",
        ),
        # empty `=` values
        (
            FAKE,
            ["--filter="],
            "--filter= is empty: --filter needs a value: --filter <pattern> or --filter=<pattern> — see vx fake --help",
        ),
        (
            FAKE,
            ["--retry="],
            "--retry= is empty: --retry needs a value: --retry <n> or --retry=<n> — see vx fake --help",
        ),
        (
            FAKE,
            ["--cache-dir="],
            "--cache-dir= is empty: --cache-dir needs a value: --cache-dir <path> or --cache-dir=<path> — see vx fake --help",
        ),
        (
            FAKE,
            ["--dry="],
            "--dry= is empty: write --dry alone, or --dry=text|json — see vx fake --help",
        ),
        (
            FAKE,
            ["--exclude-dependencies="],
            "--exclude-dependencies= is empty: write --exclude-dependencies alone, or --exclude-dependencies=<names> — see vx fake --help",
        ),
        (
            FAKE,
            ["--format="],
            "--format= is empty: --format needs pretty or json — see vx fake --help",
        ),
        # missing, empty and dash-led values
        (
            FAKE,
            ["--filter", ""],
            '--filter got "": it needs a value: --filter <pattern> or --filter=<pattern> — see vx fake --help',
        ),
        (
            FAKE,
            ["--filter"],
            "--filter needs a value: --filter <pattern> or --filter=<pattern> — see vx fake --help",
        ),
        (
            FAKE,
            ["--filter", "--", "x"],
            "--filter needs a value: --filter <pattern> or --filter=<pattern> — see vx fake --help",
        ),
        (
            FAKE,
            ["--cache-dir", "--force"],
            '--cache-dir got "--force", which looks like a flag: write --cache-dir=--force if that is the value — see vx fake --help',
        ),
        (
            FAKE,
            ["--cache-dir", "-"],
            '--cache-dir got "-", which looks like a flag: write --cache-dir=- if that is the value — see vx fake --help',
        ),
        # choices
        (
            FAKE,
            ["--format", "jsn"],
            '--format takes pretty or json, not "jsn" (did you mean json?)',
        ),
        (
            FAKE,
            ["--format", "xml"],
            '--format takes pretty or json, not "xml" — see vx fake --help',
        ),
        (FAKE, ["--dry=yaml"], '--dry takes text or json, not "yaml" — see vx fake --help'),
        # switches, repeats, words, forwarding
        (FAKE, ["--all=yes"], "--all takes no value: write --all alone — see vx fake --help"),
        (FAKE, ["--all", "--all"], "--all is given twice: keep one — see vx fake --help"),
        (
            FAKE,
            ["--retry", "1", "--retry=2"],
            "--retry is given twice: keep one — see vx fake --help",
        ),
        (BARE, ["x"], "vx bare takes no arguments, got: x — see vx bare --help"),
        (ONE, ["a", "b"], "vx one takes one target, got 2: a b — see vx one --help"),
        (
            BARE,
            ["--", "x"],
            "vx bare forwards no arguments: drop the -- and what follows — see vx bare --help",
        ),
    ],
)
def test_refused(command, argv, message):
    with pytest.raises(UserError) as info:
        parse(command, argv)
    assert info.value.code is ErrorCode.USAGE
    assert info.value.message == message


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["-h"], ["build", "--all", "-h"], ["--zebra", "--help"], ["--help", "--", "x"]],
)
def test_help_wins_before_dashdash(argv):
    assert parse(FAKE, argv) == ParsedArgs("fake", help=True)


@pytest.mark.parametrize(
    ("argv", "own", "forwarded"),
    [
        ([], [], None),
        (["a"], ["a"], None),
        (["a", "--"], ["a"], ()),
        (["--", "--"], [], ("--",)),
    ],
)
def test_split_forwarded(argv, own, forwarded):
    assert split_forwarded(argv) == (own, forwarded)


@pytest.mark.parametrize(
    ("flag", "usage"),
    [
        (Flag("--all", "x"), "--all"),
        (Flag("--filter", "x", Takes.VALUE, metavar="<pattern>"), "--filter <pattern>"),
        (Flag("--affected", "x", Takes.OPTIONAL, metavar="<base>"), "--affected[=<base>]"),
        (Flag("--format", "x", Takes.VALUE, choices=("pretty", "json")), "--format pretty|json"),
        (
            Flag("--dry", "x", Takes.OPTIONAL, choices=("text", "json"), bare="text"),
            "--dry[=text|json]",
        ),
    ],
)
def test_usage_spelling(flag, usage):
    assert flag.usage == usage


@pytest.mark.parametrize(
    "make",
    [
        lambda: Flag("-a", "x"),
        lambda: Flag("--all", "x", choices=("a",)),
        lambda: Flag("--n", "x", number=Number.INT),
        lambda: Flag("--v", "x", Takes.VALUE, bare="x"),
        lambda: Flag("--v", "x", Takes.VALUE, choices=("a",), number=Number.INT),
    ],
)
def test_a_malformed_row_is_a_defect(make):
    with pytest.raises(ValueError):
        make()


def test_typed_getters():
    args = parse(FAKE, ["--all", "--filter", "a", "--retry", "2", "--concurrency=25%", "--dry"])
    assert args.switch("all") is True
    assert args.switch("graph") is False
    assert args.texts("filter") == ("a",)
    assert args.texts("missing") == ()
    assert args.integer("retry") == 2
    assert args.amount("concurrency") == Percent(25)
    assert str(Percent(25)) == "25%"
    assert args.text("dry") == "text"
    assert args.text("format") is None
    assert args.given("all")
    assert not args.given("format")
    with pytest.raises(TypeError):
        args.text("filter")
    with pytest.raises(TypeError):
        args.integer("all")


@pytest.mark.parametrize(
    ("name", "known", "message"),
    [
        ("--formt", ["--format"], "unknown flag: --formt (did you mean --format?)"),
        ("--json", ["--format"], "unknown flag: --json (did you mean --format json?)"),
        ("--json", ["--all"], "unknown flag: --json"),
        ("--zzzzzz", ["--all"], "unknown flag: --zzzzzz"),
    ],
)
def test_unknown_flag(name, known, message):
    assert unknown_flag(name, known) == message
