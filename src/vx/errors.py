"""The one user-error type vx raises (`UserError(code, message, hint)`), its stable codes, and its
JSON error document."""

from __future__ import annotations

import json
from enum import StrEnum


class ErrorCode(StrEnum):
    """Stable codes a script may branch on; the message text may change, these do not."""

    USAGE = "VX_E_USAGE"
    UNKNOWN_COMMAND = "VX_E_UNKNOWN_COMMAND"
    UNKNOWN_TASK = "VX_E_UNKNOWN_TASK"
    UNKNOWN_PROJECT = "VX_E_UNKNOWN_PROJECT"
    NO_HISTORY = "VX_E_NO_HISTORY"
    AMBIGUOUS = "VX_E_AMBIGUOUS"
    CONFIG = "VX_E_CONFIG"
    CYCLE = "VX_E_CYCLE"
    NO_WORKSPACE = "VX_E_NO_WORKSPACE"
    CACHE_VERSION = "VX_E_CACHE_VERSION"
    REFUSED = "VX_E_REFUSED"
    FS = "VX_E_FS"
    FDS = "VX_E_FDS"
    INTERNAL = "VX_E_INTERNAL"


class UserError(Exception):
    """A refusal the user can act on: printed as one line, exit 1, never a stack.

    `hint` says what to do about it. The terminal shows `message — hint` as one line
    (`.message`); the JSON error document carries the two apart, so a script can show the
    hint on its own. Older call sites still write `… — what to do` into the message itself.
    """

    def __init__(self, code: ErrorCode, message: str, hint: str | None = None) -> None:
        line = f"{message} — {hint}" if hint else message
        super().__init__(line)
        self.code = code
        self.message = line
        """The one line the terminal prints: the refusal, then the hint."""
        self.reason = message
        self.hint = hint or None

    def document(self) -> str:
        """The `{"ok":false,"error":{...}}` line a JSON-speaking verb prints on stdout."""
        return error_document(self.code, self.reason, self.hint)


class ConfigError(UserError):
    """A config file that does not load or is refused; names the file and the field path."""

    def __init__(self, path: str, message: str, pointer: str = "") -> None:
        where = f"{path}: {pointer}: " if pointer else f"{path}: "
        super().__init__(ErrorCode.CONFIG, where + message)
        self.path = path
        self.pointer = pointer
        self.detail = message


class CycleError(UserError):
    """The task graph has a cycle; carries every task on it, in order.

    `causes` are (kind, text) per edge, kind `dependsOn` or `manifest`, when the builder could
    name what made each edge; the advice then speaks of the entries the user has to edit.
    """

    def __init__(self, cycle: tuple[str, ...], causes: tuple[tuple[str, str], ...] = ()) -> None:
        path = " → ".join((*cycle, cycle[0]))
        kinds = {kind for kind, _ in causes}
        if not causes or kinds == {"dependsOn"}:
            advice = "remove one of these dependsOn edges"
        elif kinds == {"manifest"}:
            advice = (
                "remove one of these manifest entries (an entry only tests need gives way when "
                "it sits in devDependencies, peerDependencies or a [dependency-groups] group)"
            )
        else:
            advice = "remove one of these entries"
        made = "".join(f"{text}; " for _, text in causes)
        super().__init__(ErrorCode.CYCLE, f"task graph has a cycle: {path} — {made}{advice}")
        self.cycle = cycle


def error_document(code: ErrorCode, message: str, hint: str | None = None) -> str:
    """One JSON line; `schemas/error.json` describes it. `hint` only when there is one."""
    error = {"code": str(code), "message": message}
    if hint:
        error["hint"] = hint
    return json.dumps({"ok": False, "error": error}, ensure_ascii=False)
