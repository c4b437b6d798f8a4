"""A reader for the block YAML package managers write (pnpm-lock.yaml, Yarn Berry's yarn.lock).

Those files are machine-written with a fixed shape: block mappings indented by two spaces,
keys plain or quoted, scalars on one line, flow collections (`{integrity: …}`, `[darwin]`)
for small values. This reader handles exactly that: nested dicts of strings, flow values kept
as their text (`flow_map` splits a flat one), block sequences as lists of strings. It also
returns each top-level section's raw text, so the parts vx does not interpret (settings,
overrides, patches) can be digested as written. A general YAML library would be a runtime
dependency and several times slower on a 30 000-line lockfile.
"""

from __future__ import annotations

from typing import Any

from vx.lockfiles.model import LockfileError

Tree = dict[str, Any]


def parse(text: str, shown: str) -> tuple[Tree, dict[str, str]]:
    """The document as nested dicts, and each top-level key's section as written."""
    root: Tree = {}
    # (indent, container, owner, key): owner[key] is container, so an empty mapping that turns
    # out to hold a block sequence can be swapped for a list.
    stack: list[tuple[int, Any, Any, str]] = [(-1, root, None, "")]
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        body = raw.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        indent = len(raw) - len(body)
        if indent == 0 and not body.startswith("- "):
            current = sections.setdefault(_key_of(body, shown, i), [])
        if current is not None:
            current.append(raw)
        while stack[-1][0] >= indent:
            stack.pop()
        _, container, owner, okey = stack[-1]
        if body.startswith("- ") or body == "-":
            if isinstance(container, dict) and not container and owner is not None:
                container = []
                owner[okey] = container
                stack[-1] = (stack[-1][0], container, owner, okey)
            if isinstance(container, list):
                container.append(_scalar(body[2:].strip()))
            continue
        if not isinstance(container, dict):
            raise LockfileError(f"{shown}:{i}: a mapping key inside a list")
        key, rest = split_key(body, shown, i)
        if rest and rest[0] in "{[" and not _balanced(rest):
            while i < len(lines) and not _balanced(rest):
                rest += " " + lines[i].strip()
                if current is not None:
                    current.append(lines[i])
                i += 1
        if rest:
            container[key] = _scalar(rest)
        else:
            child: Tree = {}
            container[key] = child
            stack.append((indent, child, container, key))
    return root, {k: "\n".join(v) for k, v in sections.items()}


def _key_of(body: str, shown: str, line: int) -> str:
    return split_key(body, shown, line)[0]


def split_key(body: str, shown: str, line: int) -> tuple[str, str]:
    """`key: rest` → (key, rest); a quoted key may hold `: ` and quotes of its own."""
    if body[0] in "'\"":
        end = _quote_end(body, 0)
        if end < 0 or body[end + 1 : end + 2] != ":":
            raise LockfileError(f"{shown}:{line}: an unterminated quoted key")
        return _unquote(body[: end + 1]), body[end + 2 :].strip()
    at = body.find(": ")
    if at >= 0:
        return body[:at], body[at + 2 :].strip()
    if body.endswith(":"):
        return body[:-1], ""
    raise LockfileError(f"{shown}:{line}: expected `key: value`")


def _quote_end(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and text[i + 1 : i + 2] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return text


def _scalar(text: str) -> str:
    return _unquote(text) if text[:1] in "'\"" else text


def _balanced(text: str) -> bool:
    depth = 0
    quote = ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth <= 0


def flow_map(text: str) -> dict[str, str]:
    """A flat flow mapping's entries: `{integrity: sha512-…, tarball: https://…}`."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return {}
    out: dict[str, str] = {}
    for part in inner[1:-1].split(", "):
        key, sep, value = part.partition(": ")
        if sep:
            out[_scalar(key.strip())] = _scalar(value.strip())
    return out
