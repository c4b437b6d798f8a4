"""Argument forwarding: where the words after `--` go in a task's (possibly multi-line) command."""

from __future__ import annotations

import shlex

from vx.util.record import Record

_WORD_BREAKS = " \t;&|()<>"


class _Line(Record):
    """What the scanner learnt about one physical line of a command."""

    text: str
    comment_at: int | None
    has_code: bool
    owner: int | None  # for a heredoc body or terminator line: the line that opened it


def append_args(command: str, args: tuple[str, ...]) -> str:
    """Append shell-quoted `args` to the command's last command line.

    Trailing blank lines are dropped first (a multi-line command's closing newline must not run
    the args as a command of their own); an open `#` comment keeps them in front of it; a heredoc's
    body and terminator are not command lines, so the args join the line that opened it.
    """
    if not args:
        return command
    quoted = " ".join(shlex.quote(a) for a in args)
    lines = _scan(command.rstrip("\n").split("\n"))
    while lines and not lines[-1].text.strip():
        lines.pop()
    if not lines:
        return quoted
    target = _target(lines)
    line = lines[target]
    if line.comment_at is None:
        new = f"{line.text.rstrip()} {quoted}"
    else:
        head = line.text[: line.comment_at].rstrip()
        new = f"{head} {quoted} {line.text[line.comment_at :]}"
    texts = [ln.text for ln in lines]
    texts[target] = new
    return "\n".join(texts)


def _target(lines: list[_Line]) -> int:
    """The last line that carries a command; a heredoc line stands for its opener."""
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if line.owner is not None:
            return line.owner
        if line.has_code:
            return i
    return len(lines) - 1


def _scan(raw: list[str]) -> list[_Line]:
    out: list[_Line] = []
    quote: str | None = None
    pending: list[tuple[str, bool, int]] = []  # (delimiter, strip tabs, opener line)
    body: tuple[str, bool, int] | None = None
    for i, text in enumerate(raw):
        if body is not None:
            delim, strip_tabs, opener = body
            out.append(_Line(text, None, has_code=False, owner=opener))
            if (text.lstrip("\t") if strip_tabs else text) == delim:
                body = pending.pop(0) if pending else None
            continue
        started_in_quote = quote is not None
        quote, comment_at, opened = _scan_line(text, quote)
        pending.extend((d, s, i) for d, s in opened)
        code = text[:comment_at] if comment_at is not None else text
        out.append(_Line(text, comment_at, started_in_quote or bool(code.strip()), None))
        if pending and quote is None:
            body = pending.pop(0)
    return out


def _scan_line(
    text: str, quote: str | None
) -> tuple[str | None, int | None, list[tuple[str, bool]]]:
    """Walk one line: the quote state it ends in, where a comment opens, the heredocs it opens."""
    opened: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if quote == "'":
            if ch == "'":
                quote = None
        elif quote == '"':
            if ch == "\\":
                i += 1
            elif ch == '"':
                quote = None
        elif ch == "\\":
            i += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in _WORD_BREAKS):
            return quote, i, opened
        elif text.startswith("<<", i) and not text.startswith("<<<", i):
            i, heredoc = _heredoc_word(text, i + 2)
            if heredoc is not None:
                opened.append(heredoc)
            continue
        i += 1
    return quote, None, opened


def _heredoc_word(text: str, i: int) -> tuple[int, tuple[str, bool] | None]:
    """Read the delimiter after `<<` (or `<<-`), unquoting 'X' / "X" / \\X forms."""
    strip_tabs = text.startswith("-", i)
    if strip_tabs:
        i += 1
    while i < len(text) and text[i] in " \t":
        i += 1
    start = i
    word: list[str] = []
    while i < len(text) and text[i] not in _WORD_BREAKS:
        ch = text[i]
        if ch in "'\"":
            end = text.find(ch, i + 1)
            end = len(text) if end < 0 else end
            word.append(text[i + 1 : end])
            i = end + 1
            continue
        if ch == "\\" and i + 1 < len(text):
            i += 1
            ch = text[i]
        word.append(ch)
        i += 1
    if i == start or not word:
        return i, None
    return i, ("".join(word), strip_tabs)
