"""Trust and proxy variables reach every task; the workspace passThrough; what a failure lacked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vx.output.frame import withheld_line
from vx.output.style import Style
from vx.run.taskenv import NETWORK, task_env
from vx.run.withheld import withheld
from vx.workspace.model import EnvSpec, ExecSpec

if TYPE_CHECKING:
    from pathlib import Path


def env_of(tmp_path: Path, base: dict[str, str], **kw: object) -> dict[str, str]:
    spec = ExecSpec(command="true", env=EnvSpec(**kw))  # type: ignore[arg-type]
    made = task_env(
        base=base,
        exec_spec=spec,
        project_dir=tmp_path,
        root=tmp_path,
        task_id="a#build",
        workspace_pass_through=("GLOBAL_*", "ONE"),
    )
    return dict(made.env)


def test_every_trust_and_proxy_variable_passes_in_both_cases(tmp_path: Path) -> None:
    base = {name: f"v-{name}" for name in NETWORK}
    assert len(NETWORK) == 16
    assert {"SSL_CERT_FILE", "no_proxy", "NODE_EXTRA_CA_CERTS", "all_proxy"} <= set(NETWORK)
    env = env_of(tmp_path, base)
    assert {n: env[n] for n in NETWORK} == base


def test_the_workspace_pass_through_reaches_every_task(tmp_path: Path) -> None:
    base = {"GLOBAL_A": "1", "GLOBAL_B": "2", "ONE": "x", "OTHER": "no"}
    env = env_of(tmp_path, base)
    assert (env["GLOBAL_A"], env["GLOBAL_B"], env["ONE"]) == ("1", "2", "x")
    assert "OTHER" not in env


def test_a_proxy_password_is_a_secret(tmp_path: Path) -> None:
    spec = ExecSpec(command="true")
    made = task_env(
        base={"HTTPS_PROXY": "http://me:hunter22@proxy.invalid:3128"},
        exec_spec=spec,
        project_dir=tmp_path,
        root=tmp_path,
        task_id="a#build",
    )
    assert "hunter22" in made.secrets


def test_withheld_lists_service_and_credential_names_and_not_the_session() -> None:
    base = {
        "DATABASE_URL": "postgres://x",
        "AWS_PROFILE": "prod",
        "OPENAI_API_KEY": "k",
        "GH_TOKEN": "t",
        "PATH": "/bin",
        "PWD": "/w",
        "SHLVL": "2",
        "XDG_RUNTIME_DIR": "/run",
        "VX_CACHE_DIR": ".c",
        "npm_config_cache": "/c",
        "SSH_AUTH_SOCK": "/s",
        "CURL_CA_BUNDLE": "/ca",
        "FEATURE_FLAGS": "on",
        "PYTHONUNBUFFERED": "1",
        # Secret-looking by the rule masking uses (util/secrets.py), word or not.
        "DB_PASSWD": "p",
        "STRIPEAPIKEY": "k",
    }
    assert withheld(base, {"PATH": "/bin"}) == (
        "AWS_PROFILE",
        "DATABASE_URL",
        "DB_PASSWD",
        "GH_TOKEN",
        "OPENAI_API_KEY",
        "STRIPEAPIKEY",
    )


def test_the_frame_line_names_and_caps_never_values() -> None:
    names = tuple(f"V{i:02}" for i in range(14))
    line = withheld_line(names, Style(color=False))
    assert line == (
        "not passed to the task: V00, V01, V02, V03, V04, V05, V06, V07, V08, V09, V10, V11"
        " and 2 more — declare them in exec.env.passThrough or cache.inputs.env"
    )


def test_a_name_the_failure_mentions_is_listed_and_comes_first() -> None:
    base = {"A_URL": "1", "FEATURE_FLAGS": "2", "ZED_URL": "3", "PWD": "/"}
    said = "$ ./deploy\nerror: FEATURE_FLAGS and PWD are not set\n"
    assert withheld(base, {}, said) == ("FEATURE_FLAGS", "A_URL", "ZED_URL")
