"""Tasks that print their secrets, every way a task can: none reaches the store, the JSON record
or the terminal.

Secret values come from `exec.env.secret` and from variables secret by name (`*TOKEN*`,
`*SECRET*`, `*PASSWORD*`, `*KEY*`, any case), printed on stdout and stderr, whole, split over
two writes, with no newline, by tasks that succeed, fail and run uncached; then replayed from
the cache, printed as JSON and written by `--summarize`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from tests.conftest import run_vx
from tests.e2e.cachews import artifact_members
from tests.e2e.runws import tree

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.faults

SECRETS = {
    "DEPLOY_CREDS": "dc-Value-4711-aaaa",  # secret by exec.env.secret
    "MY_TOKEN": "tok_9f8e7d6c5b4a",
    "db_password": "hunter2-but-longer",
    "API_KEY_ID": "AKIA0000EXAMPLE99",
    "CLIENT_SECRET": "cs-0b1c2d3e4f5a",
    "SESSION_TOKEN": "st-ffeeddccbbaa",  # also an `inputs.env` of its task: in the key
}
OUT = "mkdir -p dist && echo done > dist/out.txt"


def task(command: str, var: str, *, cached: bool = True, as_input: bool = False) -> dict:
    env = {"secret": [var]} if var == "DEPLOY_CREDS" else {"passThrough": [var]}
    spec: dict = {"exec": {"command": command, "env": env}}
    if cached:
        inputs: dict = {"files": ["src/**"]}
        if as_input:
            inputs["env"] = [var]
        spec["cache"] = {"inputs": inputs, "outputs": {"files": ["dist/**"]}}
    return spec


TASKS = {
    "stdout": task(f'echo "creds: $DEPLOY_CREDS"; {OUT}', "DEPLOY_CREDS"),
    "stderr": task(f'echo "token=$MY_TOKEN" >&2; {OUT}', "MY_TOKEN"),
    "split": task(
        "printf '%s' \"$db_password\" | head -c 7; sleep 0.05;"
        f" printf '%s\\n' \"$db_password\" | tail -c +8; {OUT}",
        "db_password",
    ),
    "no-newline": task(f"printf 'k[%s]' \"$API_KEY_ID\"; {OUT}", "API_KEY_ID"),
    "failing": task(
        'echo "secret is $CLIENT_SECRET"; echo "$CLIENT_SECRET" >&2; exit 3', "CLIENT_SECRET"
    ),
    "input-env": task(f'echo "$SESSION_TOKEN"; {OUT}', "SESSION_TOKEN", as_input=True),
    "uncached": task('echo "$MY_TOKEN and $DEPLOY_CREDS"', "MY_TOKEN", cached=False),
}


def store_blobs(cache: Path) -> dict[str, bytes]:
    """Every file of the cache dir, and every member of every artifact, decompressed."""
    blobs: dict[str, bytes] = {}
    for path in cache.rglob("*"):
        if not path.is_file():
            continue
        blobs[str(path)] = path.read_bytes()
        if path.name.endswith(".tar.zst"):
            for name, data in artifact_members(path).items():
                blobs[f"{path}:{name}"] = data or b""
    return blobs


def test_no_secret_reaches_the_store_the_json_or_the_terminal(workspace, tmp_path):
    files = tree({name: ((), {"leak": spec}) for name, spec in TASKS.items()})
    # The uncached task sees DEPLOY_CREDS too: it is this task's secret as well.
    files["packages/uncached/vx.config.json"]["tasks"]["leak"]["exec"]["env"]["secret"] = [
        "DEPLOY_CREDS"
    ]
    root = workspace(files)
    cache = tmp_path / "cache"
    base = ["run", "leak", "--all", "--continue", "--cache-dir", str(cache)]
    places: dict[str, bytes] = {}
    runs = [
        ("pretty", ["--output-logs=full"]),
        ("replay", ["--output-logs=full"]),
        ("json", ["--format=json", "--output-logs=full"]),
        ("forced-json", ["--force", "--format=json", f"--summarize={tmp_path / 'sum.json'}"]),
        ("summarize", ["--summarize", "--output-logs=full"]),
    ]
    for label, extra in runs:
        r = run_vx([*base, *extra], root, env=SECRETS, home=tmp_path / "home")
        assert r.code == 1, r  # `failing` fails every time
        assert "Traceback" not in r.err, r
        places[f"{label}: stdout"] = r.out.encode()
        places[f"{label}: stderr"] = r.err.encode()
    assert "creds: ***" in places["pretty: stdout"].decode()  # the control: the task did print
    places[str(tmp_path / "sum.json")] = (tmp_path / "sum.json").read_bytes()
    assert list(cache.glob("runs/*.json")), "--summarize wrote no record"
    assert list(cache.glob("failures/*.json")), "the failing task left no failure record"
    places |= store_blobs(cache)

    found = sorted(
        f"{name} in {where}"
        for where, blob in places.items()
        for name, value in SECRETS.items()
        if value.encode() in blob
    )
    print(f"secrets: {len(SECRETS)} values, {len(runs)} runs, {len(places)} places; found: {found}")
    assert found == []
