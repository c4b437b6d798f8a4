"""`vx run` selection: the cwd project, --all, pkg#task, //#task, and every refusal's words."""

from __future__ import annotations

import pytest
from tests.e2e.runws import package, tree

TASKS = {
    "build": {"dependsOn": ["^build"], "exec": "echo build $VX_RUN_TASK"},
    "test": {"dependsOn": ["build"], "exec": "echo test $VX_RUN_TASK"},
}
LIB_ONLY = {**TASKS, "lint": {"exec": "echo lint"}}


def ws_files():
    files = tree({"lib": ((), LIB_ONLY), "app": (("lib",), TASKS)})
    files["vx.config.json"] = {"tasks": {"check": {"exec": "echo root check"}}}
    return files


def test_default_is_the_cwd_project_and_its_closure(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "test", "--output-logs=hash-only"], root / "packages/app").assert_ok()
    assert "app#test" in r.out
    assert "lib#build" in r.out
    assert "lib#test" not in r.out


def test_all_runs_every_declaring_project(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "test", "--all", "--output-logs=hash-only"], root).assert_ok()
    for tid in ("app#test", "lib#test", "app#build", "lib#build"):
        assert tid in r.out


def test_anchored_and_root_tasks(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "lib#lint", "//#check"], root).assert_ok()
    assert "lint" in r.out
    assert "root check" in r.out


def test_several_tasks_in_one_graph(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "build", "lint", "--all", "--output-logs=hash-only"], root).assert_ok()
    assert "lib#lint" in r.out
    assert "app#build" in r.out


def test_a_name_only_some_projects_declare_stays_green(workspace, vx):
    root = workspace(ws_files())
    vx(["run", "lint", "--all"], root).assert_ok()


def refusal(r, text):
    assert r.code == 1, repr(r)
    assert r.err.strip().splitlines()[-1] == text, repr(r)


def test_typo_gets_did_you_mean(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "tset", "--all"], root)
    refusal(r, "vx run: no projects declare task(s): tset. Did you mean test?")


def test_nothing_near_lists_tasks(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "zzzzzz", "--all"], root)
    refusal(r, "vx run: no projects declare task(s): zzzzzz. Tasks: build, check, lint, test.")


def test_unknown_project_in_anchor(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "zzz#build"], root)
    assert r.code == 1
    assert "No project is named zzz; projects: " in r.err


def test_only_projects_outside_the_selection(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "lint"], root / "packages/app")
    assert r.code == 1
    assert (
        "Only projects outside the selection declare lint — pass --all, or name one as pkg#task."
        in r.err
    )


def test_json_errors_carry_the_code(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "tset", "--all", "--format", "json"], root)
    assert r.code == 1
    doc = r.json()
    assert doc["ok"] is False
    assert doc["error"]["code"] == "VX_E_UNKNOWN_TASK"


def test_no_task_off_a_tty_is_refused(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run"], root / "packages/lib")
    refusal(
        r,
        "missing task name (stdin is not a TTY, so no picker; tasks here: build, lint, test)",
    )


def test_no_task_under_json_is_refused_with_a_document(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "--format=json"], root / "packages/lib")
    assert r.code == 1
    assert r.json()["error"]["code"] == "VX_E_USAGE"
    assert "a JSON answer opens no picker" in r.err


def test_forwarded_args_to_a_group_only_are_refused(workspace, vx):
    files = ws_files()
    files["packages/lib/vx.config.json"] = {
        "tasks": {"a": {"exec": "echo a"}, "all": {"dependsOn": ["a"]}}
    }
    root = workspace(files)
    r = vx(["run", "lib#all", "--", "--x"], root)
    assert r.code == 1
    assert "args after `--` reach no task" in r.err


def test_exclude_dependencies_runs_only_the_requested(workspace, vx):
    root = workspace(ws_files())
    r = vx(
        ["run", "test", "--exclude-dependencies", "--output-logs=hash-only"],
        root / "packages/app",
    ).assert_ok()
    assert "app#test" in r.out
    assert "lib#build" not in r.out


def test_exclude_dependencies_typo_is_refused(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "test", "--exclude-dependencies=biuld"], root / "packages/app")
    assert r.code == 1
    assert "build" in r.err


def test_empty_exclude_value_is_refused(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "test", "--exclude-dependencies="], root / "packages/app")
    assert r.code == 1


def test_nested_run_is_refused(workspace, vx):
    root = workspace(ws_files())
    r = vx(
        ["run", "build"],
        root / "packages/app",
        env={"VX_RUN_WORKSPACE": str(root), "VX_RUN_TASK": "app#build"},
    )
    assert r.code == 1
    assert "refusing a nested run" in r.err


def test_nx_project_target_outside_a_project_names_the_vx_spelling(workspace, vx):
    files = tree({"lib": ((), LIB_ONLY), "app": (("lib",), TASKS)})  # no root project
    root = workspace(files)
    r = vx(["run", "app:build"], root)
    refusal(
        r, 'vx run: "app:build" is Nx\'s project:target — vx writes it app#build: vx run app#build'
    )


def test_nx_project_target_in_scope_is_the_hint(workspace, vx):
    root = workspace(ws_files())
    r = vx(["run", "app:test"], root / "packages/lib")
    refusal(r, "vx run: no projects declare task(s): app:test. Did you mean app#test?")


def scoped_files(*names: str):
    """Packages named `names`, each in packages/<its name without the scope>-<n>."""
    files = tree({})
    for n, name in enumerate(names):
        where = f"packages/{name.rpartition('/')[2]}-{n}"
        files[f"{where}/package.json"] = package(name)
        files[f"{where}/vx.config.json"] = {"tasks": TASKS}
    return files


def test_a_scope_less_name_runs_its_one_scoped_package(workspace, vx):
    root = workspace(scoped_files("@scope/zod", "lib"))
    r = vx(["run", "zod#build"], root).assert_ok()
    assert "@scope/zod#build" in r.out
    vx(["run", "zod:build"], root).assert_code(1)  # Nx's spelling is answered, not run
    r = vx(["run", "zod:build"], root)
    refusal(
        r,
        'vx run: "zod:build" is Nx\'s project:target — vx writes it @scope/zod#build:'
        " vx run @scope/zod#build",
    )


def test_a_scope_less_name_two_scopes_carry_is_a_hint(workspace, vx):
    root = workspace(scoped_files("@a/zod", "@b/zod"))
    r = vx(["run", "zod#build"], root)
    refusal(
        r,
        "vx run: no projects declare task(s): zod#build."
        " Did you mean one of @a/zod#build, @b/zod#build?",
    )


FOREIGN = [
    (["-F", "lib", "--only"], {"lib#build"}),
    (["-t", "build", "-p", "lib"], {"lib#build"}),
    (["--continue=dependencies-successful", "--filter", "lib", "--nxBail=false"], {"lib#build"}),
]


@pytest.mark.parametrize(("args", "ran"), FOREIGN, ids=[" ".join(a) for a, _ in FOREIGN])
def test_foreign_flags_run_as_vx_reads_them(workspace, vx, args, ran):
    root = workspace(ws_files())
    words = [] if "-t" in args else ["build"]
    r = vx(["run", *words, *args, "--format=json"], root).assert_ok()
    assert {row["id"] for row in r.json()["tasks"]} == ran


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--output-logs=new-only"],
            (
                "vx run does not take Turbo's --output-logs=new-only: use --output-logs=full"
                " (a cache hit replays its log) or errors-only — see vx run --help"
            ),
        ),
        (
            ["--include-dependencies"],
            (
                "vx run does not take Turbo's --include-dependencies: vx already runs what"
                " dependsOn reaches: drop it (--exclude-dependencies leaves it out)"
                " — see vx run --help"
            ),
        ),
    ],
)
def test_foreign_flags_refused_in_one_line(workspace, vx, args, line):
    root = workspace(ws_files())
    refusal(vx(["run", "build", "--all", *args], root), line)


def test_nx_affected_names_the_filter(workspace, vx):
    root = workspace(ws_files())
    r = vx(["affected", "-t", "test", "--base=origin/dev"], root)
    refusal(r, "unknown command: \"affected\" — use vx run test --filter '...[origin/dev]'")
