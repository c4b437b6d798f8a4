"""The only module that runs git: a pinned environment, one call per question, one-line refusals.

Paths come back relative to the workspace root, which may sit below the repository's top level:
`git status` always names paths from the top, so every listing is taken with `--full-name` and
the root's prefix is stripped. Output is read with `-z` and decoded with the file system's
encoding, so names holding spaces, newlines or undecodable bytes survive the round trip.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from vx.errors import ErrorCode, UserError
from vx.util.record import Frozen, Record

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable, Mapping, Sequence

# Fixed so that output never depends on the user's locale, pager or a lock another git holds:
# GIT_OPTIONAL_LOCKS=0 keeps `git status` from rewriting the index behind an editor's back.
_PINNED_ENV = {
    "LC_ALL": "C",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}

GITLINK_MODE = "160000"
GITLINK = b"160000"
STATUS_ARGS = ("status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")


class GitError(UserError):
    """git is missing or cannot answer for the workspace root; `root` is the directory asked."""

    def __init__(self, message: str, root: Path | None = None) -> None:
        super().__init__(ErrorCode.REFUSED, message)
        self.root = root


class IndexEntry(Record):
    """One stage-0 index entry: git's octal mode (`100644`, `100755`, `120000`, `160000`) and id."""

    mode: str
    blob: str


class StatusSnapshot(Record):
    """How the work tree differs from the index, root-relative.

    `modified` holds every path whose work-tree bytes or mode may differ from its index entry
    (edited, type-changed, intent-to-add, unmerged): those must be read. `deleted` holds index
    paths gone from the work tree. `untracked` holds files git would add, never ignored ones.
    `renames` maps a staged rename's new path to its old one. `raw` is git's own answer, which
    the warm path compares byte for byte instead of parsing it again. `nested` holds untracked
    embedded repositories, which git lists as one directory (`vendor/nested/`, slash dropped).
    """

    modified: frozenset[str] = frozenset()
    deleted: frozenset[str] = frozenset()
    untracked: frozenset[str] = frozenset()
    renames: Mapping[str, str] = MappingProxyType({})
    raw: bytes = b""
    nested: frozenset[str] = frozenset()


class GitSnapshot(Frozen):
    """What one run knows of git: taken once, by three git processes, before any key is derived.

    `prefix` is the workspace root's path below the repository's top level (`""` or `"a/b/"`).
    `git_dir` and `common_dir` (absolute) and `shallow` come from the same rev-parse, so the
    branch and the repository's identity cost no further git process on a warm run. Frozen by
    hand: a `__slots__` class is free to define, where a frozen dataclass costs the warm path.
    """

    __slots__ = ("common_dir", "git_dir", "head", "index", "prefix", "root", "shallow", "status")

    def __init__(
        self,
        root: Path,
        prefix: str,
        head: str,
        index: Mapping[str, IndexEntry],
        status: StatusSnapshot,
        git_dir: Path = Path(".git"),
        common_dir: Path = Path(".git"),
        shallow: bool = False,
    ) -> None:
        self._init(
            root=root,
            prefix=prefix,
            head=head,
            index=index,
            status=status,
            git_dir=git_dir,
            common_dir=common_dir,
            shallow=shallow,
        )

    root: Path
    prefix: str
    head: str
    index: Mapping[str, IndexEntry]
    status: StatusSnapshot
    git_dir: Path
    common_dir: Path
    shallow: bool


class _Where(Record):
    prefix: str
    head: str | None
    git_dir: Path
    common_dir: Path
    shallow: bool


def snapshot(root: Path, *, env: Mapping[str, str] | None = None) -> GitSnapshot:
    """The index and the work tree's state under `root`: one rev-parse, ls-files and status."""
    where = _locate(root, env)
    head = _require_head(root, where)
    index = _ls_files(root, where.prefix, env)
    return _assemble(root, where, head, index, _status(root, where.prefix, env))


def start_snapshot(
    root: Path, *, env: Mapping[str, str] | None = None
) -> Callable[[], GitSnapshot]:
    """`snapshot(root)` begun: `git ls-files` and `git status` run side by side, writing into
    memory files, while the caller goes on; the returned function waits for them and reads
    the answer. Where memory files do not exist, it is the snapshot taken there and then."""
    if not hasattr(os, "memfd_create"):
        taken = snapshot(root, env=env)
        return lambda: taken
    where = _locate(root, env)
    head = _require_head(root, where)
    listing = _Background(root, LS_FILES_ARGS, env)
    try:
        changes = _Background(root, STATUS_ARGS, env)
    except BaseException:
        listing.result()
        raise

    def finish() -> GitSnapshot:
        listed, changed = listing.result(), changes.result()  # both reaped before any check
        index = _index_entries(root, where.prefix, listed)
        return _assemble(root, where, head, index, _status_of(root, where.prefix, changed))

    return finish


def _assemble(
    root: Path, where: _Where, head: str, index: dict[str, IndexEntry], status: StatusSnapshot
) -> GitSnapshot:
    return GitSnapshot(
        root=root,
        prefix=where.prefix,
        head=head,
        index=index,
        status=status,
        git_dir=where.git_dir,
        common_dir=where.common_dir,
        shallow=where.shallow,
    )


class _Background:
    """One git process writing into memory files, so it never waits on a pipe nobody reads."""

    __slots__ = ("_args", "_err", "_out", "_proc")

    def __init__(self, root: Path, args: tuple[str, ...], env: Mapping[str, str] | None) -> None:
        import subprocess

        self._args = ["git", "--no-pager", *args]
        self._out = os.memfd_create("vx-git-out", os.MFD_CLOEXEC)
        try:
            self._err = os.memfd_create("vx-git-err", os.MFD_CLOEXEC)
        except OSError:
            os.close(self._out)
            raise
        base = os.environ if env is None else env
        try:
            self._proc = subprocess.Popen(
                self._args,
                cwd=root,
                env={**base, **_PINNED_ENV},
                stdout=self._out,
                stderr=self._err,
            )
        except OSError as exc:
            self._close()
            raise _spawn_error(exc, root) from None

    def result(self) -> subprocess.CompletedProcess[bytes]:
        """Wait for git and read what it wrote; the memory files are gone after."""
        import subprocess

        try:
            try:
                code = self._proc.wait()
            except BaseException:  # a Ctrl-C while git works: it goes too, and is reaped
                self._proc.kill()
                self._proc.wait()
                raise
            return subprocess.CompletedProcess(
                self._args, code, _read_all(self._out), _read_all(self._err)
            )
        finally:
            self._close()

    def _close(self) -> None:
        for fd in (self._out, self._err):
            with contextlib.suppress(OSError):
                os.close(fd)


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, size, 0) if size else b""


def head_branch(snap: GitSnapshot) -> str | None:
    """The checked-out branch, read from the work tree's HEAD file; None when detached."""
    try:
        text = (snap.git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    ref = text.removeprefix("ref: ")
    if ref == text or not ref.startswith("refs/heads/"):
        return None
    return ref.removeprefix("refs/heads/")


def root_commits(snap: GitSnapshot, *, env: Mapping[str, str] | None = None) -> str:
    """`repo_identity` for a snapshot already taken: at most one more git process (rev-list)."""
    return _identity(snap.root, shallow=snap.shallow, common_dir=snap.common_dir, env=env)


def ls_files_stage(root: Path, *, env: Mapping[str, str] | None = None) -> dict[str, IndexEntry]:
    """Every stage-0 index entry under `root`, by root-relative path."""
    return _ls_files(root, _locate(root, env).prefix, env)


def status(root: Path, *, env: Mapping[str, str] | None = None) -> StatusSnapshot:
    """The work tree's differences from the index under `root`."""
    return _status(root, _locate(root, env).prefix, env)


def head(root: Path, *, env: Mapping[str, str] | None = None) -> str:
    """The commit HEAD names; a repository with no commit is refused."""
    return _require_head(root, _locate(root, env))


def branch(root: Path, *, env: Mapping[str, str] | None = None) -> str | None:
    """The checked-out branch's short name, or None on a detached HEAD."""
    _locate(root, env)
    proc = _git(root, ("symbolic-ref", "-q", "--short", "HEAD"), env)
    if proc.returncode == 1:
        return None
    _check(root, "symbolic-ref", proc)
    return os.fsdecode(proc.stdout).strip() or None


def repo_identity(root: Path, *, env: Mapping[str, str] | None = None) -> str:
    """A name every clone and worktree of one repository shares, for a shared cache store.

    It is the root commit(s) of HEAD's history (`root:<id>[,<id>]`). A repository with no
    commit, or a shallow clone whose oldest commit is only a graft point that moves as the clone
    deepens, falls back to its common git dir (`dir:<realpath>`), shared by its worktrees only.
    """
    _locate(root, env)
    proc = _git(root, ("rev-parse", "--is-shallow-repository", "--git-common-dir"), env)
    _check(root, "rev-parse", proc)
    shallow, common = os.fsdecode(proc.stdout).rstrip("\n").split("\n", 1)
    return _identity(root, shallow=shallow == "true", common_dir=root / common, env=env)


def _identity(root: Path, *, shallow: bool, common_dir: Path, env: Mapping[str, str] | None) -> str:
    """The one algorithm behind `repo_identity` and `root_commits`."""
    if not shallow:
        roots = _git(root, ("rev-list", "--max-parents=0", "HEAD"), env)
        ids = sorted(os.fsdecode(roots.stdout).split())
        if roots.returncode == 0 and ids:
            return "root:" + ",".join(ids)
    return "dir:" + os.path.realpath(common_dir)


def resolve_commit(root: Path, ref: str, *, env: Mapping[str, str] | None = None) -> str:
    """The commit (or tree) `ref` names, or a one-line refusal (saying why in a shallow clone).

    The caller has already refused option-like refs: `--end-of-options` only keeps git from
    reading one as a flag a second time.
    """
    where = _locate(root, env)
    _require_head(root, where)
    peeled = ref if ref.endswith("^{tree}") else ref + "^{commit}"  # a root tree is a base too
    proc = _git(root, ("rev-parse", "--verify", "-q", "--end-of-options", peeled), env)
    if proc.returncode == 0:
        return os.fsdecode(proc.stdout).strip()
    if proc.returncode != 1:
        _check(root, "rev-parse", proc)
    message = f'git ref "{ref}" did not resolve'
    if where.shallow:
        message += (
            " — this clone is shallow, so older history and other branches may be missing:"
            " git fetch --unshallow (in CI: fetch-depth: 0)"
        )
    raise GitError(message, root)


def merge_base(root: Path, a: str, b: str, *, env: Mapping[str, str] | None = None) -> str | None:
    """The best common ancestor of two commits; None when their histories never meet."""
    proc = _git(root, ("merge-base", a, b), env)
    if proc.returncode == 1:
        return None
    _check(root, "merge-base", proc)
    return os.fsdecode(proc.stdout).strip() or None


def diff_names(root: Path, base: str, *, env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Root-relative paths that differ between commit `base` and the work tree, both sides of a
    rename included; untracked files are `status`'s business."""
    return frozenset(diff_raw(root, base, env=env))


def diff_raw(root: Path, base: str, *, env: Mapping[str, str] | None = None) -> dict[str, bool]:
    """Root-relative paths that differ between commit `base` and the work tree, each marked
    True when a side is a gitlink (a submodule: git names it as one path).

    Submodules are always compared, whatever `diff.ignoreSubmodules` says: a key sees them.
    """
    where = _locate(root, env)
    args = ("diff", "--raw", "--no-relative", "-z", "--no-renames", "--ignore-submodules=none")
    proc = _git(root, (*args, "--no-abbrev", base, "--", "."), env)
    _check(root, "diff", proc)
    found: dict[str, bool] = {}
    tokens = iter(proc.stdout.split(b"\0"))
    for meta in tokens:
        if not meta.startswith(b":"):
            continue
        path = _relative(next(tokens, b""), where.prefix)
        if path is not None:
            old_mode, new_mode = meta[1:].split(b" ", 2)[:2]
            found[path] = found.get(path, False) or GITLINK in (old_mode, new_mode)
    return found


def try_commit(root: Path, ref: str, *, env: Mapping[str, str] | None = None) -> str | None:
    """The commit `ref` names, None when it names none here (a default base that is absent)."""
    proc = _git(root, ("rev-parse", "--verify", "-q", "--end-of-options", ref + "^{commit}"), env)
    return os.fsdecode(proc.stdout).strip() or None if proc.returncode == 0 else None


def is_shallow(root: Path, *, env: Mapping[str, str] | None = None) -> bool:
    """Whether the clone holding `root` is shallow (CI's one-commit checkout)."""
    return _locate(root, env).shallow


def check_ignore(
    root: Path, paths: Iterable[str], *, env: Mapping[str, str] | None = None
) -> frozenset[str]:
    """Which of the root-relative `paths` git ignores, in one `git check-ignore --stdin` call.

    A tracked path is never ignored (git's own rule, without `--no-index`); outside a work
    tree, or when git cannot answer, nothing is.
    """
    asked = [p for p in paths if p]
    if not asked:
        return frozenset()
    import subprocess  # as `_git`: only a caller that asks pays for it

    base = os.environ if env is None else env
    feed = b"".join(os.fsencode(p) + b"\0" for p in asked)
    try:
        proc = subprocess.run(
            ["git", "--no-pager", "check-ignore", "--stdin", "-z"],
            cwd=root,
            env={**base, **_PINNED_ENV},
            input=feed,
            capture_output=True,
            check=False,
        )
    except OSError:
        return frozenset()
    if proc.returncode not in (0, 1):
        return frozenset()
    return frozenset(os.fsdecode(p) for p in proc.stdout.split(b"\0") if p)


def show_file(
    root: Path, commit: str, path: str, *, env: Mapping[str, str] | None = None
) -> bytes | None:
    """The bytes root-relative `path` held at `commit`, None when it was not there."""
    where = _locate(root, env)
    proc = _git(root, ("show", "--end-of-options", f"{commit}:{where.prefix}{path}"), env)
    return proc.stdout if proc.returncode == 0 else None


def common_dir(root: Path, *, env: Mapping[str, str] | None = None) -> Path:
    """The git dir every worktree of the repository shares (what names its shared store)."""
    return _locate(root, env).common_dir


def version(root: Path, *, env: Mapping[str, str] | None = None) -> str | None:
    """`git --version`'s number (`2.43.0`); None when git cannot be run."""
    try:
        proc = _git(root, ("--version",), env)
    except GitError:
        return None
    words = os.fsdecode(proc.stdout).split()
    return words[2] if proc.returncode == 0 and len(words) >= 3 else None


def config_flag(root: Path, name: str, *, env: Mapping[str, str] | None = None) -> bool | None:
    """Whether a `git config` setting is on here (`core.fsmonitor` may also name a hook,
    which is on); False when unset, None when git could not answer."""
    try:
        proc = _git(root, ("config", "--get", name), env)
    except GitError:
        return None
    if proc.returncode == 1:
        return False
    if proc.returncode != 0:
        return None
    return os.fsdecode(proc.stdout).strip().lower() not in ("", "false", "no", "off", "0")


def ignores_all(root: Path, rel: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Whether git ignores every file under `rel` (relative to `root`): it tracks none and
    would track none, as a leftover build directory. False outside a repository or without
    git, where nothing says the files are disposable."""
    args = ("ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", rel)
    try:
        proc = _git(root, args, env)
    except GitError:
        return False
    return proc.returncode == 0 and not proc.stdout


def _locate(root: Path, env: Mapping[str, str] | None) -> _Where:
    args = (
        "rev-parse",
        "--is-inside-work-tree",
        "--show-prefix",
        "--git-dir",
        "--git-common-dir",
        "--is-shallow-repository",
        "--verify",
        "-q",
        "HEAD",
    )
    proc = _git(root, args, env)
    lines = os.fsdecode(proc.stdout).split("\n")
    in_work_tree = proc.returncode in (0, 1) and lines[0] == "true"
    if not in_work_tree:
        if proc.returncode in (0, 1) or b"not a git repository" in proc.stderr:
            raise GitError(f"vx requires git: {root} is not inside a git work tree", root)
        _check(root, "rev-parse", proc)
    # `--verify -q` exits 1, after printing the rest, when HEAD names no commit yet.
    head = lines[5] if proc.returncode == 0 else None
    return _Where(
        prefix=lines[1],
        head=head,
        git_dir=root / lines[2],
        common_dir=root / lines[3],
        shallow=lines[4] == "true",
    )


def _require_head(root: Path, where: _Where) -> str:
    if where.head is None:
        raise GitError(
            f"vx requires git: {root} is a git repository with no commit yet"
            " — commit once and re-run",
            root,
        )
    return where.head


LS_FILES_ARGS = ("ls-files", "-s", "-z", "--full-name", "--", ".")


def _ls_files(root: Path, prefix: str, env: Mapping[str, str] | None) -> dict[str, IndexEntry]:
    return _index_entries(root, prefix, _git(root, LS_FILES_ARGS, env))


def _index_entries(
    root: Path, prefix: str, proc: subprocess.CompletedProcess[bytes]
) -> dict[str, IndexEntry]:
    _check(root, "ls-files", proc)
    entries: dict[str, IndexEntry] = {}
    for record in proc.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, blob, stage = meta.decode("ascii").split(" ")
        path = _relative(raw_path, prefix)
        if stage == "0" and path is not None:
            entries[path] = IndexEntry(mode, blob)
    return entries


def _status(root: Path, prefix: str, env: Mapping[str, str] | None) -> StatusSnapshot:
    return _status_of(root, prefix, _git(root, STATUS_ARGS, env))


def _status_of(root: Path, prefix: str, proc: subprocess.CompletedProcess[bytes]) -> StatusSnapshot:
    _check(root, "status", proc)
    modified: set[str] = set()
    deleted: set[str] = set()
    untracked: set[str] = set()
    nested: set[str] = set()
    renames: dict[str, str] = {}
    tokens = iter(proc.stdout.split(b"\0"))
    for token in tokens:
        if len(token) < 4:
            continue
        x, y = chr(token[0]), chr(token[1])
        path = _relative(token[3:], prefix)
        orig = _relative(next(tokens, b""), prefix) if x in "RC" or y in "RC" else None
        if path is None:
            continue
        if x == "?":
            # An embedded repository is listed as a directory; it holds no file vx can hash.
            if not path.endswith("/"):
                untracked.add(path)
            else:
                nested.add(path.rstrip("/"))
        elif "U" in (x, y) or x + y in ("AA", "DD"):
            modified.add(path)
        elif y == "D":
            deleted.add(path)
        elif y != " ":
            modified.add(path)
        if orig is None:
            continue
        if x == "R":
            renames[path] = orig
        if y == "R":
            deleted.add(orig)
    return StatusSnapshot(
        modified=frozenset(modified),
        deleted=frozenset(deleted),
        untracked=frozenset(untracked),
        renames=MappingProxyType(renames),
        raw=proc.stdout,
        nested=frozenset(nested),
    )


def status_output(root: Path, env: Mapping[str, str]) -> Callable[[], bytes | None]:
    """`git status` as `snapshot` runs it, spawned now without `subprocess` (the warm path's
    only git process, and `import subprocess` alone costs more than the process): the
    returned function waits for it and gives its output, None on failure. The caller always
    calls it, so no git is left behind; the work between is what git's time is hidden by."""
    return _spawn(root, STATUS_ARGS, env)


def refs_output(root: Path, refs: Sequence[str], env: Mapping[str, str]) -> bytes | None:
    """What each of `refs` names now, one line each, in one process and without `subprocess`:
    the warm path's proof that an `--affected` base or a `[<ref>]` filter still names the
    commits it did. None on failure, or for a name git would read as two lines."""
    if any("\n" in ref or "\0" in ref for ref in refs):
        return None
    text = "".join(f"{ref}^{{commit}}\n" for ref in refs)
    return _spawn(root, ("cat-file", "--batch-check"), env, text.encode())()


def _spawn(
    root: Path, args: Sequence[str], env: Mapping[str, str], given: bytes = b""
) -> Callable[[], bytes | None]:
    """git started on `args` with `given` on its stdin; the returned function reads its stdout
    and reaps it: None when git failed or could not start.

    `given` must fit a pipe's buffer (64 KiB): it is written whole before stdout is read.
    """
    read, write = os.pipe()
    feed, fed = os.pipe()
    try:
        pid = os.posix_spawnp(
            "git",
            ["git", "--no-pager", "-C", str(root), *args],
            {**env, **_PINNED_ENV},
            file_actions=[
                (os.POSIX_SPAWN_DUP2, feed, 0),
                (os.POSIX_SPAWN_DUP2, write, 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_CLOSE, read),
                (os.POSIX_SPAWN_CLOSE, fed),
            ],
        )
    except OSError:
        for fd in (read, write, feed, fed):
            os.close(fd)
        return lambda: None
    os.close(write)
    os.close(feed)
    try:  # straight to the descriptor: a buffered file would flush (and fail) only at close
        view = memoryview(given)
        while view:
            view = view[os.write(fed, view) :]
    except BrokenPipeError:
        pass  # git left early; its status says how it went
    finally:
        os.close(fed)

    def collect() -> bytes | None:
        chunks = []
        with os.fdopen(read, "rb") as pipe:
            while chunk := pipe.read(1 << 16):
                chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None

    return collect


def _relative(raw: bytes, prefix: str) -> str | None:
    path = os.fsdecode(raw)
    if not path or not path.startswith(prefix):
        return None
    return path[len(prefix) :]


def _git(
    root: Path, args: tuple[str, ...], env: Mapping[str, str] | None
) -> subprocess.CompletedProcess[bytes]:
    import subprocess  # a warm run spawns its one git process without it

    base = os.environ if env is None else env
    try:
        return subprocess.run(
            ["git", "--no-pager", *args],
            cwd=root,
            env={**base, **_PINNED_ENV},
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise _spawn_error(exc, root) from None


def _spawn_error(exc: OSError, root: Path) -> GitError:
    """What a git that could not be started is told as: a missing git, or a missing dir."""
    if isinstance(exc, FileNotFoundError):
        if exc.filename not in (None, "git"):
            return GitError(f"vx requires git: {root} is not inside a git work tree", root)
        return GitError(
            "vx requires git: failed to spawn 'git' (not found on PATH) — install git and re-run",
            root,
        )
    return GitError(
        f"vx requires git: failed to spawn 'git' ({exc.strerror}) — install git and re-run", root
    )


def _check(root: Path, verb: str, proc: subprocess.CompletedProcess[bytes]) -> None:
    if proc.returncode == 0:
        return
    lines = os.fsdecode(proc.stderr).strip().splitlines()
    detail = lines[0] if lines else f"exit {proc.returncode}"
    raise GitError(f"vx requires git: `git {verb}` failed in {root}: {detail}", root)
