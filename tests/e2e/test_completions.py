"""The completion scripts, loaded in real shells: a verb, a flag and a flag's value complete.

`vx` on the test's PATH is a wrapper around this checkout (or VX_TEST_BINARY), so the task
names come from the hidden `vx completions __tasks` call the scripts make at Tab time.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from tests.conftest import REPO, base_env, make_git_workspace, vx_argv


@pytest.fixture
def ws(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "vx"
    wrapper.write_text("#!/bin/sh\nexec " + " ".join(f"'{a}'" for a in vx_argv()) + ' "$@"\n')
    wrapper.chmod(0o755)
    root = make_git_workspace(
        tmp_path / "ws",
        {
            "package.json": {"name": "solo"},
            "vx.config.json": {"tasks": {"build": {"exec": "true"}, "bundle": {"exec": "true"}}},
        },
    )
    return root, base_env({"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin"})


def script_for(shell, root, env):
    return subprocess.run(
        ["vx", "completions", shell], env=env, cwd=root, capture_output=True, text=True, check=True
    ).stdout


BASH = """
eval "$(vx completions bash)"
complete_line() {
  read -ra COMP_WORDS <<< "$1"
  case "$1" in *" ") COMP_WORDS+=("") ;; esac
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _vx
  printf '%s\\n' "${COMPREPLY[@]}"
}
complete_line "$LINE"
"""


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("vx ru", {"run"}),
        ("vx run --output-l", {"--output-logs"}),
        ("vx run --output-logs ", {"full", "errors-only", "hash-only", "none"}),
        ("vx run --output-logs e", {"errors-only"}),
        ("vx run --continue=al", {"--continue=always"}),
        ("vx run bu", {"build", "bundle"}),
        ("vx last --log solo#b", {"solo#build", "solo#bundle"}),
        ("vx completions f", {"fish"}),
        ("vx why --format ", {"pretty", "json"}),
        ("vx watch --dr", set()),  # vx watch refuses --dry: never offered
        ("vx run --dr", {"--dry"}),
    ],
)
def test_bash_completes(ws, line, expected):
    root, env = ws
    out = subprocess.run(
        ["bash", "-c", BASH],
        env={**env, "LINE": line},
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert set(out.stdout.split()) == expected, out.stderr


def test_bash_completes_the_equals_form_when_equals_breaks_words(ws):
    """bash splits `--continue=al` at `=` by default (COMP_WORDBREAKS)."""
    root, env = ws
    script = BASH.replace('read -ra COMP_WORDS <<< "$1"', "COMP_WORDS=(vx run --continue = al)")
    out = subprocess.run(
        ["bash", "-c", script],
        env={**env, "LINE": "x"},
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["always"]


# zsh's compadd and compset exist only inside a completion widget: these stand-ins print
# the candidates that match the typed prefix, as compadd would offer them.
ZSH = """
compdef() { : }
compset() { PREFIX="${PREFIX#*=}" }
compadd() {
  while [[ $1 != -- ]]; do shift; done; shift
  local w; for w in "$@"; do [[ $w == ${PREFIX}* ]] && print -r -- $w; done
}
%s
words=(${=LINE}); [[ $LINE == *" " ]] && words+=("")
CURRENT=${#words}
PREFIX=${words[CURRENT]}
_vx
"""


@pytest.mark.skipif(
    shutil.which("zsh") is None, reason="zsh is not installed (.ci/run installs it)"
)
@pytest.mark.parametrize("how", ["sourced", "fpath"])
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("vx ru", {"run"}),
        ("vx run --output-l", {"--output-logs"}),
        ("vx run --output-logs ", {"full", "errors-only", "hash-only", "none"}),
        ("vx run --continue=al", {"always"}),
        ("vx run bu", {"build", "bundle"}),
    ],
)
def test_zsh_completes(ws, tmp_path, how, line, expected):
    root, env = ws
    script = script_for("zsh", root, env)
    if how == "sourced":
        load = "source <(vx completions zsh)"
    else:
        fpath = tmp_path / "zfunc"
        fpath.mkdir()
        (fpath / "_vx").write_text(script)
        load = f"fpath=({fpath} $fpath); autoload -Uz _vx"
    out = subprocess.run(
        ["zsh", "-f", "-c", ZSH % load],
        env={**env, "LINE": line},
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert set(out.stdout.split()) == expected, out.stderr


@pytest.mark.skipif(
    shutil.which("fish") is None, reason="fish is not installed (.ci/run installs it)"
)
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("vx ru", {"run"}),
        ("vx run --output-l", {"--output-logs"}),
        ("vx run --output-logs ", {"full", "errors-only", "hash-only", "none"}),
        ("vx run --continue=al", {"--continue=always"}),
        ("vx run bu", {"build", "bundle"}),
    ],
)
def test_fish_completes(ws, line, expected):
    root, env = ws
    out = subprocess.run(
        ["fish", "--no-config", "-c", 'vx completions fish | source; complete -C "$LINE"'],
        env={**env, "LINE": line, "XDG_CONFIG_HOME": str(root.parent / "cfg")},
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    got = {row.split("\t")[0] for row in out.stdout.splitlines()}
    assert got == expected, out.stderr


def test_an_unknown_shell_names_the_nearest(ws):
    root, env = ws
    out = subprocess.run(
        ["vx", "completions", "zhs"], env=env, cwd=root, capture_output=True, text=True, check=False
    )
    assert out.returncode == 1
    assert (
        out.stderr
        == 'vx completions: no script for "zhs" (did you mean zsh?) — the shells are bash, zsh and fish\n'
    )


@pytest.mark.parametrize("shell", ["bash", "fish"])
def test_a_plugin_s_verb_completes(ws, shell):
    """The scripts are static; the workspace's plugin verbs come from `vx completions __verbs`."""
    root, env = ws
    shutil.copy(REPO / "examples" / "plugins" / "vx_hello.py", root / "vx_hello.py")
    (root / "vx.workspace.json").write_text('{"plugins": ["vx_hello:plugin"]}\n')
    if shell == "fish":
        if shutil.which("fish") is None:
            pytest.skip("fish is not installed (.ci/run installs it)")
        argv = ["fish", "--no-config", "-c", 'vx completions fish | source; complete -C "$LINE"']
    else:
        argv = ["bash", "-c", BASH]
    out = subprocess.run(
        argv,
        env={**env, "LINE": "vx hel", "XDG_CONFIG_HOME": str(root.parent / "cfg")},
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert {row.split("\t")[0] for row in out.stdout.splitlines()} == {"hello", "help"}, out.stderr
