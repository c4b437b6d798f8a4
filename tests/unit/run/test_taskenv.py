"""A task's environment, its secret values, masking (chunked too) and the nested-run refusal."""

from __future__ import annotations

import os
from pathlib import Path
from types import MappingProxyType

import pytest

from vx.run.taskenv import StreamMasker, TaskEnv, mask, nested_run_refusal, task_env
from vx.workspace.model import EnvSpec, ExecSpec

BASE = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "USER": "u",
    "SHELL": "/bin/bash",
    "TERM": "xterm",
    "LANG": "C.UTF-8",
    "LC_ALL": "C",
    "LC_CTYPE": "UTF-8",
    "TMPDIR": "/tmp",
    "TZ": "UTC",
    "CI": "true",
    "LCX": "not a locale",
    "EDITOR": "vi",
    "NEXT_PUBLIC_A": "a",
    "NEXT_PUBLIC_B": "b",
    "NEXT_PRIVATE": "p",
    "API_URL": "https://example.invalid",
    "NPM_TOKEN": "npm-token-value",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-value",
}
MARKERS = {"VX_RUN_WORKSPACE", "VX_RUN_TASK", "FORCE_COLOR"}
BASELINE = {
    "PATH",
    "HOME",
    "USER",
    "SHELL",
    "TERM",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "CI",
}


def build(
    tmp_path: Path,
    *,
    base: dict[str, str] | None = None,
    pass_through: tuple[str, ...] = (),
    define: dict[str, str] | None = None,
    secret: tuple[str, ...] = (),
    inputs_env: tuple[str, ...] = (),
    project: str = "packages/app",
) -> TaskEnv:
    exec_spec = ExecSpec("true", env=EnvSpec(pass_through, MappingProxyType(define or {}), secret))
    return task_env(
        base=BASE if base is None else base,
        exec_spec=exec_spec,
        inputs_env=inputs_env,
        project_dir=tmp_path / project,
        root=tmp_path,
        task_id="app#build",
    )


@pytest.mark.parametrize(
    ("kwargs", "extra"),
    [
        ({}, set()),
        ({"pass_through": ("EDITOR",)}, {"EDITOR"}),
        ({"pass_through": ("NEXT_PUBLIC_*",)}, {"NEXT_PUBLIC_A", "NEXT_PUBLIC_B"}),
        ({"pass_through": ("NOT_SET", "EDITOR")}, {"EDITOR"}),
        ({"inputs_env": ("API_URL",)}, {"API_URL"}),
        ({"secret": ("NPM_TOKEN",)}, {"NPM_TOKEN"}),
        ({"define": {"NODE_ENV": "production"}}, {"NODE_ENV"}),
    ],
)
def test_only_declared_variables_pass(
    tmp_path: Path, kwargs: dict[str, object], extra: set[str]
) -> None:
    env = build(tmp_path, **kwargs).env  # type: ignore[arg-type]
    assert set(env) == BASELINE | MARKERS | extra
    for name in extra - {"NODE_ENV"}:
        assert env[name] == BASE[name]


def test_define_wins_and_the_markers_are_vx_own(tmp_path: Path) -> None:
    define = {
        "EDITOR": "nano",
        "LANG": "fr_FR.UTF-8",
        "VX_RUN_TASK": "x#y",
        "VX_RUN_WORKSPACE": "/x",
    }
    env = build(tmp_path, pass_through=("EDITOR",), define=define).env
    assert (env["EDITOR"], env["LANG"]) == ("nano", "fr_FR.UTF-8")
    assert (env["VX_RUN_WORKSPACE"], env["VX_RUN_TASK"]) == (str(tmp_path), "app#build")


def test_the_environment_is_read_only(tmp_path: Path) -> None:
    env = build(tmp_path).env
    with pytest.raises(TypeError):
        env["X"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    ("dirs", "project", "path", "expected"),
    [
        ([], "packages/app", "/usr/bin:/bin", "/usr/bin:/bin"),
        (
            ["packages/app/node_modules/.bin", "node_modules/.bin", ".venv/bin"],
            "packages/app",
            "/usr/bin:/bin",
            "[T]/packages/app/node_modules/.bin:[T]/node_modules/.bin:[T]/.venv/bin:/usr/bin:/bin",
        ),
        (["node_modules/.bin"], "packages/app", "/usr/bin", "[T]/node_modules/.bin:/usr/bin"),
        (
            ["node_modules/.bin", ".venv/bin"],
            ".",
            "/usr/bin",
            "[T]/node_modules/.bin:[T]/.venv/bin:/usr/bin",
        ),
        (
            [".venv/bin"],
            "packages/app",
            "/usr/bin:[T]/.venv/bin:/bin",
            "[T]/.venv/bin:/usr/bin:/bin",
        ),
        (["node_modules/.bin"], ".", None, "[T]/node_modules/.bin:" + os.defpath),
        (["node_modules/.bin"], ".", "", "[T]/node_modules/.bin"),
    ],
)
def test_path_puts_local_tool_dirs_first(
    tmp_path: Path, dirs: list[str], project: str, path: str | None, expected: str
) -> None:
    for d in dirs:
        (tmp_path / d).mkdir(parents=True)
    base = {} if path is None else {"PATH": path.replace("[T]", str(tmp_path))}
    env = build(tmp_path, base=base, project=project).env
    assert env["PATH"] == expected.replace("[T]", str(tmp_path))


def test_a_tool_dir_that_is_a_file_is_not_a_dir(tmp_path: Path) -> None:
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules/.bin").write_text("")
    assert build(tmp_path, base={"PATH": "/bin"}).env["PATH"] == "/bin"


@pytest.mark.parametrize(
    ("base", "kwargs", "expected"),
    [
        ({}, {}, "1"),
        ({"FORCE_COLOR": "0"}, {}, "1"),  # the task does not see vx's own
        ({"FORCE_COLOR": "0"}, {"pass_through": ("FORCE_COLOR",)}, "0"),
        ({"FORCE_COLOR": ""}, {"pass_through": ("FORCE_COLOR",)}, ""),
        ({}, {"define": {"FORCE_COLOR": "3"}}, "3"),
        ({"NO_COLOR": "1"}, {"pass_through": ("NO_COLOR",)}, None),
        ({"NO_COLOR": ""}, {"pass_through": ("NO_COLOR",)}, "1"),
        ({}, {"define": {"NO_COLOR": "yes"}}, None),
    ],
)
def test_force_color(
    tmp_path: Path, base: dict[str, str], kwargs: dict[str, object], expected: str | None
) -> None:
    env = build(tmp_path, base=base, **kwargs).env  # type: ignore[arg-type]
    assert env.get("FORCE_COLOR") == expected


@pytest.mark.parametrize(
    ("base", "kwargs", "expected"),
    [
        (BASE, {}, ()),
        (BASE, {"secret": ("NPM_TOKEN",)}, ("npm-token-value",)),
        (BASE, {"pass_through": ("AWS_*",)}, ("aws-secret-value",)),
        ({"DEPLOY_PW": "hunter22"}, {"secret": ("DEPLOY_*",)}, ("hunter22",)),
        (
            {
                "gh_token": "tok-1234",
                "DB_PASSWORD": "pw-5678",
                "STRIPE_KEY": "sk-abcdef",
                "MY_SECRET": "s3cr3t",
            },
            {"pass_through": ("gh_token", "DB_PASSWORD", "STRIPE_KEY", "MY_SECRET")},
            ("sk-abcdef", "tok-1234", "pw-5678", "s3cr3t"),
        ),
        ({"API_KEY": "abc"}, {"pass_through": ("API_KEY",)}, ()),  # too short to mask
        (  # the names the lock refusal and the not-passed list take as secret too
            {"DB_PASSWD": "pw-5678", "GCP_CREDENTIALS": "/keys/gcp.json"},
            {"pass_through": ("DB_PASSWD", "GCP_CREDENTIALS")},
            ("/keys/gcp.json", "pw-5678"),
        ),
        ({}, {"define": {"SIGNING_KEY": "from-config"}}, ("from-config",)),
        (
            {"A_TOKEN": "same-value", "B_TOKEN": "same-value"},
            {"pass_through": ("*",)},
            ("same-value",),
        ),
    ],
)
def test_secret_values(
    tmp_path: Path, base: dict[str, str], kwargs: dict[str, object], expected: tuple[str, ...]
) -> None:
    assert build(tmp_path, base=base, **kwargs).secrets == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("token=abcd1234 done", ("abcd1234",), "token=*** done"),
        ("abcdef abcd", ("abcd", "abcdef"), "*** ***"),
        ("abcabcabc", ("abcabc",), "***abc"),
        ("a.b*c and axbbc", ("a.b*c",), "*** and axbbc"),
        ("key abc", ("abc",), "key abc"),
        ("nothing here", (), "nothing here"),
        ("x\nPEM\nx", ("x\nPEM\nx",), "***"),
    ],
)
def test_mask(text: str, secrets: tuple[str, ...], expected: str) -> None:
    assert mask(text, secrets) == expected


CHUNKED = [
    ("the token is abcd1234, again abcd1234!", ("abcd1234",)),
    ("xyzw1234 and zw12", ("xyzw1234", "zw12")),
    ("abcdefgh abcd abcdefg", ("abcd", "abcdefgh")),
    ("aaaaaaaaab", ("aaab", "aaaa")),
    ("éclair sécret=ünïcode", ("ünïcode", "sécret")),
    ("no secret at all", ("zzzz",)),
]


@pytest.mark.parametrize(("text", "secrets"), CHUNKED)
def test_stream_masker_matches_mask_for_every_two_and_three_way_split(
    text: str, secrets: tuple[str, ...]
) -> None:
    whole = mask(text, secrets)
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            masker = StreamMasker(secrets)
            pieces = [
                masker.feed(text[:i]),
                masker.feed(text[i:j]),
                masker.feed(text[j:]),
                masker.flush(),
            ]
            assert "".join(pieces) == whole, (i, j, pieces)


@pytest.mark.parametrize(
    ("chunk", "shown"),
    [
        ("plain line\n", "plain line\n"),
        ("value: abc", "value: "),  # "abc" may begin the secret
        ("value: abcd1234\n", "value: ***\n"),
    ],
)
def test_stream_masker_holds_back_only_what_could_begin_a_secret(chunk: str, shown: str) -> None:
    assert StreamMasker(("abcd1234",)).feed(chunk) == shown


@pytest.mark.parametrize(
    ("env", "root", "refused"),
    [
        ({}, "[T]", False),
        ({"VX_RUN_WORKSPACE": ""}, "[T]", False),
        ({"VX_RUN_WORKSPACE": "/elsewhere", "VX_RUN_TASK": "a#b"}, "[T]", False),
        ({"VX_RUN_WORKSPACE": "[T]", "VX_RUN_TASK": "web#dev"}, "[T]", True),
        ({"VX_RUN_WORKSPACE": "[T]/link", "VX_RUN_TASK": "web#dev"}, "[T]/real", True),
    ],
)
def test_nested_run_refusal(tmp_path: Path, env: dict[str, str], root: str, refused: bool) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    env = {k: v.replace("[T]", str(tmp_path)) for k, v in env.items()}
    message = nested_run_refusal(env, Path(root.replace("[T]", str(tmp_path))))
    if not refused:
        assert message is None
        return
    assert message == (
        "vx run: refusing a nested run: this vx was started by task web#dev of the same"
        " workspace; declare the work as a dependsOn edge instead"
    )
