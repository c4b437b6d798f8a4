"""UserError(code, message, hint): one line on the terminal, the hint apart in the JSON document."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from vx.errors import ConfigError, ErrorCode, UserError

ERROR = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "error.json").read_text())


@pytest.mark.parametrize(
    ("error", "line", "doc"),
    [
        (
            UserError(ErrorCode.USAGE, "unknown flag: --x", "see vx run --help"),
            "unknown flag: --x — see vx run --help",
            {"code": "VX_E_USAGE", "message": "unknown flag: --x", "hint": "see vx run --help"},
        ),
        (
            UserError(ErrorCode.NO_HISTORY, "no runs recorded yet"),
            "no runs recorded yet",
            {"code": "VX_E_NO_HISTORY", "message": "no runs recorded yet"},
        ),
        (
            UserError(ErrorCode.USAGE, "blank", ""),
            "blank",
            {"code": "VX_E_USAGE", "message": "blank"},
        ),
        (
            ConfigError("vx.config.json", "expected a list", "tasks.build.outputs"),
            "vx.config.json: tasks.build.outputs: expected a list",
            {
                "code": "VX_E_CONFIG",
                "message": "vx.config.json: tasks.build.outputs: expected a list",
            },
        ),
    ],
)
def test_the_line_and_the_document(error: UserError, line: str, doc: dict[str, str]) -> None:
    assert error.message == str(error) == line
    parsed = json.loads(error.document())
    jsonschema.validate(parsed, ERROR)
    assert parsed == {"ok": False, "error": doc}
