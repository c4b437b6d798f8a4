"""An `AuditReport` as JSON: what the history keeps, `vx last --format json` and `--summarize`
print (`schemas/last.json`, `schemas/summary.json` § audit), and `vx audit` reads back."""

from __future__ import annotations

import json
from typing import Any

from vx.events import AuditFinding, AuditReport


def report_doc(report: AuditReport) -> dict[str, Any]:
    """The report as a JSON-ready dict (fields in a fixed order)."""
    return {
        "traced": report.traced,
        "reason": report.reason,
        "findings": [
            {"kind": f.kind, "path": f.path, "field": f.field, "value": f.value, "line": f.line}
            for f in report.findings
        ],
        "suggested": {name: list(entries) for name, entries in report.suggested} or None,
        "uncacheable": report.uncacheable,
    }


def report_json(report: AuditReport) -> str:
    """The report as compact JSON text, for the index."""
    return json.dumps(report_doc(report), separators=(",", ":"))


def report_from_json(text: str) -> AuditReport | None:
    """A report the index kept; None for text this version cannot read."""
    try:
        doc = json.loads(text)
        return AuditReport(
            traced=bool(doc["traced"]),
            reason=doc.get("reason"),
            findings=tuple(
                AuditFinding(f["kind"], f["path"], f.get("field"), f.get("value"), f["line"])
                for f in doc.get("findings") or ()
            ),
            suggested=tuple(
                (str(name), tuple(str(e) for e in entries))
                for name, entries in (doc.get("suggested") or {}).items()
            ),
            uncacheable=doc.get("uncacheable"),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def audit_lines(audit: AuditReport) -> list[str]:
    """The lines a run says about one task's audit (the live output and `vx why`)."""
    if not audit.traced:
        return [f"not traced — {audit.reason}"]
    lines = [f"audit: {f.line}" for f in audit.findings]
    if audit.uncacheable:
        lines.append(f"audit: not cacheable — {audit.uncacheable}")
    elif audit.suggested:
        lines.append("audit: no cache block — `vx audit --suggest` shows the one it needs")
    return lines
