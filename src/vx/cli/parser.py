"""One verb's argv → ParsedArgs, read from the verb's flag table, every refusal a UserError(USAGE).

One pass reads the tokens in order and enforces vx's rules: an optional-value flag takes its
value only after `=` (so a following word stays a positional), `--` ends vx's flags, a
space-form value is taken verbatim (`--filter !a`), some flags refuse a dash-led or empty
value, and an unknown flag names the nearest one the verb has. Values are then checked and
converted by the flag's row. Not argparse: its rules are not vx's, and importing it cost
every invocation (an all-cached run included) more than the whole parse.
"""

from __future__ import annotations

import re
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, NoReturn, Self

from vx.errors import ErrorCode, UserError
from vx.util.fuzzy import did_you_mean
from vx.util.record import Frozen, Record
from vx.util.text import ECHO_LIMIT, clip

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

HELP_FLAGS = ("--help", "-h")
MAX_NUMBER = 2**53
_DECIMAL = re.compile(r"[0-9]+")


class Takes(Enum):
    """What a flag reads after its name."""

    NOTHING = "nothing"  # a switch: `--all`
    VALUE = "value"  # `--filter x` or `--filter=x`
    OPTIONAL = "optional"  # `--affected` bare, or `--affected=x`; never the next word


class Number(Enum):
    """The numeric forms a value flag accepts; anything else is refused by name."""

    INT = "int"
    INT_OR_PERCENT = "int-or-percent"


class Percent(Frozen):
    """A `50%` value: a share of the CPUs, resolved by whoever knows the count.

    Not a tuple (a NamedTuple would pass for a repeatable flag's values), and immutable.
    """

    __slots__ = ("value",)
    value: int

    def __init__(self, value: int) -> None:
        self._init(value=value)

    def __repr__(self) -> str:
        return f"Percent({self.value})"

    def __str__(self) -> str:
        return f"{self.value}%"


FlagValue = bool | str | int | Percent | tuple[str, ...]


class _FlagRow(Record):
    name: str
    help: str
    takes: Takes = Takes.NOTHING
    metavar: str = ""
    choices: tuple[str, ...] = ()
    number: Number | None = None
    minimum: int = 0
    repeat: bool = False
    bare: str = ""
    empty_is_bare: bool = False
    no_dash: bool = False


class Flag(_FlagRow):
    """One row of a verb's flag table: the parser, the help and the completions read it.

    `bare` is the value an OPTIONAL flag holds when given without `=`. `empty_is_bare` lets
    `--flag=` act as the bare form; otherwise an empty `=` value is refused, since it is
    usually an unset shell variable. `no_dash` refuses a space-form value starting with `-`
    (a swallowed flag, never a real path); the `=` form still takes one.
    """

    __slots__ = ()

    def __new__(
        cls,
        name: str,
        help: str,  # noqa: A002  the column's name
        takes: Takes = Takes.NOTHING,
        metavar: str = "",
        choices: tuple[str, ...] = (),
        number: Number | None = None,
        minimum: int = 0,
        repeat: bool = False,
        bare: str = "",
        empty_is_bare: bool = False,
        no_dash: bool = False,
    ) -> Self:
        if not name.startswith("--"):
            raise ValueError(f"a flag's name starts with --: {name}")
        if takes is Takes.NOTHING and (choices or number):
            raise ValueError(f"a switch takes no value to check: {name}")
        if takes is not Takes.OPTIONAL and (bare or empty_is_bare):
            raise ValueError(f"only an optional-value flag has a bare form: {name}")
        if choices and number:
            raise ValueError(f"a flag takes choices or a number, not both: {name}")
        row = (name, help, takes, metavar, choices, number, minimum, repeat, bare)
        return super().__new__(cls, *row, empty_is_bare, no_dash)

    @property
    def dest(self) -> str:
        """The key ParsedArgs stores the flag under: its name without the dashes."""
        return self.name[2:]

    @property
    def usage(self) -> str:
        """How the synopsis and the help table spell the flag."""
        shown = "|".join(self.choices) if self.choices else self.metavar
        if self.takes is Takes.VALUE:
            return f"{self.name} {shown}"
        if self.takes is Takes.OPTIONAL:
            return f"{self.name}[={shown}]"
        return self.name


class Section(Record):
    """A block of a verb's help after its flags: a heading, then two-column rows."""

    heading: str
    rows: tuple[tuple[str, str], ...]


class Command(Record):
    """A verb's whole argument surface: flags, positional words, `--`, and its help prose.

    `most_words` caps the positionals (None: any number, the verb checks); `words` names
    them in refusals. `rewrite` turns other tools' flags into the verb's own before the parse
    (or refuses them), for the words before `--`.
    """

    verb: str
    flags: tuple[Flag, ...] = ()
    words: str = "argument"
    most_words: int | None = 0
    forwards: bool = False
    sections: tuple[Section, ...] = ()
    rewrite: Callable[[Command, Sequence[str]], list[str]] | None = None

    def flag(self, name: str) -> Flag | None:
        """The table row called `name`."""
        for f in self.flags:
            if f.name == name:
                return f
        return None


class ParsedArgs(Record):
    """What one invocation said: positional words, flags given (by dest), forwarded args.

    `forwarded` is None when there was no `--`, so a verb can tell `--` with nothing after it
    from no `--` at all. `help` is set when `-h`/`--help` came before any `--`.
    """

    verb: str
    words: tuple[str, ...] = ()
    values: Mapping[str, FlagValue] = MappingProxyType({})
    forwarded: tuple[str, ...] | None = None
    help: bool = False

    def given(self, dest: str) -> bool:
        """The flag appeared on the command line."""
        return dest in self.values

    def switch(self, dest: str) -> bool:
        """A switch's state."""
        value = self.values.get(dest, False)
        if not isinstance(value, bool):
            raise _wrong_type(dest, value)
        return value

    def text(self, dest: str) -> str | None:
        """A VALUE or OPTIONAL flag's text; an OPTIONAL flag given bare holds its `bare`."""
        value = self.values.get(dest)
        if value is not None and not isinstance(value, str):
            raise _wrong_type(dest, value)
        return value

    def texts(self, dest: str) -> tuple[str, ...]:
        """A repeatable flag's values, in command-line order."""
        value = self.values.get(dest, ())
        if not isinstance(value, tuple):
            raise _wrong_type(dest, value)
        return value

    def integer(self, dest: str) -> int | None:
        """A Number.INT flag's value."""
        value = self.values.get(dest)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise _wrong_type(dest, value)
        return value

    def amount(self, dest: str) -> int | Percent | None:
        """A Number.INT_OR_PERCENT flag's value."""
        value = self.values.get(dest)
        if value is not None and (not isinstance(value, int | Percent) or isinstance(value, bool)):
            raise _wrong_type(dest, value)
        return value


def _wrong_type(dest: str, value: object) -> TypeError:
    """A getter that does not match the flag's table row: a defect in the verb, not the user's."""
    return TypeError(f"--{dest} holds {value!r}, which that getter does not read")


def split_forwarded(argv: Sequence[str]) -> tuple[list[str], tuple[str, ...] | None]:
    """Cut argv at the first `--`: vx's own words, then what belongs to the task."""
    if "--" not in argv:
        return list(argv), None
    at = list(argv).index("--")
    return list(argv[:at]), tuple(argv[at + 1 :])


def parse(command: Command, argv: Sequence[str]) -> ParsedArgs:
    """Read one verb's arguments (argv after the verb) against its table."""
    own, forwarded = split_forwarded(argv)
    if any(arg in HELP_FLAGS for arg in own):
        return ParsedArgs(command.verb, help=True)
    if command.rewrite is not None:
        own = command.rewrite(command, own)
    words, tokens = _sort_tokens(command, own)
    if forwarded is not None and not command.forwards:
        _refuse(command, f"vx {command.verb} forwards no arguments: drop the -- and what follows")
    if command.most_words is not None and len(words) > command.most_words:
        _refuse(command, _too_many(command, words))
    values: dict[str, FlagValue] = {}
    repeated: dict[str, list[str]] = {}
    by_name = {f.name: f for f in command.flags}
    for token in tokens:
        name, _, text = token.partition("=")
        flag = by_name[name]
        if flag.takes is Takes.NOTHING:
            values[flag.dest] = True
        elif flag.repeat:
            repeated.setdefault(flag.dest, []).append(str(_Converter(command, flag).convert(text)))
        else:
            values[flag.dest] = _Converter(command, flag).convert(text)
    values.update((dest, tuple(texts)) for dest, texts in repeated.items())
    return ParsedArgs(command.verb, tuple(words), MappingProxyType(values), forwarded)


def unknown_flag(name: str, known: Sequence[str]) -> str:
    """`unknown flag: --x`, with the nearest known flag (or `--format json` for `--json`)."""
    if name == "--json" and "--format" in known:
        return "unknown flag: --json (did you mean --format json?)"
    near = did_you_mean(name, known)
    if near is not None and _opposites(name, near):
        near = None
    return f"unknown flag: {clip(name)}" + (f" (did you mean {near}?)" if near else "")


def _opposites(a: str, b: str) -> bool:
    """Two flags that say the reverse of each other: never each other's did-you-mean."""
    pairs = (("include", "exclude"), ("--no-", "--"), ("enable", "disable"), ("with-", "without-"))
    return any(a.replace(x, y) == b or a.replace(y, x) == b for x, y in pairs)


def _sort_tokens(command: Command, own: list[str]) -> tuple[list[str], list[str]]:
    """Split vx's own tokens into positional words and `--flag` / `--flag=value` tokens."""
    by_name = {f.name: f for f in command.flags}
    words: list[str] = []
    tokens: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(own):
        arg = own[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            words.append(arg)
            continue
        name, eq, value = arg.partition("=")
        flag = by_name.get(name)
        if flag is None:
            known = [*by_name, "--help"]
            message = unknown_flag(name, known)
            _refuse(command, message, pointer="did you mean" not in message)
        if flag.name in seen and not flag.repeat:
            _refuse(command, f"{flag.name} is given twice: keep one")
        seen.add(flag.name)
        if flag.takes is Takes.NOTHING:
            if eq:
                _refuse(command, f"{flag.name} takes no value: write {flag.name} alone")
            tokens.append(flag.name)
        elif flag.takes is Takes.OPTIONAL:
            if eq and not value and not flag.empty_is_bare:
                _refuse(command, f"{flag.name}= is empty: {_bare_or_value(flag)}")
            tokens.append(f"{flag.name}={value or flag.bare}")
        elif eq:
            if not value:
                _refuse(command, f"{flag.name}= is empty: {flag.name} needs {_what(flag)}")
            tokens.append(f"{flag.name}={value}")
        else:
            if i >= len(own):
                _refuse(command, f"{flag.name} needs {_what(flag)}")
            value = own[i]
            i += 1
            if not value:
                _refuse(command, f'{flag.name} got "": it needs {_what(flag)}')
            if flag.no_dash and value.startswith("-"):
                _refuse(
                    command,
                    f'{flag.name} got "{clip(value)}", which looks like a flag: '
                    f"write {flag.name}={clip(value)} if that is the value",
                )
            tokens.append(f"{flag.name}={value}")
    return words, tokens


class _Converter(Record):
    """A flag's value as ParsedArgs keeps it: choices and numbers checked, with a message
    that names the flag."""

    command: Command
    flag: Flag

    def convert(self, text: str) -> str | int | Percent:
        """The value kept for `text`, or a refusal naming the flag."""
        flag = self.flag
        if flag.takes is Takes.OPTIONAL and text == flag.bare:
            return text
        if flag.choices and text not in flag.choices:
            near = did_you_mean(text, flag.choices)
            hint = f" (did you mean {near}?)" if near else ""
            _refuse(
                self.command,
                f'{flag.name} takes {_alternatives(flag.choices)}, not "{clip(text)}"{hint}',
                pointer=not near,
            )
        if flag.number is None:
            return text
        return _number(self.command, flag, text)


def _number(command: Command, flag: Flag, text: str) -> int | Percent:
    digits = text
    percent = flag.number is Number.INT_OR_PERCENT and text.endswith("%")
    if percent:
        digits = text[:-1]
    form = "a whole number" + (
        " or a percentage like 50%" if flag.number is Number.INT_OR_PERCENT else ""
    )
    if not _DECIMAL.fullmatch(digits):
        _refuse(command, f'{flag.name} takes {form} in plain decimal digits, not "{clip(text)}"')
    value = int(digits)
    if value > MAX_NUMBER:
        _refuse(command, f"{flag.name} {clip(text)} is too large: the most is {MAX_NUMBER}")
    if value < flag.minimum:
        _refuse(command, f"{flag.name} must be at least {flag.minimum}, not {text}")
    return Percent(value) if percent else value


def _what(flag: Flag) -> str:
    if flag.choices:
        return _alternatives(flag.choices)
    return f"a value: {flag.name} {flag.metavar} or {flag.name}={flag.metavar}"


def _bare_or_value(flag: Flag) -> str:
    shown = "|".join(flag.choices) if flag.choices else flag.metavar
    return f"write {flag.name} alone, or {flag.name}={shown}"


def _alternatives(choices: Sequence[str]) -> str:
    if len(choices) == 1:
        return choices[0]
    return ", ".join(choices[:-1]) + f" or {choices[-1]}"


def _too_many(command: Command, words: Sequence[str]) -> str:
    shown = clip(" ".join(words), 2 * ECHO_LIMIT)
    if command.most_words == 0:
        return f"vx {command.verb} takes no {command.words}s, got: {shown}"
    if command.most_words == 1:
        return f"vx {command.verb} takes one {command.words}, got {len(words)}: {shown}"
    return f"vx {command.verb} takes at most {command.most_words} {command.words}s, got: {shown}"


def _refuse(command: Command, message: str, *, pointer: bool = True) -> NoReturn:
    raise UserError(ErrorCode.USAGE, message, f"see vx {command.verb} --help" if pointer else None)
