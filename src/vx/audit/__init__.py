"""The audit: what a traced task did (`vx.trace`) held against what its config declares.

`check.audit_task` turns a `Trace` into an `AuditReport` of one-line findings, each naming the
config entry that would make it right; `patch` turns the findings the history keeps into edits
of the config files (`vx audit --suggest` / `--apply`).
"""
