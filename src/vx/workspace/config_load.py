"""Finding and reading `vx.config.*` and `vx.workspace.*`: JSON with comments, TOML, programs."""

from __future__ import annotations

import builtins
import json
import os
import re
import sys
import threading
import types
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vx.errors import ConfigError
from vx.workspace.config_fields import Site, quote
from vx.workspace.config_root import parse_workspace_config
from vx.workspace.config_schema import parse_project_config
from vx.workspace.model import WorkspaceConfig

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import TracebackType

    from vx.workspace.model import ProjectConfig

Kind = Literal["project", "workspace"]

if TYPE_CHECKING:
    ParsedConfigs = dict[tuple[str, str, int], ProjectConfig]
    """Validated project configs by (suffix, text, id of the workspace tasks merged in)."""

PROJECT_STEM = "vx.config"
WORKSPACE_STEM = "vx.workspace"
SUFFIXES = (".json", ".toml", ".py")

_JSONC = re.compile(
    r"""
      (?P<string> "(?:[^"\\\n]|\\.)*" )
    | (?P<line> //[^\n]* )
    | (?P<block> /\*.*?\*/ )
    | (?P<open> /\* )
    | (?P<comma> ,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]]) )
    """,
    re.DOTALL | re.VERBOSE,
)
_TOO_DEEP = "nests lists or objects too deeply to read: a config needs only a few levels"
_TOO_LONG = "holds a number too long to read (over 4300 digits): write a smaller one"
_TOML_AT = re.compile(
    r"(?P<msg>.*) \(at (?:line (?P<line>\d+), column (?P<col>\d+)|end of document)\)", re.DOTALL
)

# A `.py` config runs with its directory on sys.path; two configs at once would see each other's.
_EXEC_LOCK = threading.RLock()
_NONE_SHARED: Mapping[str, object] = types.MappingProxyType({})
_DEFINED: ContextVar[list[tuple[str, dict[str, Any]]] | None] = ContextVar(
    "vx_config_definitions", default=None
)


def find_config(directory: Path, stem: str, *, root: Path | None = None) -> Path | None:
    """The one `<stem>.json|.toml|.py` in `directory`; two spellings side by side are refused."""
    base = os.fspath(directory)
    # os.path on strings: this runs for every project of every run, and pathlib's objects
    # cost more than the three stats themselves.
    found = [
        Path(name)
        for suffix in SUFFIXES
        if os.path.isfile(name := os.path.join(base, stem + suffix))  # noqa: PTH113, PTH118
    ]
    if len(found) > 1:
        first, *others = (display_path(path, root) for path in found)
        verb = "is" if len(others) == 1 else "are"
        raise ConfigError(
            first, f"{' and '.join(others)} {verb} here too: keep one config file per directory"
        )
    return found[0] if found else None


def load_project_config(
    directory: Path,
    *,
    root: Path,
    raw_values: list[tuple[str, object]] | None = None,
    shared: Mapping[str, object] = _NONE_SHARED,
    parsed: ParsedConfigs | None = None,
) -> ProjectConfig | None:
    """The project's validated `vx.config.*`, or None when the directory has none.

    `raw_values` gets (shown path, the value the file evaluated to) appended: `vx lock`
    freezes that value. `shared` is the workspace-wide tasks its own merge over. `parsed`,
    kept by the caller across one workspace load, lets a JSON or TOML config whose text an
    earlier one had be taken from it instead of validated again (templated packages).
    """
    path = find_config(directory, PROJECT_STEM, root=root)
    if path is None:
        return None
    shown = display_path(path, root)
    if parsed is not None and raw_values is None and path.suffix != ".py":
        return _parsed_once(path, shown, shared, parsed)
    imported: list[str] = []
    raw = read_config(path, shown, "project", imported)
    config = parse_project_config(raw, shown, shared=shared)
    if raw_values is not None:
        raw_values.append((shown, raw))
    return config._replace(imports=_under(imported, root)) if imported else config


def load_workspace_config(root: Path) -> WorkspaceConfig:
    """The root's validated `vx.workspace.*`; every default when there is none."""
    path = find_config(root, WORKSPACE_STEM, root=root)
    if path is None:
        return WorkspaceConfig()
    shown = display_path(path, root)
    imported: list[str] = []
    config = parse_workspace_config(read_config(path, shown, "workspace", imported), shown)
    return config._replace(imports=_under(imported, root)) if imported else config


def _under(files: list[str], root: Path) -> tuple[str, ...]:
    """The root-relative POSIX paths of `files` that lie under the root (no venv's, no stdlib's)."""
    real_root = os.path.realpath(root)
    kept = {
        os.path.relpath(real, real_root).replace(os.sep, "/")
        for f in files
        if (real := os.path.realpath(f)).startswith(real_root + os.sep)
    }
    return tuple(sorted(kept))


def display_path(path: Path, root: Path | None) -> str:
    """`path` relative to the root, POSIX-style, when it lies under it; else as given.

    Paths are made absolute without resolving symlinks: a member reached through a link is
    shown by the link's path, as the workspace lists it.
    """
    if root is not None:
        absolute = os.path.abspath(path)  # noqa: PTH100 -- resolve() would follow links
        base = os.path.abspath(root)  # noqa: PTH100
        if absolute == base:
            return "."
        inside = base.rstrip(os.sep) + os.sep
        if absolute.startswith(inside):
            return absolute[len(inside) :].replace(os.sep, "/")
    return str(path)


def _parsed_once(
    path: Path, shown: str, shared: Mapping[str, object], parsed: ParsedConfigs
) -> ProjectConfig:
    """A data config validated once per distinct text in `parsed`: the model depends on
    nothing else but the file it names, and a refusal (never kept) still names its own file."""
    text = _text(path, shown)
    key = (path.suffix, text, id(shared))
    known = parsed.get(key)
    if known is not None:
        return known._replace(path=shown)
    config = parse_project_config(_data(path, text, shown), shown, shared=shared)
    parsed[key] = config
    return config


def read_config(path: Path, shown: str, kind: Kind, imported: list[str] | None = None) -> object:
    """The file's raw value, before validation; `shown` is the path messages print.

    A `.py` config's imported source files are appended to `imported`: `--affected` selects
    the project when one of them changes, as the config's hash would move.
    """
    if path.suffix == ".py":
        return _run_program(path, shown, kind, imported)
    return _data(path, _text(path, shown), shown)


def _text(path: Path, shown: str) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")  # one decode, no text layer per file
    except UnicodeDecodeError:
        raise ConfigError(shown, "is not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(shown, f"cannot be read: {exc.strerror or exc}") from None


def _data(path: Path, text: str, shown: str) -> object:
    """A JSON-with-comments or TOML config's value."""
    if path.suffix == ".toml":
        return parse_toml(text, shown)
    return parse_jsonc(text, shown)


def parse_jsonc(text: str, shown: str) -> object:
    """JSON with `//` and `/* */` comments and trailing commas, as tsconfig.json allows.

    Comments and dropped commas become spaces, so a syntax error's line and column still
    point into the file as written.
    """

    def blank(match: re.Match[str]) -> str:
        kind = match.lastgroup
        if kind == "string":
            return match.group()
        if kind == "open":
            line, col = _position(text, match.start())
            raise ConfigError(shown, f"invalid JSON at line {line}, column {col}: unclosed /*")
        return re.sub(r"[^\n]", " ", match.group())

    repeated: list[tuple[dict[str, object], str]] = []
    hook = _pairs_hook(repeated)
    try:
        value = _decode(text, shown, hook)  # plain JSON, the common case: no scan for comments
    except json.JSONDecodeError:
        repeated.clear()  # what the failed attempt noted is not in the value read next
        try:
            value = _decode(_JSONC.sub(blank, text), shown, hook)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno}, column {exc.colno}"
            raise ConfigError(shown, f"invalid JSON at {where}: {exc.msg}") from None
    if repeated:
        _refuse_repeated(value, repeated, shown)
    return value


def _decode(text: str, shown: str, hook: Callable[[list[tuple[str, object]]], object]) -> object:
    """`json.loads`; what it raises besides a syntax error becomes a refusal too."""
    try:
        return json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ConfigError(shown, _TOO_DEEP) from None
    except ValueError:  # int() refusing a numeral of thousands of digits
        raise ConfigError(shown, _TOO_LONG) from None


def _pairs_hook(
    repeated: list[tuple[dict[str, object], str]],
) -> Callable[[list[tuple[str, object]]], dict[str, object]]:
    """An `object_pairs_hook` noting each object that names a key twice, and the key.

    JSON itself keeps the last value and says nothing; in a config that hides an edit (two
    `"exec"`s, and the one you read is not the one that runs).
    """

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        doc = dict(items)
        if len(doc) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    repeated.append((doc, key))
                    break
                seen.add(key)
        return doc

    return pairs


def _refuse_repeated(
    value: object, repeated: list[tuple[dict[str, object], str]], shown: str
) -> None:
    """Refuse the first object, in file order, that names a key twice, by its field path."""
    keys = {id(doc): key for doc, key in repeated}
    todo: list[tuple[object, Site]] = [(value, Site(shown))]
    while todo:
        item, site = todo.pop()
        if isinstance(item, dict):
            key = keys.get(id(item))
            if key is not None:
                site.fail(f"{quote(key)} appears twice: JSON would keep only the last — keep one")
            todo.extend((v, site.key(k)) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            todo.extend((v, site.index(i)) for i, v in reversed(list(enumerate(item))))


def parse_toml(text: str, shown: str) -> object:
    """TOML through tomllib, its error rephrased to name the line and column first."""
    import tomllib  # an npm workspace's warm run never needs it

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ConfigError(shown, _TOO_DEEP) from None
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.fullmatch(str(exc))
        if found is None:
            raise ConfigError(shown, f"invalid TOML: {exc}") from None
        where = (
            f"line {found['line']}, column {found['col']}"
            if found["line"]
            else "the end of the file"
        )
        raise ConfigError(shown, f"invalid TOML at {where}: {found['msg']}") from None
    except ValueError:  # int() refusing a numeral of thousands of digits
        raise ConfigError(shown, _TOO_LONG) from None


def record_definition(kind: str, value: dict[str, Any]) -> None:
    """Note a `vx.define_project`/`define_workspace` result for the `.py` config being run."""
    seen = _DEFINED.get()
    if seen is not None:
        seen.append((kind, value))


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _run_program(path: Path, shown: str, kind: Kind, imported: list[str] | None) -> object:
    """Run a `.py` config in its own namespace; its `config`, else its last define_* result."""
    filename = str(path.absolute())
    try:
        code = compile(path.read_bytes(), filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise ConfigError(shown, f"{where}SyntaxError: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ConfigError(shown, "is too large or nested too deeply to compile") from None
    except ValueError as exc:
        raise ConfigError(shown, f"ValueError: {exc}") from None
    except OSError as exc:
        raise ConfigError(shown, f"cannot be read: {exc.strerror or exc}") from None
    namespace: dict[str, Any] = {
        "__name__": "__vx_config__",
        "__file__": filename,
        "__builtins__": builtins,
    }
    seen: list[tuple[str, dict[str, Any]]] = []
    directory = path.parent.absolute()
    from vx.workspace.config_reads import recording

    with _EXEC_LOCK, recording():
        known_paths = [Path(p or ".").absolute() for p in sys.path]
        known_modules = set(sys.modules)
        token = _DEFINED.set(seen)
        sys.path.insert(0, str(directory))
        try:
            exec(code, namespace)  # noqa: S102 -- a .py config is a program the user wrote to be run
        except (Exception, SystemExit) as exc:  # noqa: BLE001 -- whatever it raises is the user's
            raise ConfigError(shown, _describe(exc, filename)) from None
        finally:
            _DEFINED.reset(token)
            if str(directory) in sys.path:
                sys.path.remove(str(directory))
            _forget_modules(set(sys.modules) - known_modules, directory, known_paths)
    if imported is not None:
        imported.extend(_sources(namespace, filename))
    if "config" in namespace:
        return namespace["config"]
    for recorded_kind, value in reversed(seen):
        if recorded_kind == kind:
            return value
    raise ConfigError(
        shown, f'defines no config: assign a dict to "config" or call vx.define_{kind}(...)'
    )


def _sources(namespace: Mapping[str, Any], filename: str) -> list[str]:
    """The source files of the modules a config's namespace holds, and of what they import in
    turn: a module bound by `import x`, or the module a `from x import f` value came from.

    Read from the live namespace, so a helper an earlier config already imported still counts.
    """
    found: dict[str, None] = {}
    seen: set[int] = set()
    todo = [namespace]
    while todo:
        space = todo.pop()
        for value in list(space.values()):
            module = value if isinstance(value, types.ModuleType) else None
            if module is None:
                name = getattr(value, "__module__", None)
                module = sys.modules.get(name) if isinstance(name, str) else None
            source = getattr(module, "__file__", None)
            if module is None or id(module) in seen or not isinstance(source, str):
                continue
            if _library(module.__name__, source):
                continue
            seen.add(id(module))
            if source != filename and source.endswith(".py"):
                found[source] = None
                todo.append(vars(module))
    return list(found)


def _library(name: str, source: str) -> bool:
    """A module no workspace file can be: the stdlib, an installed package, vx itself."""
    top = name.partition(".")[0]
    if top in sys.stdlib_module_names or top == "vx" or "site-packages" in source:
        return True
    return source.startswith((sys.base_prefix + os.sep, sys.prefix + os.sep))


def _describe(exc: BaseException, filename: str) -> str:
    """`line N: Type: message` on one line, N being the config's own line that led to it."""
    line = _config_line(exc.__traceback__, filename)
    text = " ".join(part.strip() for part in str(exc).splitlines() if part.strip())
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return f"line {line}: {what}" if line else what


def _config_line(tb: TracebackType | None, filename: str) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _forget_modules(names: set[str], directory: Path, known_paths: list[Path]) -> None:
    """Drop the modules a config imported from its own directory.

    Another project's config may have a helper of the same name, and must get its own; a
    module found through a sys.path entry inside the directory (a venv, a src/) stays cached.
    """
    for name in names:
        origin = getattr(sys.modules.get(name), "__file__", None)
        if not origin:
            continue
        where = Path(origin).absolute()
        inner = (p for p in known_paths if p != directory and p.is_relative_to(directory))
        if where.is_relative_to(directory) and not any(where.is_relative_to(p) for p in inner):
            del sys.modules[name]
