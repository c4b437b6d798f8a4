"""A `plugins` list loads nothing yet: vx accepts its shape and says, never silently, that the
plugins do nothing."""

from __future__ import annotations

from tests.e2e.runws import tree

NOTE = "vx.workspace.json: plugins: vx does not load plugins yet, so acme_vx.docker:plugin does nothing"


def test_a_run_and_vx_show_say_the_plugins_do_nothing(workspace, vx):
    files = tree({"a": ((), {"build": {"exec": "echo built"}})})
    files["vx.workspace.json"] = {"plugins": ["acme_vx.docker:plugin"]}
    root = workspace(files)
    run = vx(["run", "a#build"], root).assert_ok()
    assert f"[vx] {NOTE}" in run.out + run.err
    show = vx(["show"], root).assert_ok()
    assert show.err == f"note: {NOTE}\n"
