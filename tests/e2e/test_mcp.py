"""`vx mcp` end to end, driven by the official MCP client over stdio: the tools it lists, the
last failure with its secret masked, why a task missed after an edit, what a change affects,
and a run tool only under `--allow-run`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import base_env, make_git_workspace, run_vx, vx_argv

from vx.trace.probe import tracing_available

if TYPE_CHECKING:
    from pathlib import Path

mcp = pytest.importorskip(
    "mcp", reason="the mcp extra is not installed (pip install 'vx-runner[mcp]')"
)
anyio = pytest.importorskip("anyio")

SECRET = "s3cr3t-Value-9f2b"  # noqa: S105  a value no answer may carry
TEST_COMMAND = 'echo "using $API_TOKEN"; echo "src/x.ts:2: boom" >&2; exit 1'
READ_TOOLS = [
    "affected",
    "audit_findings",
    "last_failure",
    "plan",
    "recent_runs",
    "run_summary",
    "task_graph",
    "why_missed",
]


def make(tmp_path: Path) -> Path:
    files: dict[str, object] = {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {
            "tasks": {
                "build": {
                    "exec": "mkdir -p dist && cp src/x.ts dist/x.ts",
                    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
                },
                "test": {
                    "exec": {
                        "command": TEST_COMMAND,
                        "env": {"secret": ["API_TOKEN"]},
                    },
                    "dependsOn": ["build"],
                },
            }
        },
        "packages/a/src/x.ts": "export const x = 1;\nthrow new Error('boom');\n",
        "packages/b/package.json": {"name": "b"},
        "packages/b/vx.config.json": {"tasks": {"build": {"exec": "true"}}},
    }
    ws = tmp_path / "ws"
    ws.mkdir()
    return make_git_workspace(ws, files)


def ask(ws: Path, home: Path, calls: list[tuple[str, dict[str, Any]]], *flags: str) -> Any:
    """Start `vx mcp FLAGS` in ws, list its tools and make each call; (tools, answers)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = [*vx_argv(), "mcp", *flags]
    env = base_env({"HOME": str(home), "API_TOKEN": SECRET})
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(ws))

    async def talk() -> tuple[list[str], list[Any]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            answers = []
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                text = "".join(getattr(c, "text", "") for c in result.content)
                answers.append(text if result.is_error else json.loads(text))
            return sorted(t.name for t in listed.tools), answers

    return anyio.run(talk)


def test_the_tools_answer_from_the_history_and_the_plan(tmp_path: Path) -> None:
    ws = make(tmp_path)
    home = tmp_path / "home"
    run_vx(["run", "build", "--all"], ws, home=home).assert_ok()
    (ws / "packages/a/src/x.ts").write_text("export const x = 2;\nthrow new Error('boom');\n")
    env = {"API_TOKEN": SECRET}
    run_vx(["run", "test", "--all"], ws, env=env, home=home).assert_code(1)
    tools, (runs, failure, why, affected, graph, planned, unknown) = ask(
        ws,
        home,
        [
            ("recent_runs", {}),
            ("last_failure", {}),
            ("why_missed", {"task": "a#build"}),
            ("affected", {"tasks": ["build"], "base": "HEAD"}),
            ("task_graph", {"project": "a"}),
            ("plan", {"tasks": ["build"]}),
            ("why_missed", {"task": "a#nope"}),
        ],
    )
    assert tools == READ_TOOLS
    assert [r["ok"] for r in runs["runs"]] == [False, True]
    (failed,) = failure["failed"]
    assert failed["id"] == "a#test"
    assert "using ***" in failed["output"]
    assert SECRET not in json.dumps(failure)
    assert [f["file"] for f in failed["files"]] == ["packages/a/src/x.ts"]
    assert "throw new Error('boom');" in failed["files"][0]["text"]
    changed = why["diff"]["changed"]
    assert [(c["kind"], c["name"]) for c in changed] == [("file", "packages/a/src/x.ts")]
    assert [t["id"] for t in affected["tasks"]] == ["a#build"]
    assert [(t["id"], t["cacheStatus"]) for t in planned["tasks"]] == [
        ("a#build", "hit-local"),  # the failed run built the edit first
        ("b#build", "no-cache"),
    ]
    assert unknown.startswith("Error executing tool why_missed: "), unknown
    assert "a#nope" in unknown
    assert graph["tasks"] == [
        {"id": "a#build", "command": "mkdir -p dist && cp src/x.ts dist/x.ts", "dependsOn": []},
        {"id": "a#test", "command": TEST_COMMAND, "dependsOn": ["a#build"]},
    ]


def test_a_run_tool_only_with_allow_run(tmp_path: Path) -> None:
    ws = make(tmp_path)
    home = tmp_path / "home"
    tools, (ran,) = ask(ws, home, [("run_tasks", {"tasks": ["build"]})], "--allow-run")
    assert tools == sorted([*READ_TOOLS, "run_tasks"])
    assert ran["exitCode"] == 0
    assert sorted(t["id"] for t in ran["tasks"]) == ["a#build", "b#build"]
    tools, (refused,) = ask(ws, home, [("run_tasks", {"tasks": ["build"]})])
    assert "run_tasks" not in tools
    assert isinstance(refused, str)
    assert "run_tasks" in refused


def test_without_the_sdk_vx_mcp_says_what_to_install(tmp_path: Path) -> None:
    ws = make(tmp_path)
    shadow = tmp_path / "shadow" / "mcp"  # an `mcp` without the 2.x server package
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    env = {"PYTHONPATH": str(shadow.parent)}
    result = run_vx(["mcp"], ws, env=env, home=tmp_path / "home", input_text="")
    assert (result.code, result.out) == (1, ""), result
    assert result.err == (
        "vx mcp needs the MCP Python SDK (2.x), which is not installed — pip install 'vx-runner[mcp]'\n"
    )


@pytest.mark.skipif(not tracing_available().ok, reason=f"no tracer: {tracing_available().reason}")
def test_audit_findings_name_what_an_audited_task_read_undeclared(tmp_path: Path) -> None:
    ws = make(tmp_path)
    (ws / "packages/a/notes.txt").write_text("read but not declared\n")
    config = json.loads((ws / "packages/a/vx.config.json").read_text())
    config["tasks"]["build"]["exec"] = (
        "cat notes.txt >/dev/null && mkdir -p dist && cp src/x.ts dist/"
    )
    (ws / "packages/a/vx.config.json").write_text(json.dumps(config))
    home = tmp_path / "home"
    run_vx(["run", "a#build", "--audit"], ws, home=home).assert_ok()
    _, (found, narrowed, other) = ask(
        ws,
        home,
        [
            ("audit_findings", {}),
            ("audit_findings", {"task": "a#build"}),
            ("audit_findings", {"task": "b#build"}),
        ],
    )
    (audit,) = found["audits"]
    assert audit["id"] == "a#build"
    assert "packages/a/notes.txt" in json.dumps(audit)
    assert narrowed == found
    assert other == {"audits": []}
