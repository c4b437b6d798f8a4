"""Every row of the Turbo/Nx/Vite Task flag table, driven through `vx run`'s own table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vx.cli import foreign
from vx.cli.parser import parse, unknown_flag
from vx.cli.run import COMMAND
from vx.errors import ErrorCode, UserError

KNOWN = {f.name for f in COMMAND.flags}
DOCS = Path(__file__).resolve().parents[3] / "docs" / "cli.md"

# row.shown → (what a user types, what vx reads instead: a list of words, or a refusal's text)
EXPECT: dict[str, tuple[list[str], list[str] | str]] = {
    "--filter <v>": (["--filter", "!web"], ["--filter", "!web"]),
    "-F <v>": (["-F", "web", "-F=lib"], ["--filter=web", "--filter=lib"]),
    "--concurrency <v>": (["--concurrency", "4"], ["--concurrency", "4"]),
    "--continue=dependencies-successful": (["--continue=dependencies-successful"], ["--continue=deps-ok"]),
    "--continue": (["--continue=never"], ["--continue=never"]),
    "--dry-run": (["--dry-run=json"], ["--dry=json"]),
    "--graph=<file>.svg|png|json|html|…": (["--graph=g.svg"], "vx writes Graphviz DOT only"),
    "--graph": (["--graph=g.dot"], ["--graph=g.dot"]),
    "--force[=<bool>]": (["--force=true", "--force=false"], ["--force"]),
    "--affected": (["--affected"], ["--affected"]),
    "--summarize[=<bool>]": (["--summarize=false", "--summarize=out.json"], ["--summarize=out.json"]),
    "--output-logs=new-only": (["--output-logs", "new-only"], "use --output-logs=full (a cache hit replays its log) or errors-only"),
    "--output-logs <v>": (["--output-logs", "full"], ["--output-logs", "full"]),
    "--no-cache": (["--no-cache"], ["--no-cache"]),
    "--cache <v>": (["--cache", "local:r"], ["--cache", "local:r"]),
    "--cache-dir <v>": (["--cache-dir", "out"], ["--cache-dir", "out"]),
    "--profile": (["--profile"], ["--profile"]),
    "--only": (["--only"], ["--exclude-dependencies"]),
    "--include-dependencies": (["--include-dependencies"], "vx run does not take Turbo's --include-dependencies: vx already runs what dependsOn reaches"),
    "--color": (["--color"], "vx run does not take Turbo's --color: set FORCE_COLOR=1"),
    "--no-color": (["--no-color"], "set NO_COLOR=1"),
    "--heap <v>, --trace <v>": (["--trace", "t.json"], "vx run does not take Turbo's --trace t.json"),
    "--login <v>": (["--login=x"], "vx has no login"),
    "--no-update-notifier": (["--no-update-notifier"], "vx prints no update notice: drop it"),
    "--skip-infer": (["--skip-infer"], "vx runs the binary it is: drop it"),
    "--root-turbo-json <v>": (["--root-turbo-json", "t.json"], "vx reads no turbo.json"),
    "--experimental-otel-*": (["--experimental-otel-endpoint=x"], "vx traces a run when OTEL_EXPORTER_OTLP_ENDPOINT is set (vx-runner[otel]): drop it"),
    "--parallel <n>": (["--parallel", "3"], ["--concurrency=3"]),
    "--parallel": (["--parallel"], "vx always honours dependsOn; --concurrency <n> sets how many run at once"),
    "--scope <v>": (["--scope", "web"], "use --filter <pkg>"),
    "--since <v>": (["--since=main"], "use --filter '[<ref>]'"),
    "--remote-only[=<bool>]": (["--remote-only"], "use --cache local:,remote:rw"),
    "--remote-cache-read-only[=<bool>]": (["--remote-cache-read-only=true"], "use --cache local:rw,remote:r"),
    "--anon-profile": (["--anon-profile"], "vx has no redacted profile: drop it"),
    "--cache-workers <v>": (["--cache-workers", "8"], "vx sizes its own cache I/O: drop it"),
    "--cwd <v>": (["--cwd", "apps/web"], "cd <dir> && vx run …"),
    "--dangerously-disable-package-manager-check": (["--dangerously-disable-package-manager-check"], "vx reads no packageManager field"),
    "--env-mode <v>": (["--env-mode=loose"], "exec.env.passThrough"),
    "--framework-inference <v>": (["--framework-inference", "false"], "cache.inputs.env"),
    "--global-deps <v>": (["--global-deps", "x"], "cache.inputs.workspaceFiles"),
    "--json": (["--json"], "use --format json"),
    "--log-file": (["--log-file"], "use --summarize[=<path>]"),
    "--preflight": (["--preflight"], "take no preflight: drop it"),
    "--remote-cache-timeout <v>": (["--remote-cache-timeout", "9"], "set TURBO_REMOTE_CACHE_TIMEOUT"),
    "--single-package": (["--single-package"], "one project already: drop it"),
    "--token <v>, --team <v>, --api <v>": (["--team=t"], "set TURBO_TOKEN, TURBO_TEAM and TURBO_API"),
    "--no-daemon, --daemon": (["--no-daemon"], "vx has no daemon: drop it"),
    "--ui <v>, --log-order <v>, --log-prefix <v>": (["--ui", "tui"], "--output-logs <mode> sets how much"),
    "-t <v>, --targets <v>, --target <v>": (["-t", "build,test", "--target=lint"], ["build", "test", "lint"]),
    "-p <v>, --projects <v>": (["-p", "web,directory:apps/x,name:lib,tag:t"], ["--filter=web", "--filter=./apps/x", "--filter=lib", "--filter=tag:t"]),
    "--exclude <v>": (["--exclude", "docs,e2e"], ["--filter=!docs", "--filter=!e2e"]),
    "--base <v>": (["--base", "main"], ["--affected=main"]),
    "--head HEAD": (["--head", "HEAD"], []),
    "--head <v>": (["--head", "feature"], "check out the head first"),
    "--skip-nx-cache[=<bool>]": (["--skipNxCache"], ["--force"]),
    "--all": (["--all"], ["--all"]),
    "--nx-bail[=<bool>]": (["--nxBail=true"], ["--continue=never"]),
    "-c <v>, --configuration <v>": (["-c", "production"], "a configuration is a task of its own"),
    "--output-style <v>": (["--output-style", "stream"], "use --output-logs <mode>"),
    "--uncommitted, --untracked": (["--untracked"], "use --filter '[HEAD]'"),
    "--max-parallel <v>": (["--max-parallel", "2"], ["--concurrency=2"]),
    "--exclude-task-dependencies[=<bool>]": (["--exclude-task-dependencies=false"], []),
    "--skip-remote-cache[=<bool>]": (["--skip-remote-cache"], ["--cache=local:rw,remote:"]),
    "--verbose": (["--verbose"], "use --verbosity 1"),
    "--files <v>": (["--files", "a.ts"], "--filter '[<base>]'"),
    "--batch": (["--batch"], "vx runs one command per task: drop it"),
    "--dte, --use-agents": (["--use-agents"], "vx distributes nothing: drop it"),
    "--nx-ignore-cycles": (["--nx-ignore-cycles"], "vx refuses a task cycle by name: break it"),
    "--runner <v>": (["--runner", "cloud"], "a remote cache is a plugin"),
    "--skip-sync": (["--skip-sync"], "vx runs no sync generators: drop it"),
    "--tui, --no-tui, --tui-auto-exit": (["--no-tui"], "--output-logs <mode> sets how much"),
    "--no-cloud": (["--no-cloud"], "vx has no cloud: drop it"),
    "-r, --recursive": (["-r"], ["--all"]),
    "-w, --workspace-root": (["--workspace-root"], ["--filter=//"]),
    "--concurrency-limit <v>": (["--concurrency-limit", "3"], ["--concurrency=3"]),
    "--ignore-depends-on": (["--ignore-depends-on"], ["--exclude-dependencies"]),
    "--fail-if-no-match": (["--fail-if-no-match"], []),
    "--log <v>": (["--log", "full"], "--output-logs <mode> sets how much"),
    "--last-details": (["--last-details"], "--summarize[=<path>] writes each run's record"),
}  # fmt: skip


def test_every_row_has_a_case() -> None:
    assert [row.shown for row in foreign.ROWS] == list(EXPECT)


@pytest.mark.parametrize("row", foreign.ROWS, ids=[r.shown for r in foreign.ROWS])
def test_row(row: foreign.Row) -> None:
    typed, expected = EXPECT[row.shown]
    if row.needs is not None and row.needs not in KNOWN:
        expected = f"vx run has no {row.needs} yet"
    if isinstance(expected, str):
        assert row.outcome is foreign.Outcome.REFUSE or row.needs not in KNOWN
        with pytest.raises(UserError) as caught:
            foreign.rewrite(COMMAND, typed)
        assert caught.value.code is ErrorCode.USAGE
        assert expected in str(caught.value)
        assert str(caught.value).endswith(" — see vx run --help")
        assert "\n" not in str(caught.value)
        return
    assert foreign.rewrite(COMMAND, typed) == expected
    if row.outcome is foreign.Outcome.SAME:
        assert set(row.names) <= KNOWN  # vx takes the flag itself
    parse(COMMAND, ["build", *typed])  # and what the row leaves, vx's parser reads


def test_words_that_are_no_flag_pass_untouched() -> None:
    words = ["build", "web#test", "--", "--color"]
    assert foreign.rewrite(COMMAND, words[:2]) == words[:2]
    assert parse(COMMAND, words).forwarded == ("--color",)  # after `--` it is the task's


def test_values_a_row_reads() -> None:
    assert foreign.rewrite(COMMAND, ["--parallel=false"]) == ["--concurrency=1"]
    with pytest.raises(UserError, match="Turbo's --parallel: vx always honours dependsOn"):
        foreign.rewrite(COMMAND, ["--parallel", "build"])
    assert foreign.rewrite(COMMAND, ["-p", "!docs"]) == ["--filter=*", "--filter=!docs"]
    assert foreign.rewrite(COMMAND, ["--cache-dir", "-odd"]) == ["--cache-dir", "-odd"]


def test_a_bool_alias_refuses_another_value() -> None:
    with pytest.raises(UserError, match=r"--nx-bail takes =true or =false, not =yes"):
        foreign.rewrite(COMMAND, ["--nx-bail=yes"])


def test_the_help_lists_every_row() -> None:
    section = foreign.help_section(KNOWN)
    assert section in COMMAND.sections
    assert [shown for shown, _ in section.rows] == [row.shown for row in foreign.ROWS]


def test_the_manual_lists_every_row() -> None:
    text = DOCS.read_text()
    for row in foreign.ROWS:
        assert re.search(
            rf"^\| {row.runner} \| `{re.escape(row.shown.replace('|', chr(92) + '|'))}` \| {row.outcome} \|",
            text,
            re.MULTILINE,
        ), row


def test_an_opposite_flag_is_never_the_hint() -> None:
    known = ["--exclude-dependencies", "--cache", "--all"]
    assert unknown_flag("--include-dependencies", known) == "unknown flag: --include-dependencies"
    assert unknown_flag("--no-all", known) == "unknown flag: --no-all"
    assert unknown_flag("--exclude-dependencie", known).endswith(
        "(did you mean --exclude-dependencies?)"
    )
