"""A task on a machine behind a CA bundle and a proxy: it sees them, no key reads them, and a
failure names (never shows) the variables vx kept from it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from tests.e2e.runws import tree

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"

SHOW = 'echo "cert=$SSL_CERT_FILE proxy=$HTTPS_PROXY lower=$no_proxy shared=$SHARED_TOOL"'


def files() -> dict:
    made = tree(
        {
            "a": (
                (),
                {
                    "build": {"exec": SHOW, "cache": {"outputs": {"files": []}}},
                    "fail": {"exec": "echo the build broke: DATABASE_URL is not set >&2; exit 4"},
                },
            )
        }
    )
    made["vx.workspace.json"] = {"passThrough": ["SHARED_*"]}
    return made


NETWORK = {
    "SSL_CERT_FILE": "/etc/corp/ca.pem",
    "HTTPS_PROXY": "http://proxy.corp.invalid:3128",
    "no_proxy": "localhost,.corp.invalid",
    "SHARED_TOOL": "on",
}


def test_a_task_sees_the_trust_and_proxy_variables_and_the_workspace_pass_through(workspace, vx):
    root = workspace(files())
    r = vx(["run", "a#build", "--output-logs=full"], root, env=NETWORK).assert_ok()
    assert (
        "cert=/etc/corp/ca.pem proxy=http://proxy.corp.invalid:3128"
        " lower=localhost,.corp.invalid shared=on" in r.out
    )


def test_changing_them_changes_no_key(workspace, vx):
    root = workspace(files())
    first = vx(["run", "a#build", "--dry=json"], root, env=NETWORK).assert_ok().json()
    other = {
        "SSL_CERT_FILE": "/elsewhere/ca.pem",
        "HTTPS_PROXY": "http://other.invalid:8080",
        "no_proxy": "*",
        "SHARED_TOOL": "off",
    }
    second = vx(["run", "a#build", "--dry=json"], root, env=other).assert_ok().json()
    hashes = [[t["hash"] for t in doc["tasks"]] for doc in (first, second)]
    assert hashes[0] == hashes[1]
    assert len(hashes[0]) == 1
    vx(["run", "a#build"], root, env=NETWORK).assert_ok()
    again = vx(["run", "a#build"], root, env=other).assert_ok()
    assert "1 task · all cached" in again.out


def test_a_failed_frame_names_what_was_kept_back_and_never_its_value(workspace, vx):
    root = workspace(files())
    env = {**NETWORK, "DATABASE_URL": "postgres://user:s3cr3t-value@db.invalid/app"}
    r = vx(["run", "a#fail"], root, env=env)
    assert r.code == 1
    assert "the build broke" in r.out
    line = next(ln for ln in r.out.splitlines() if ln.startswith("not passed to the task: "))
    # The name the failure mentions leads, whatever else the environment held.
    assert line.startswith("not passed to the task: DATABASE_URL")
    assert line.endswith("— declare them in exec.env.passThrough or cache.inputs.env")
    # What the task did get, and the session, are not listed; no value is printed anywhere.
    assert "SSL_CERT_FILE" not in line
    assert "SHARED_TOOL" not in line
    assert "PWD" not in line.split(": ", 1)[1].split(", ")
    assert "s3cr3t-value" not in r.out + r.err
    assert "postgres://" not in r.out + r.err


def test_a_success_says_nothing_of_kept_back_variables(workspace, vx):
    root = workspace(files())
    r = vx(["run", "a#build", "--output-logs=full"], root, env={"DATABASE_URL": "x"})
    r.assert_ok()
    assert "not passed to the task" not in r.out


def test_the_run_record_names_them_too(workspace, vx):
    root = workspace(files())
    env = {"DATABASE_URL": "postgres://user:s3cr3t-value@db.invalid/app"}
    r = vx(["run", "a#fail", "--format", "json"], root, env=env)
    assert r.code == 1
    jsonschema.validate(r.json(), json.loads((SCHEMAS / "summary.json").read_text()))
    (row,) = [t for t in r.json()["tasks"] if t["id"] == "a#fail"]
    assert row["notPassed"][0] == "DATABASE_URL"
    assert "s3cr3t-value" not in r.out + r.err
