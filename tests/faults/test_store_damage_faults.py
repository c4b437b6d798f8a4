"""Bit rot in the store, and eight runs sharing one store at once.

Rot: random bytes (seeded) flipped in an artifact or in `cache.db`; each run after it is right
(a hit restores the exact bytes, or the task runs again) and prints no stack. Sharing: eight
checkouts of one repository run at once against the one store every clone of it shares; no
entry is lost and no run meets a locked database.
"""

from __future__ import annotations

import json
import random
import shutil
from typing import TYPE_CHECKING

import pytest
from tests.conftest import git
from tests.e2e.cachews import default_store, entry_keys, tree_bytes
from tests.e2e.test_cache_faults import JSON, clone, integrity, statuses_of
from tests.faults.faultws import salted_outputs, salted_workspace, start

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.faults

PACKAGES = 3
FLIPS = 10  # damaged stores per kind (artifacts, index)


def flip(path: Path, rng: random.Random, count: int, *, start_at: int = 0) -> None:
    data = bytearray(path.read_bytes())
    for _ in range(count):
        at = rng.randrange(min(start_at, len(data) - 1), len(data))
        data[at] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


def run(root: Path, home: Path, store: Path) -> tuple[int, bytes, str]:
    args = ["run", "build", "--all", "--cache-dir", str(store), "--output-logs=none", *JSON]
    proc = start(args, root, home, {"SALT": "rot"}, pipe=True)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err.decode()


@pytest.mark.parametrize("target", ["artifact", "index"])
def test_bit_rot_in_the_store_never_gives_a_wrong_result(tmp_path, target):
    root = tmp_path / "ws"
    blobs = salted_workspace(root, PACKAGES)
    home = tmp_path / "home"
    pristine = tmp_path / "pristine"
    code, _, err = run(root, home, pristine)
    assert code == 0, err
    want = {name: salted_outputs(blob, name, "rot") for name, blob in blobs.items()}
    rng = random.Random(41 if target == "artifact" else 43)  # noqa: S311
    wrong: list[str] = []
    for trial in range(FLIPS):
        store = tmp_path / f"rot-{trial}"
        shutil.copytree(pristine, store)
        if target == "artifact":
            victim = rng.choice(sorted(store.glob("*.tar.zst")))
            flip(victim, rng, rng.choice((1, 2, 8, 64)))
        else:
            # Past the 100-byte header now and then, so pages as well as the header rot.
            flip(store / "cache.db", rng, rng.choice((1, 4, 32)), start_at=rng.choice((0, 100)))
        for attempt in ("damaged", "after"):
            for name in blobs:
                shutil.rmtree(root / "packages" / name / "dist", ignore_errors=True)
            code, out, err = run(root, home, store)
            label = f"{target} trial {trial} ({attempt})"
            if "Traceback" in err or code != 0:
                wrong.append(f"{label}: exit {code}: {err[-400:]}")
                break
            if set(statuses_of(out).values()) - {"success", "cache-hit"}:
                wrong.append(f"{label}: {statuses_of(out)}")
            wrong.extend(
                f"{label}: {name}'s outputs differ"
                for name in blobs
                if tree_bytes(root / "packages" / name / "dist") != want[name]
            )
        shutil.rmtree(store)
    print(f"bit rot in {target}s: {FLIPS} damaged stores, {2 * FLIPS} runs, wrong: {len(wrong)}")
    assert wrong == []


CHECKOUTS = 8
SHARED = 4


def test_eight_checkouts_sharing_one_store_lose_no_entry(tmp_path):
    """Every checkout edits one package of its own, so each run saves shared and own entries."""
    root = tmp_path / "ws"
    salted_workspace(root, SHARED + CHECKOUTS)
    home = tmp_path / "home"
    checkouts = []
    for i in range(CHECKOUTS):
        checkout = clone(root, tmp_path / f"checkout-{i}")
        (checkout / f"packages/k{SHARED + i:02d}/src/name.txt").write_text(f"edited in {i}\n")
        git(checkout, "commit", "-qam", f"edit {i}")
        checkouts.append(checkout)
    args = ["run", "build", "--all", "--output-logs=none", *JSON]

    def all_at_once() -> list[tuple[int, bytes, str]]:
        procs = [start(args, c, home, {"SALT": "shared"}, pipe=True) for c in checkouts]
        done = [p.communicate(timeout=300) for p in procs]
        return [
            (p.returncode, out, err.decode()) for p, (out, err) in zip(procs, done, strict=True)
        ]

    reported: set[str] = set()
    problems: list[str] = []
    for code, out, err in all_at_once():
        if code != 0 or "database is locked" in err or "not saved" in err or "Traceback" in err:
            problems.append(f"exit {code}: {err[-400:]}")
            continue
        reported |= {row["hash"] for row in json.loads(out)["tasks"]}
    store = default_store(home)
    lost = reported - entry_keys(store)
    print(
        f"{CHECKOUTS} concurrent runs on one store: {len(reported)} entries reported,"
        f" lost: {len(lost)}, runs with problems: {len(problems)}"
    )
    assert problems == []
    assert lost == set()
    assert len(reported) == SHARED + 2 * CHECKOUTS  # each edited package: as edited, and not
    assert integrity(store) == "ok"

    # Every entry restores: the same eight at once again, with no outputs on disk.
    for checkout in checkouts:
        for dist in checkout.glob("packages/*/dist"):
            shutil.rmtree(dist)
    for code, out, err in all_at_once():
        assert code == 0, err
        assert "database is locked" not in err
        assert set(statuses_of(out).values()) == {"cache-hit"}, err
    for checkout in checkouts:
        assert (checkout / "packages/k00/dist/salt.txt").read_bytes() == b"shared k00\n"
        edited = checkouts.index(checkout) + SHARED
        assert (
            (checkout / f"packages/k{edited:02d}/dist/sub/name.txt")
            .read_text()
            .startswith("edited")
        )
