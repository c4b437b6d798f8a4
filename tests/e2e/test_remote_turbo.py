"""The Turborepo remote cache end to end, against the real `turborepo-remote-cache` server:
two clones sharing one cache, a server killed mid-run, and servers that answer badly."""

from __future__ import annotations

import re
import stat
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from tests.conftest import make_git_workspace, run_vx
from tests.e2e.remoteservers import TEAM, TOKEN, FaultProxy, turbo_server

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import VxResult

BUILD = (
    "mkdir -p dist && cat src/* > dist/out.txt && printf '#!/bin/sh\\necho hi\\n' > dist/run.sh"
    " && chmod +x dist/run.sh && head -c 3000 /dev/urandom > dist/blob.bin && echo built $PWD"
)


def task(deps: list[str], extra: str = "") -> dict[str, Any]:
    return {
        "dependsOn": deps,
        "exec": {"command": BUILD + extra, "env": {"passThrough": ["KILL_SERVER_PID"]}},
        "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
    }


def files(*, plugin: str = "vx.plugins.turbo:plugin") -> dict[str, Any]:
    kill = " && kill -9 $KILL_SERVER_PID"
    return {
        "package.json": {"name": "root", "private": True, "workspaces": ["packages/*"]},
        ".gitignore": "dist/\n",
        "vx.workspace.json": {"plugins": [plugin]},
        "packages/a/package.json": {"name": "a"},
        "packages/a/vx.config.json": {"tasks": {"build": task([])}},
        "packages/a/src/a.txt": "a\n",
        "packages/b/package.json": {"name": "b", "dependencies": {"a": "*"}},
        "packages/b/vx.config.json": {
            "tasks": {
                "build": task(["^build"]),
                "boom": {
                    **task(["^build"], kill),
                    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["out/**"]}},
                },
            }
        },
        "packages/b/src/b.txt": "b\n",
        "packages/c/package.json": {"name": "c", "dependencies": {"b": "*"}},
        "packages/c/vx.config.json": {"tasks": {"build": task(["^build"])}},
        "packages/c/src/c.txt": "c\n",
    }


def clone(origin: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(where)], check=True)
    return where


def env_for(url: str, **extra: str) -> dict[str, str]:
    return {"TURBO_API": url, "TURBO_TOKEN": TOKEN, "TURBO_TEAM": TEAM, **extra}


def outputs(ws: Path) -> dict[str, tuple[int, bytes]]:
    found: dict[str, tuple[int, bytes]] = {}
    for path in sorted(ws.glob("packages/*/dist/*")):
        found[str(path.relative_to(ws))] = (stat.S_IMODE(path.stat().st_mode), path.read_bytes())
    return found


def outcomes(result: VxResult) -> dict[str, str]:
    """Each task's closing frame word (`restored-remote`, …) under --output-logs=full."""
    rows = re.findall(r"^└─ (\S+) ── \([^)]*\) (\S+)", result.out, re.MULTILINE)
    return dict(rows)


def notices(result: VxResult) -> list[str]:
    return [line for line in result.err.splitlines() if "turbo remote cache at" in line]


def assert_no_token(tmp_path: Path, *results: VxResult) -> None:
    for result in results:
        assert TOKEN not in result.out + result.err
    for path in tmp_path.rglob("*"):
        if path.is_file() and "storage" not in path.parts:
            assert TOKEN.encode() not in path.read_bytes(), path


def test_a_second_clone_hits_the_first_clones_uploads(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files())
    with turbo_server(tmp_path / "storage") as server:
        env = env_for(server.url)
        first = clone(origin, tmp_path / "one")
        ran = run_vx(["run", "build", "--all", "--output-logs=full"], first, env=env,
                     home=tmp_path / "home1").assert_ok()  # fmt: skip
        assert set(outcomes(ran).values()) == {"success"}
        second = clone(origin, tmp_path / "two")
        hit = run_vx(["run", "build", "--all", "--output-logs=full"], second, env=env,
                     home=tmp_path / "home2").assert_ok()  # fmt: skip
        assert outcomes(hit) == dict.fromkeys(("a#build", "b#build", "c#build"), "restored-remote")
        assert outputs(second) == outputs(first)
        assert len(outputs(second)) == 9
        why = run_vx(["why", "c#build"], second, env=env, home=tmp_path / "home2").assert_ok()
        assert "cache-hit-remote" in why.out
        again = run_vx(["run", "build", "--all", "--output-logs=full"], second, env=env,
                       home=tmp_path / "home2").assert_ok()  # fmt: skip
        assert set(outcomes(again).values()) == {"up-to-date"}, "the remote hit became local"
    assert notices(ran) == notices(hit) == notices(again) == []
    assert_no_token(tmp_path, ran, hit, why, again)


def test_kept_remote_artifacts_without_rows_are_fetched_again(tmp_path: Path) -> None:
    """The rows of kept remote hits are written after their artifacts, together: a run killed
    in between leaves artifacts the index does not know. The next run takes them for misses,
    fetches them again, and ends with rows for all of them."""
    import shutil
    import sqlite3

    origin = make_git_workspace(tmp_path / "origin", files())
    run = ["run", "build", "--all", "--output-logs=full"]
    with turbo_server(tmp_path / "storage") as server:
        env = env_for(server.url)
        first = clone(origin, tmp_path / "one")
        run_vx(run, first, env=env, home=tmp_path / "home1").assert_ok()
        second = clone(origin, tmp_path / "two")
        run_vx(run, second, env=env, home=tmp_path / "home2").assert_ok()
        (db,) = (tmp_path / "home2").glob(".vx/*/cache/cache.db")
        assert len(list(db.parent.glob("*.tar.zst"))) == 3
        conn = sqlite3.connect(db)
        with conn:
            conn.execute("DELETE FROM entries")  # as if killed before the rows were written
        conn.close()
        for dist in second.glob("packages/*/dist"):
            shutil.rmtree(dist)
        healed = run_vx(run, second, env=env, home=tmp_path / "home2").assert_ok()
        assert set(outcomes(healed).values()) == {"restored-remote"}
        assert outputs(second) == outputs(first)
        conn = sqlite3.connect(db)
        (rows,) = conn.execute("SELECT count(*) FROM entries").fetchone()
        conn.close()
        assert rows == 3
        again = run_vx(run, second, env=env, home=tmp_path / "home2").assert_ok()
        assert set(outcomes(again).values()) == {"up-to-date"}


def test_remote_axes_and_download_modes(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files())
    with turbo_server(tmp_path / "storage") as server:
        env = env_for(server.url)
        home = tmp_path / "home"
        first = clone(origin, tmp_path / "one")
        run = ["run", "build", "--all", "--output-logs=full"]
        no_upload = run_vx([*run, "--cache=remote:r"], first, env=env, home=home).assert_ok()
        assert set(outcomes(no_upload).values()) == {"success"}
        second = clone(origin, tmp_path / "two")
        missed = run_vx(run, second, env=env, home=tmp_path / "h2").assert_ok()
        assert set(outcomes(missed).values()) == {"success"}, "remote:r uploaded nothing"
        third = clone(origin, tmp_path / "three")
        (third / "packages/a/dist").mkdir(parents=True)
        (third / "packages/a/dist/out.txt").write_text("an older build\n")  # cleaned, not kept
        top = run_vx(["run", "c#build", "--download=toplevel", "--output-logs=full"], third,
                     env=env, home=tmp_path / "h3").assert_ok()  # fmt: skip
        assert set(outcomes(top).values()) == {"restored-remote"}
        assert sorted(outputs(third)) == [
            f"packages/c/dist/{n}" for n in ("blob.bin", "out.txt", "run.sh")
        ]
        fourth = clone(origin, tmp_path / "four")
        off = run_vx([*run, "--cache=remote:"], fourth, env=env, home=tmp_path / "h4").assert_ok()
        assert set(outcomes(off).values()) == {"success"}
        fifth = clone(origin, tmp_path / "five")
        local_off = run_vx([*run, "--cache=local:"], fifth, env=env, home=tmp_path / "h5")
        assert set(outcomes(local_off.assert_ok()).values()) == {"restored-remote"}
        assert outputs(fifth) == outputs(second)
        assert not list((tmp_path / "h5").glob(".vx/*/cache/*.tar.zst")), "local: writes nothing"


def test_a_server_killed_mid_run_leaves_the_run_green_with_one_notice(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files())
    with turbo_server(tmp_path / "storage") as server:
        first = clone(origin, tmp_path / "one")
        run_vx(["run", "a#build"], first, env=env_for(server.url), home=tmp_path / "h1").assert_ok()
        second = clone(origin, tmp_path / "two")
        env = env_for(server.url, KILL_SERVER_PID=str(server.proc.pid))
        result = run_vx(["run", "b#boom", "c#build", "--output-logs=full", "--concurrency=1"],
                        second, env=env, home=tmp_path / "h2").assert_ok()  # fmt: skip
        assert server.proc.wait(timeout=30) != 0
    assert outcomes(result) == {
        "a#build": "restored-remote",
        "b#build": "success",
        "b#boom": "success",
        "c#build": "success",
    }
    [notice] = notices(result)
    assert notice.endswith(
        "— the run goes on with the local cache (further remote errors are not shown)"
    )
    assert (second / "packages/c/dist/out.txt").read_text() == "c\n"


@pytest.mark.parametrize("mode", ["500", "truncate", "tamper"])
def test_a_server_answering_badly_is_a_miss(tmp_path: Path, mode: str) -> None:
    origin = make_git_workspace(tmp_path / "origin", files())
    with turbo_server(tmp_path / "storage") as server:
        first = clone(origin, tmp_path / "one")
        run = ["run", "build", "--all", "--output-logs=full"]
        run_vx(run, first, env=env_for(server.url), home=tmp_path / "h1").assert_ok()
        proxy = FaultProxy(server.url, mode)
        try:
            second = clone(origin, tmp_path / "two")
            result = run_vx(run, second, env=env_for(proxy.url), home=tmp_path / "h2").assert_ok()
        finally:
            proxy.close()
    assert proxy.broken > 0 or mode == "500", "the proxy broke no download"
    assert set(outcomes(result).values()) == {"success"}
    for name, (mode_bits, data) in outputs(second).items():
        if not name.endswith("blob.bin"):
            assert outputs(first)[name] == (mode_bits, data)
    if mode == "tamper":
        refused = [line for line in result.err.splitlines() if "was refused" in line]
        assert len(refused) == 3
        assert all("its SHA-256 does not match its content" in line for line in refused)
    else:
        assert len(notices(result)) == 1
    assert_no_token(tmp_path, result)


def hostile_archive(member: str) -> bytes:
    """A vx-format `.tar.zst` whose one member escapes the project."""
    import io
    import tarfile

    import zstandard

    out = io.BytesIO()
    with (
        zstandard.ZstdCompressor().stream_writer(out, closefd=False) as z,
        tarfile.open(fileobj=z, mode="w|", format=tarfile.PAX_FORMAT,
                     pax_headers={"VX.format": "1"}) as tar,
    ):  # fmt: skip
        info = tarfile.TarInfo(member)
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    return out.getvalue()


@pytest.mark.parametrize("manifest", ["honest", "empty"])
def test_a_hostile_archive_in_an_honest_envelope_is_never_restored(
    tmp_path: Path, manifest: str
) -> None:
    """An envelope anyone can seal (its SHA-256, key and digests all true) around an archive
    whose member escapes: the restore's validator refuses it before a byte lands, the task
    runs, and its upload replaces the entry. `honest` keeps the real entry's manifest (the
    member is refused as it is read); `empty` claims no outputs (the archive is read whole
    before the empty outputs may count as restored)."""
    import xxhash

    from vx.cache.manifest import ArtifactInfo
    from vx.cache.remote.envelope import pack, unpack
    from vx.cache.remote.turbo import TurboCache, TurboConfig

    origin = make_git_workspace(tmp_path / "origin", files())
    run = ["run", "build", "--all", "--output-logs=full"]
    with turbo_server(tmp_path / "storage") as server:
        env = env_for(server.url)
        first = clone(origin, tmp_path / "one")
        run_vx(run, first, env=env, home=tmp_path / "h1").assert_ok()
        plan = run_vx([*run, "--dry=json"], first, env=env, home=tmp_path / "h1").assert_ok()
        key = {t["id"]: t["hash"] for t in plan.json()["tasks"]}["a#build"]
        client = TurboCache(TurboConfig(server.url, TOKEN, TEAM))
        real = unpack(client.fetch(key) or b"", key)
        art = hostile_archive("../../escape.txt")
        info = ArtifactInfo(
            len(art),
            xxhash.xxh3_64_hexdigest(art),
            real.info.manifest if manifest == "honest" else (),
        )
        fields = real._asdict()
        for name in ("key", "artifact", "info"):
            del fields[name]
        client.store(key, pack(key, artifact=art, info=info, **fields), duration_ms=1.0)
        second = clone(origin, tmp_path / "two")
        result = run_vx(run, second, env=env, home=tmp_path / "h2").assert_ok()
        third = clone(origin, tmp_path / "three")
        healed = run_vx(run, third, env=env, home=tmp_path / "h3").assert_ok()
    assert outcomes(result) == {
        "a#build": "success",
        "b#build": "restored-remote",
        "c#build": "restored-remote",
    }
    assert list(tmp_path.rglob("escape.txt")) == []
    assert [line for line in result.err.splitlines() if key in line] == [
        f"[vx] a#build: cache entry {key} is unreadable; running it"
    ]
    assert (second / "packages/a/dist/out.txt").read_text() == "a\n"
    assert set(outcomes(healed).values()) == {"restored-remote"}, "a's upload replaced it"
    assert outputs(third)["packages/a/dist/out.txt"] == outputs(second)["packages/a/dist/out.txt"]


def test_a_bad_signature_is_a_miss(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files())
    with turbo_server(tmp_path / "storage", signature_key="server-side") as server:
        run = ["run", "build", "--all", "--output-logs=full"]
        first = clone(origin, tmp_path / "one")
        signed = env_for(server.url, TURBO_REMOTE_CACHE_SIGNATURE_KEY="k1")
        run_vx(run, first, env=signed, home=tmp_path / "h1").assert_ok()
        second = clone(origin, tmp_path / "two")
        good = run_vx(run, second, env=signed, home=tmp_path / "h2").assert_ok()
        third = clone(origin, tmp_path / "three")
        other = env_for(server.url, TURBO_REMOTE_CACHE_SIGNATURE_KEY="k2")
        bad = run_vx(run, third, env=other, home=tmp_path / "h3").assert_ok()
    assert set(outcomes(good).values()) == {"restored-remote"}
    assert set(outcomes(bad).values()) == {"success"}
    refused = [line for line in bad.err.splitlines() if "was refused" in line]
    assert len(refused) == 3
    assert all("its signature does not match (x-artifact-tag)" in line for line in refused)
    assert "k1" not in bad.err
    assert "k2" not in bad.err
    short = [line for line in good.err.splitlines() if "SIGNATURE_KEY" in line]
    assert short == [
        (
            "[vx] plugin 'vx-turbo': TURBO_REMOTE_CACHE_SIGNATURE_KEY is 2 bytes: a key under 32"
            " bytes is weak against guessing — use a longer random one"
        )
    ]


def test_without_a_token_the_run_is_local_and_says_so(tmp_path: Path) -> None:
    ws = make_git_workspace(tmp_path / "ws", files())
    result = run_vx(["run", "a#build"], ws, env={"TURBO_API": "http://127.0.0.1:9"},
                    home=tmp_path / "h").assert_ok()  # fmt: skip
    assert (
        "[vx] plugin 'vx-turbo' supplies no remote cache this run: TURBO_TOKEN is not set"
        in result.err
    )


def test_a_refused_token_is_told_once_without_the_token(tmp_path: Path) -> None:
    origin = make_git_workspace(tmp_path / "origin", files())
    wrong = "wrong-9c1d7e"
    with turbo_server(tmp_path / "storage") as server:
        env = {**env_for(server.url), "TURBO_TOKEN": wrong}
        result = run_vx(["run", "build", "--all", "--output-logs=full"], origin, env=env,
                        home=tmp_path / "h").assert_ok()  # fmt: skip
    assert set(outcomes(result).values()) == {"success"}
    [notice] = notices(result)
    assert "the server refused the token (HTTP 401) — check TURBO_TOKEN and TURBO_TEAM" in notice
    assert wrong not in result.out + result.err
