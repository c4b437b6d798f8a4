"""`vx` after the version check: argv → verb, and the one place errors become exit codes.

It imports only the standard library, `vx.errors` and the verb table; a verb's module loads
when that verb runs, so `vx --version` never pays for the engine.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vx.cli import verbs
from vx.cli.entry import silence_stdout
from vx.errors import ErrorCode, UserError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from vx.cli.settings import Streams

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130

_NOT_WRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
_NO_FDS = frozenset({errno.EMFILE, errno.ENFILE})
_META_FLAGS = ("--help", "--version")
# What vx imports beyond the standard library. A pip install brings them; `python3 vx.py` and
# vx.pyz run in whatever interpreter starts them, which may lack them.
_RUNTIME_DEPS = ("xxhash", "zstandard", "watchdog")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `vx` invocation and return its exit code; never raises."""
    from vx.cli.settings import Streams

    args = list(sys.argv[1:] if argv is None else argv)
    streams = Streams(sys.stdout, sys.stderr)
    json_wanted = wants_json(args)
    try:
        code = dispatch(args, env=os.environ, cwd=Path.cwd(), streams=streams)
        streams.out.flush()
    except UserError as e:
        return _refuse(streams, e, json_wanted=json_wanted)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_OK
    except OSError as e:
        refusal = _os_refusal(e)
        if refusal is None:
            return _defect(streams, e, json_wanted=json_wanted)
        return _refuse(streams, refusal, json_wanted=json_wanted)
    except ModuleNotFoundError as e:
        missing = _missing_dependency(e)
        if missing is None:
            return _defect(streams, e, json_wanted=json_wanted)
        return _refuse(streams, UserError(ErrorCode.REFUSED, missing), json_wanted=json_wanted)
    except Exception as e:  # noqa: BLE001 - the boundary: every defect ends here, as a stack
        return _defect(streams, e, json_wanted=json_wanted)
    return code


def dispatch(args: Sequence[str], *, env: Mapping[str, str], cwd: Path, streams: Streams) -> int:
    """Pick the verb argv names and run it; a non-verb first word is refused with a hint."""
    if not args:
        _require_workspace(cwd)
        return run_verb("help", (), env=env, cwd=cwd, streams=streams)
    first, rest = args[0], args[1:]
    if first == "--version":
        if rest:
            raise UserError(
                ErrorCode.USAGE, f"vx --version takes nothing after it, got: {' '.join(rest)}"
            )
        return run_verb("version", (), env=env, cwd=cwd, streams=streams)
    if first in ("--help", "-h"):
        return run_verb("help", rest, env=env, cwd=cwd, streams=streams)
    if first.startswith("-") and first != "-":
        from vx.cli.parser import unknown_flag

        name = first.partition("=")[0]
        if name in ("-V", "-v"):
            message = f"unknown flag: {name} (did you mean --version?)"
        else:
            message = unknown_flag(name, _META_FLAGS)
            if "did you mean" not in message:
                raise UserError(
                    ErrorCode.USAGE, message, "flags go after the verb (vx help lists the verbs)"
                )
        raise UserError(ErrorCode.USAGE, message)
    if verbs.find(first) is None:
        from vx.cli.plugincmd import declared_verbs, plugin_verbs, run_plugin_verb
        from vx.cli.unknown import refuse_unknown

        found = plugin_verbs(cwd) if not first.startswith("-") else None
        if found is not None:
            code = run_plugin_verb(first, rest, env=env, cwd=cwd, streams=streams, found=found)
            if code is not None:
                return code
        refuse_unknown(first, rest, cwd=cwd, plugin_verbs=declared_verbs(found))
    return run_verb(first, rest, env=env, cwd=cwd, streams=streams)


def run_verb(
    name: str, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, streams: Streams
) -> int:
    """Parse, resolve and execute one verb; `--help` anywhere before `--` shows its page."""
    from vx.cli.parser import parse

    verb = verbs.find(name)
    if verb is None:
        raise ValueError(f"run_verb called for a verb the table lacks: {name}")
    module: Any = importlib.import_module(verb.module)
    parsed = parse(module.COMMAND, args)
    if parsed.help:
        return run_verb("help", (name,), env=env, cwd=cwd, streams=streams)
    settings = module.resolve(parsed, env, cwd)
    code: int = module.execute(settings, streams)
    return code


def wants_json(args: Sequence[str]) -> bool:
    """The invocation asked for JSON before any `--`, so a refusal is a JSON document too."""
    own = args[: list(args).index("--")] if "--" in args else args
    for i, arg in enumerate(own):
        if arg in ("--format=json", "--dry=json"):
            return True
        if arg == "--format" and i + 1 < len(own) and own[i + 1] == "json":
            return True
    return False


def _require_workspace(cwd: Path) -> None:
    """A bare `vx` shows the help inside a workspace and says where it is not, outside one."""
    from vx.workspace.discover import find_root

    try:
        find_root(cwd)
    except UserError as e:
        if e.code is not ErrorCode.NO_WORKSPACE:
            raise
        raise UserError(
            ErrorCode.NO_WORKSPACE,
            f"not in a workspace: no package.json, pnpm-workspace.yaml or pyproject.toml at or "
            f"above {cwd}",
            "vx help prints the help anywhere",
        ) from None


def _refuse(streams: Streams, error: UserError, *, json_wanted: bool) -> int:
    try:
        if json_wanted:
            streams.out.write(error.document() + "\n")
            streams.out.flush()
        streams.err.write(error.message + "\n")
        streams.err.flush()
    except BrokenPipeError:
        silence_stdout()
    return EXIT_ERROR


def _defect(streams: Streams, error: BaseException, *, json_wanted: bool) -> int:
    try:
        import traceback  # only a defect pays for it

        streams.err.write("".join(traceback.format_exception(error)))
    except BrokenPipeError:
        silence_stdout()
    message = (
        f"{ErrorCode.INTERNAL}: vx hit a defect ({type(error).__name__}: {error}); "
        "please report it with the stack above"
    )
    return _refuse(streams, UserError(ErrorCode.INTERNAL, message), json_wanted=json_wanted)


def _missing_dependency(error: ModuleNotFoundError) -> str | None:
    """One line naming what to install when a runtime dependency is missing; None otherwise."""
    name = (error.name or "").partition(".")[0]
    if name not in _RUNTIME_DEPS:
        return None
    return (
        f"vx needs {name}, which is not installed for {sys.executable} — install vx's "
        f"dependencies there: {Path(sys.executable).name or 'python3'} -m pip install "
        f"{' '.join(_RUNTIME_DEPS)} (or install vx itself: python3 -m pip install vx-runner)"
    )


def _os_refusal(error: OSError) -> UserError | None:
    """A file-system refusal a user can fix, as one; None for an OSError that is a defect."""
    if error.errno not in _NOT_WRITABLE | _DISK_FULL | _NO_FDS:
        return None
    name = errno.errorcode.get(error.errno or 0, "E?")
    where = f", '{error.filename}'" if error.filename else ""
    what = f"{name}: {(error.strerror or '').lower()}{where}"
    if error.errno in _NO_FDS:
        hint = "the process is out of file descriptors; raise the limit (ulimit -n 4096) and re-run"
        return UserError(ErrorCode.FDS, what, hint)
    if error.errno in _DISK_FULL:
        return UserError(ErrorCode.FS, what, "the disk that path is on is full")
    return UserError(ErrorCode.FS, what, "a path vx must write is not writable by this user")
