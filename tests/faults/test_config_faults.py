"""A generated corpus of malformed configs through `vx run` and `vx show`: never a stack.

Every field of a task gets values of the wrong type; the files get broken, empty, doubled,
nested absurdly deep, encoded wrongly, and hold huge or non-finite numbers, duplicate keys,
hostile globs and enormous names. A variant that must be refused exits 1 with one line on
stderr (short, even when the bad value is long); one vx may take (comments, a BOM, a glob that
is only odd) may run, but no variant ever prints a Python stack.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.conftest import run_vx
from tests.e2e.runws import tree

pytestmark = pytest.mark.faults

EITHER, BAD, RUN_ONLY = 0, 1, 2
"""May run / must be refused / must be refused by `vx run` (the graph; `vx show` lists tasks
without resolving their dependencies, so it may take the file)."""
CONFIG = "packages/a/vx.config.json"
MAX_LINE = 1000  # a refusal echoes a long value only in part

FIELD_TYPES: dict[tuple[str, ...], str] = {
    ("tags",): "strings",
    ("tasks",): "object",
    ("tasks", "build"): "task",
    ("tasks", "build", "description"): "string",
    ("tasks", "build", "dependsOn"): "strings",
    ("tasks", "build", "exec"): "exec",
    ("tasks", "build", "exec", "command"): "string",
    ("tasks", "build", "exec", "env"): "object",
    ("tasks", "build", "exec", "env", "passThrough"): "strings",
    ("tasks", "build", "exec", "env", "define"): "object",
    ("tasks", "build", "exec", "env", "secret"): "strings",
    ("tasks", "build", "exec", "timeout"): "count",
    ("tasks", "build", "exec", "retries"): "count",
    ("tasks", "build", "exec", "persistent"): "bool",
    ("tasks", "build", "exec", "readyWhen"): "string",
    ("tasks", "build", "exec", "interactive"): "bool",
    ("tasks", "build", "cache"): "object",
    ("tasks", "build", "cache", "inputs"): "object",
    ("tasks", "build", "cache", "inputs", "files"): "strings",
    ("tasks", "build", "cache", "inputs", "workspaceFiles"): "strings",
    ("tasks", "build", "cache", "inputs", "env"): "strings",
    ("tasks", "build", "cache", "inputs", "tasks"): "strings",
    ("tasks", "build", "cache", "inputs", "runtime"): "strings",
    ("tasks", "build", "cache", "outputs"): "object",
    ("tasks", "build", "cache", "outputs", "files"): "strings",
    ("tasks", "build", "cache", "outputs", "workspaceFiles"): "strings",
}
WRONG: dict[str, list[Any]] = {
    "strings": [[7]],
    "object": ["text", [1]],
    "task": [7],
    "string": [7],
    "exec": [True],
    "count": ["5", 1.5, -1, 1e30, 12345678901234567890123456789],
    "bool": ["yes"],
}


def base() -> dict[str, Any]:
    return {"tasks": {"build": {"exec": {"command": "echo ok"}, "cache": {}}}}


def with_value(path: tuple[str, ...], value: Any) -> bytes:
    doc = base()
    at: dict[str, Any] = doc
    for key in path[:-1]:
        at = at.setdefault(key, {})
        if not isinstance(at, dict):
            break
    at[path[-1]] = value
    return json.dumps(doc).encode()


def task_json(**fields: Any) -> bytes:
    return json.dumps({"tasks": {"build": {"exec": "echo ok", **fields}}}).encode()


def glob_json(where: str, glob: str) -> bytes:
    kind, field = where.split(".")
    return json.dumps(
        {"tasks": {"build": {"exec": "echo ok", "cache": {kind: {field: [glob]}}}}}
    ).encode()


def corpus() -> dict[str, tuple[str, bytes, int]]:
    """name → (file, its bytes, whether vx must refuse it)."""
    out: dict[str, tuple[str, bytes, int]] = {}
    for path, kind in FIELD_TYPES.items():
        for i, value in enumerate(WRONG[kind]):
            out[f"wrong-{'.'.join(path)}-{i}"] = (CONFIG, with_value(path, value), BAD)
    good = json.dumps(base()).encode()
    deep = 100_000
    out |= {
        "empty-file": (CONFIG, b"", BAD),
        "only-whitespace": (CONFIG, b" \n\t\n", BAD),
        "null-document": (CONFIG, b"null", BAD),
        "list-document": (CONFIG, b"[]", BAD),
        "number-document": (CONFIG, b"42", BAD),
        "string-document": (CONFIG, b'"tasks"', BAD),
        "truncated": (CONFIG, good[: len(good) // 2], BAD),
        "bom": (CONFIG, b"\xef\xbb\xbf" + good, EITHER),
        "utf16-bom": (CONFIG, good.decode().encode("utf-16"), BAD),
        "comments-and-commas": (
            CONFIG,
            b'// c\n{ /* b */ "tasks": { "build": { "exec": "echo ok", }, }, }\n',
            EITHER,
        ),
        "unclosed-comment": (CONFIG, b'{ /* "tasks": {} }', BAD),
        "invalid-utf8": (CONFIG, b'{"tasks": {"build": {"exec": "echo \xff\xfe ok"}}}', BAD),
        "nul-in-command": (CONFIG, task_json(exec="echo a\u0000b"), EITHER),
        "duplicate-top-key": (CONFIG, b'{"tasks": {}, "tasks": {"build": {"exec": "x"}}}', BAD),
        "duplicate-task": (
            CONFIG,
            b'{"tasks": {"build": {"exec": "a"}, "build": {"exec": "b"}}}',
            BAD,
        ),
        "duplicate-field": (CONFIG, b'{"tasks": {"build": {"exec": "a", "exec": "b"}}}', BAD),
        "deep-lists": (CONFIG, b'{"tags": ' + b"[" * deep + b"]" * deep + b"}", BAD),
        "deep-objects": (CONFIG, b'{"tags": ' + b'{"a":' * deep + b"1" + b"}" * deep + b"}", BAD),
        "deep-unclosed": (CONFIG, b"[" * deep, BAD),
        "deep-in-description": (
            CONFIG,
            task_json(description=json.loads("[" * 500 + "]" * 500)),
            BAD,
        ),
        "timeout-1e30": (CONFIG, task_json(exec={"command": "x", "timeout": 1e30}), BAD),
        "timeout-1e309": (
            CONFIG,
            b'{"tasks": {"build": {"exec": {"command": "x", "timeout": 1e309}}}}',
            BAD,
        ),
        "timeout-NaN": (
            CONFIG,
            b'{"tasks": {"build": {"exec": {"command": "x", "timeout": NaN}}}}',
            BAD,
        ),
        "timeout-Infinity": (
            CONFIG,
            b'{"tasks": {"build": {"exec": {"command": "x", "timeout": Infinity}}}}',
            BAD,
        ),
        "retries-minus-Infinity": (
            CONFIG,
            b'{"tasks": {"build": {"exec": {"command": "x", "retries": -Infinity}}}}',
            BAD,
        ),
        "timeout-5000-digits": (
            CONFIG,
            b'{"tasks": {"build": {"exec": {"command": "x", "timeout": ' + b"9" * 5000 + b"}}}}",
            BAD,
        ),
        "timeout-zero": (CONFIG, task_json(exec={"command": "x", "timeout": 0}), BAD),
        "unknown-field": (CONFIG, task_json(comand="echo"), BAD),
        "unknown-exec-field": (CONFIG, task_json(exec={"comand": "echo"}), BAD),
        "empty-task-name": (CONFIG, b'{"tasks": {"": {"exec": "x"}}}', BAD),
        "hash-task-name": (CONFIG, b'{"tasks": {"a#b": {"exec": "x"}}}', BAD),
        "caret-task-name": (CONFIG, b'{"tasks": {"^b": {"exec": "x"}}}', BAD),
        "space-task-name": (CONFIG, b'{"tasks": {"a b": {"exec": "x"}}}', BAD),
        "enormous-bad-task-name": (
            CONFIG,
            json.dumps({"tasks": {"n" * 10_000 + " x": {"exec": "x"}}}).encode(),
            BAD,
        ),
        "enormous-unknown-field": (CONFIG, task_json(**{"f" * 10_000: 1}), BAD),
        "enormous-dependency": (CONFIG, task_json(dependsOn=["d" * 10_000]), RUN_ONLY),
        "unknown-dependency": (CONFIG, task_json(dependsOn=["biuld"]), RUN_ONLY),
        "self-dependency": (CONFIG, task_json(dependsOn=["build"]), RUN_ONLY),
        "bad-readyWhen-regex": (CONFIG, task_json(exec={"command": "x", "readyWhen": "(("}), BAD),
        "outputs-dot-dot": (CONFIG, glob_json("outputs.files", "../lib/**"), BAD),
        "outputs-dot-dot-deep": (CONFIG, glob_json("outputs.files", "../../**"), BAD),
        "outputs-dot-dot-inside": (CONFIG, glob_json("outputs.files", "dist/../../x/**"), BAD),
        "outputs-ws-dot-dot": (CONFIG, glob_json("outputs.workspaceFiles", "../*.txt"), BAD),
        "outputs-absolute": (CONFIG, glob_json("outputs.files", "/etc/**"), BAD),
        "inputs-dot-dot": (CONFIG, glob_json("inputs.files", "../../../**"), EITHER),
        "glob-open-bracket": (CONFIG, glob_json("outputs.files", "dist/[a-"), EITHER),
        "glob-open-brace": (CONFIG, glob_json("outputs.files", "dist/{a,b"), EITHER),
        "glob-triple-star": (CONFIG, glob_json("inputs.files", "src/***"), EITHER),
        "glob-only-negation": (CONFIG, glob_json("outputs.files", "!**"), EITHER),
        "glob-empty": (CONFIG, glob_json("outputs.files", ""), BAD),
        "glob-enormous": (CONFIG, glob_json("outputs.files", "d/" * 5000 + "*"), EITHER),
        "toml-beside-json": ("packages/a/vx.config.toml", b'[tasks.build]\nexec = "x"\n', BAD),
        "workspace-concurrency-word": ("vx.workspace.json", b'{"concurrency": "lots"}', BAD),
        "workspace-concurrency-zero": ("vx.workspace.json", b'{"concurrency": 0}', BAD),
        "workspace-concurrency-1e30": ("vx.workspace.json", b'{"concurrency": 1e30}', BAD),
        "workspace-concurrency-percent": (
            "vx.workspace.json",
            b'{"concurrency": "900000000000000000000%"}',
            BAD,
        ),
        "workspace-cacheDir-number": ("vx.workspace.json", b'{"cacheDir": 5}', BAD),
        "workspace-cacheDir-blank": ("vx.workspace.json", b'{"cacheDir": "  "}', BAD),
        "workspace-timeout-text": ("vx.workspace.json", b'{"timeout": "soon"}', BAD),
        "workspace-retention-age": (
            "vx.workspace.json",
            b'{"cacheRetention": {"olderThan": "forever"}}',
            BAD,
        ),
        "workspace-retention-size": (
            "vx.workspace.json",
            b'{"cacheRetention": {"maxSize": "10Q"}}',
            BAD,
        ),
        "workspace-plugins-text": ("vx.workspace.json", b'{"plugins": "x"}', BAD),
        "workspace-plugin-missing": (
            "vx.workspace.json",
            b'{"plugins": ["no_such_module_vx:make"]}',
            EITHER,
        ),
        "workspace-unknown": ("vx.workspace.json", b'{"concurency": 2}', BAD),
        "workspace-duplicate-key": ("vx.workspace.json", b'{"timeout": 5, "timeout": 6}', BAD),
        "workspace-deep": ("vx.workspace.json", b"[" * deep + b"]" * deep, BAD),
        "toml-broken": ("vx.workspace.toml", b"concurrency = = 2\n", BAD),
        "toml-deep": ("vx.workspace.toml", b"x = " + b"[" * deep + b"]" * deep + b"\n", BAD),
        "py-raises": ("vx.workspace.py", b"raise RuntimeError('boom')\n", BAD),
        "py-syntax-error": ("vx.workspace.py", b"config = {\n", BAD),
        "py-config-not-a-dict": ("vx.workspace.py", b"config = 5\n", BAD),
        "py-recursion": ("vx.workspace.py", b"def f():\n    return f()\nconfig = f()\n", BAD),
        "package-json-broken": ("packages/a/package.json", b'{"name": ', BAD),
        "package-json-list": ("packages/a/package.json", b"[]", BAD),
        "package-name-number": ("packages/a/package.json", b'{"name": 5}', BAD),
        "root-workspaces-number": ("package.json", b'{"name": "root", "workspaces": 5}', BAD),
        "root-workspaces-dot-dot": (
            "package.json",
            b'{"name": "root", "workspaces": ["../*"]}',
            EITHER,
        ),
    }
    return out


CORPUS = corpus()
NAMES = sorted(CORPUS)
CHUNKS = 4


def verdicts(name: str, verb: list[str], root, tmp_path) -> str | None:
    """What went wrong with one variant through one verb, or None."""
    r = run_vx(verb, root, home=tmp_path / "home", timeout=60)
    if "Traceback" in r.err or "Traceback" in r.out:
        return f"stack: {r.err[-300:]}"
    must_refuse = CORPUS[name][2] == BAD or (CORPUS[name][2] == RUN_ONLY and verb[0] == "run")
    if r.code not in (0, 1) or (must_refuse and r.code != 1):
        return f"exit {r.code}: {r.err[-300:]}"
    if r.code == 1 and (must_refuse or not r.out):
        lines = r.err.splitlines()
        if len(lines) != 1:
            return f"{len(lines)} lines: {r.err[:300]}"
        if len(lines[0]) > MAX_LINE:
            return f"a {len(lines[0])}-character line: {lines[0][:200]}…"
    return None


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_malformed_configs_are_refused_in_one_line(workspace, tmp_path, chunk):
    files = tree({"a": ((), {"build": {"exec": "echo ok"}})})
    root = workspace(files)
    names = NAMES[chunk::CHUNKS]
    wrong: dict[str, str] = {}
    for name in names:
        rel, data, _ = CORPUS[name]
        path = root / rel
        original = path.read_bytes() if path.exists() else None
        path.write_bytes(data)
        try:
            for verb in (["run", "build", "--all"], ["show"]):
                problem = verdicts(name, verb, root, tmp_path)
                if problem:
                    wrong[f"{name} ({verb[0]})"] = problem
        finally:
            if original is None:
                path.unlink()
            else:
                path.write_bytes(original)
    print(f"malformed configs: {len(names)} of {len(CORPUS)}, 2 verbs each; wrong: {sorted(wrong)}")
    assert wrong == {}
