"""The REAPI and Remote Workers messages remote execution sends and reads, by hand over protowire.

Field numbers are those of `build.bazel.remote.execution.v2` and
`google.devtools.remoteworkers.v1test2`; only the fields vx writes or reads are here, and
what a server adds is skipped on parsing as protobuf does.
"""

from __future__ import annotations

from vx.cache.remote import protowire as pw
from vx.cache.remote.reapi import Digest
from vx.util.record import Record

_TYPES = "type.googleapis.com/"
ACTION_TYPE = _TYPES + "build.bazel.remote.execution.v2.Action"
DIGEST_TYPE = _TYPES + "build.bazel.remote.execution.v2.Digest"
RESULT_TYPE = _TYPES + "build.bazel.remote.execution.v2.ActionResult"
RESPONSE_TYPE = _TYPES + "build.bazel.remote.execution.v2.ExecuteResponse"

LEASE_PENDING, LEASE_ACTIVE, LEASE_COMPLETED = 1, 2, 4
BOT_OK = 1


def any_of(type_url: str, value: bytes) -> bytes:
    """A `google.protobuf.Any` wrapping an encoded message."""
    return pw.message([(1, type_url), (2, value)])


def unpack_any(data: bytes) -> tuple[str, bytes]:
    fields = pw.parse(data)
    return pw.first_bytes(fields, 1).decode(), pw.first_bytes(fields, 2)


class Command(Record):
    """`sh -c <command>` run in `cwd` (relative to the input root) with exactly `env`."""

    arguments: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str
    output_paths: tuple[str, ...]

    def encode(self) -> bytes:
        fields: list[pw.Field] = [(1, a) for a in self.arguments]
        fields += [(2, pw.message([(1, k), (2, v)])) for k, v in sorted(self.env)]
        fields += [(6, self.cwd), *((7, p) for p in sorted(self.output_paths))]
        return pw.message(fields)

    @staticmethod
    def decode(data: bytes) -> Command:
        fields = pw.parse(data)
        env = []
        for raw in fields.get(2, ()):
            if isinstance(raw, bytes):
                pair = pw.parse(raw)
                env.append((pw.first_bytes(pair, 1).decode(), pw.first_bytes(pair, 2).decode()))
        return Command(
            arguments=_strings(fields, 1),
            env=tuple(env),
            cwd=pw.first_bytes(fields, 6).decode(),
            output_paths=_strings(fields, 7),
        )


class Action(Record):
    """What to run (a Command's digest), on what (the input root's), within how long."""

    command: Digest
    input_root: Digest
    timeout_s: int = 0

    def encode(self) -> bytes:
        timeout = pw.message([(1, self.timeout_s)]) if self.timeout_s else None
        return pw.message([(1, self.command.encode()), (2, self.input_root.encode()), (6, timeout)])

    @staticmethod
    def decode(data: bytes) -> Action:
        fields = pw.parse(data)
        timeout = pw.first_bytes(fields, 6)
        return Action(
            command=Digest.decode(pw.first_bytes(fields, 1)),
            input_root=Digest.decode(pw.first_bytes(fields, 2)),
            timeout_s=pw.first_int(pw.parse(timeout), 1) if timeout else 0,
        )


class FileEntry(Record):
    """A file of a Directory: its name there, its content's digest, the executable bit."""

    name: str
    digest: Digest
    executable: bool = False


class Directory(Record):
    """One directory level: files, subdirectories by digest, and symlinks kept as symlinks."""

    files: tuple[FileEntry, ...] = ()
    dirs: tuple[tuple[str, Digest], ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()

    def encode(self) -> bytes:
        """REAPI's canonical form: each kind of node sorted by name."""
        fields: list[pw.Field] = [
            (1, pw.message([(1, f.name), (2, f.digest.encode()), (4, f.executable)]))
            for f in sorted(self.files, key=lambda f: f.name)
        ]
        fields += [(2, pw.message([(1, n), (2, d.encode())])) for n, d in sorted(self.dirs)]
        fields += [(3, pw.message([(1, n), (2, t)])) for n, t in sorted(self.symlinks)]
        return pw.message(fields)

    @staticmethod
    def decode(data: bytes) -> Directory:
        fields = pw.parse(data)
        files, dirs, links = [], [], []
        for raw in _messages(fields, 1):
            node = pw.parse(raw)
            digest = Digest.decode(pw.first_bytes(node, 2))
            files.append(FileEntry(_name(node), digest, bool(pw.first_int(node, 4))))
        for raw in _messages(fields, 2):
            node = pw.parse(raw)
            dirs.append((_name(node), Digest.decode(pw.first_bytes(node, 2))))
        for raw in _messages(fields, 3):
            node = pw.parse(raw)
            links.append((_name(node), pw.first_bytes(node, 2).decode()))
        return Directory(tuple(files), tuple(dirs), tuple(links))


class ActionResult(Record):
    """How an action ended: its exit code, output files and trees, and its logs."""

    exit_code: int
    files: tuple[tuple[str, Digest, bool], ...] = ()
    trees: tuple[tuple[str, Digest], ...] = ()
    stdout: Digest | None = None
    stderr: Digest | None = None

    def encode(self) -> bytes:
        fields: list[pw.Field] = [
            (2, pw.message([(1, p), (2, d.encode()), (4, x)])) for p, d, x in self.files
        ]
        fields += [(3, pw.message([(1, p), (3, d.encode())])) for p, d in self.trees]
        fields.append((4, self.exit_code))
        if self.stdout is not None:
            fields.append((6, self.stdout.encode()))
        if self.stderr is not None:
            fields.append((8, self.stderr.encode()))
        return pw.message(fields)

    @staticmethod
    def decode(data: bytes) -> ActionResult:
        fields = pw.parse(data)
        files = []
        for raw in _messages(fields, 2):
            node = pw.parse(raw)
            digest = Digest.decode(pw.first_bytes(node, 2))
            files.append((_name(node), digest, bool(pw.first_int(node, 4))))
        trees = []
        for raw in _messages(fields, 3):
            node = pw.parse(raw)
            trees.append((_name(node), Digest.decode(pw.first_bytes(node, 3))))
        out, err = pw.first_bytes(fields, 6), pw.first_bytes(fields, 8)
        exit_code = pw.first_int(fields, 4)
        return ActionResult(
            exit_code=exit_code - (1 << 32) if exit_code >= 1 << 31 else exit_code,
            files=tuple(files),
            trees=tuple(trees),
            stdout=Digest.decode(out) if out else None,
            stderr=Digest.decode(err) if err else None,
        )


def encode_tree(root: Directory, children: list[Directory]) -> bytes:
    """An output directory's `Tree`: its root and every directory below it."""
    return pw.message([(1, root.encode()), *((2, c.encode()) for c in children)])


def decode_tree(data: bytes) -> tuple[Directory, dict[Digest, Directory]]:
    """A Tree's root and its children by digest (how the root's nodes name them)."""
    fields = pw.parse(data)
    children = {Digest.of(raw): Directory.decode(raw) for raw in _messages(fields, 2)}
    return Directory.decode(pw.first_bytes(fields, 1)), children


def lease_message(lease_id: str, state: int, payload: bytes, result: bytes | None) -> bytes:
    """A Lease as a bot reports it back; `result` is an Any, None while still running."""
    return pw.message([(2, state), (7, lease_id), (8, payload), (9, result)])


class Lease(Record):
    """A lease the server handed a bot: its id, state and payload (an Any)."""

    id: str
    state: int
    payload: bytes

    @staticmethod
    def decode(data: bytes) -> Lease:
        fields = pw.parse(data)
        return Lease(
            pw.first_bytes(fields, 7).decode(),
            pw.first_int(fields, 2),
            pw.first_bytes(fields, 8),
        )


def bot_session(name: str, bot_id: str, leases: list[bytes]) -> bytes:
    """A BotSession as the bot sends it: healthy, with the leases it holds."""
    return pw.message([(1, name), (2, bot_id), (3, BOT_OK), *((5, lease) for lease in leases)])


def parse_session(data: bytes) -> tuple[str, list[Lease]]:
    """The session's name and the leases the server put in it."""
    fields = pw.parse(data)
    return pw.first_bytes(fields, 1).decode(), [Lease.decode(raw) for raw in _messages(fields, 5)]


def _messages(fields: dict[int, list[int | bytes]], number: int) -> list[bytes]:
    return [raw for raw in fields.get(number, ()) if isinstance(raw, bytes)]


def _strings(fields: dict[int, list[int | bytes]], number: int) -> tuple[str, ...]:
    return tuple(raw.decode() for raw in _messages(fields, number))


def _name(node: dict[int, list[int | bytes]]) -> str:
    return pw.first_bytes(node, 1).decode()
