"""`cache.db`, its connection, schema and recovery, and the cache entries' SQL: entries, their
key components and logs. The run history's SQL is runlog.py's, mixed into the one `Index`."""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import threading
import time
from typing import TYPE_CHECKING

from vx.cache.indexrows import (
    damaged_schema,
    entry_from_row,
    primary_code,
)
from vx.cache.key import KeyComponent, Kind
from vx.cache.logblob import RottenLogError, pack, unpack
from vx.cache.runlog import RUN_SCHEMA, RunLog
from vx.errors import ErrorCode
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path

    from vx.cache.manifest import ArtifactInfo
    from vx.events import Stream

    Logs = Mapping[str, Iterable["LogChunk"]]
    """Logs by entry key; an entry whose log is empty is absent."""

SCHEMA_VERSION = 4
"""Bumping it resets every table on the next open (never the artifacts); `test_index` pins it."""

INDEX_NAME = "cache.db"
BUSY_TIMEOUT_MS = 10_000

_CORRUPT = frozenset({sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT})
_HELD_CHARS = 1 << 22
"""How much log text `entry_logs` keeps decoded in all; a log past that is read again."""

_SCHEMA = (
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE entries (
        key TEXT PRIMARY KEY, project TEXT NOT NULL, task TEXT NOT NULL,
        size INTEGER NOT NULL, digest TEXT NOT NULL,
        created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL,
        duration_ms REAL, cpu_ms REAL, peak_rss_bytes INTEGER, manifest TEXT NOT NULL,
        log_size INTEGER NOT NULL)""",
    """CREATE TABLE entry_inputs (
        key TEXT NOT NULL, seq INTEGER NOT NULL,
        kind TEXT NOT NULL, name TEXT NOT NULL, digest TEXT NOT NULL,
        PRIMARY KEY (key, seq))""",
    """CREATE TABLE entry_log (
        key TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (key, seq))""",
    *RUN_SCHEMA,
)


_ERRNO = {
    sqlite3.SQLITE_FULL: errno.ENOSPC,
    sqlite3.SQLITE_READONLY: errno.EROFS,
    sqlite3.SQLITE_BUSY: errno.EBUSY,
    sqlite3.SQLITE_PERM: errno.EACCES,
}


class IndexWriteError(OSError):
    """SQLite refused a write to the index: a full disk, a read-only file, a lock never freed.

    An OSError, so every caller that already survives the disk refusing an artifact (a save
    becomes one line, the history one notice) survives this the same way.
    """


class IndexOffError(IndexWriteError):
    """The index answers nothing for the rest of this run: it was found damaged, or the disk
    refused it when the run began. Reads are misses; writes raise this."""


def _refusal(path: Path, err: sqlite3.Error) -> IndexWriteError:
    code = _ERRNO.get(primary_code(err) or 0, errno.EIO)
    return IndexWriteError(code, str(err), str(path))


class LogChunk(Record):
    """A piece of the log a hit replays, in the order it arrived."""

    stream: Stream
    text: str


class StoredLog:
    """A long log, read from its rows a block at a time each time it is iterated.

    `Index.entry_log` proved every block decodes; a row gone or changed since (a prune, a
    damaged file) ends the log there rather than failing the replay half-way.
    """

    def __init__(self, index: Index, key: str) -> None:
        self._index = index
        self._key = key

    def __iter__(self) -> Iterator[LogChunk]:
        try:
            for block in self._index.log_blocks(self._key):
                for stream, text in unpack(block):
                    yield LogChunk(stream, text)
        except (sqlite3.Error, RottenLogError):
            return


class Entry(Record):
    """An index row: the artifact it points at and what the producing run spent."""

    key: str
    project: str
    task: str
    artifact: ArtifactInfo
    created_at_ms: int
    last_used_at_ms: int
    duration_ms: float | None = None
    cpu_ms: float | None = None
    peak_rss_bytes: int | None = None


class NewEntry(Record):
    """An entry to write (`Index.put_entries`): its artifact is already in the store."""

    key: str
    project: str
    task: str
    artifact: ArtifactInfo
    inputs: Sequence[KeyComponent] = ()
    log: Sequence[LogChunk] = ()
    duration_ms: float | None = None
    cpu_ms: float | None = None
    peak_rss_bytes: int | None = None


class IndexStats(Record):
    """What `vx info` counts: entries and the bytes their artifacts hold."""

    entries: int
    bytes: int


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _into_wal(conn: sqlite3.Connection) -> None:
    """Switch the file to WAL, waiting out a second process doing the same.

    The switch upgrades a shared lock to an exclusive one; when another connection holds the
    file's reserved lock SQLite answers SQLITE_BUSY at once rather than calling the busy
    handler (it would deadlock), so two runs opening a new cache together wait here instead.
    A file already in WAL answers without a lock.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as err:
            if primary_code(err) != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.002)
        else:
            return


def open_index(directory: Path, *, now_ms: Callable[[], int] = _now_ms) -> Index:
    """Open (creating when needed) the index in `directory`.

    A schema from another version is reset, and a file that is not a database is moved
    aside; either way `Index.notice` says so once, for the caller to print. A disk that
    refuses the file raises `IndexWriteError`, an OSError.
    """
    directory.mkdir(parents=True, exist_ok=True)
    index = Index(directory / INDEX_NAME, now_ms=now_ms)
    index.notice = index.open()
    return index


def read_index(directory: Path) -> Index | None:
    """The index in `directory` opened for reading only, for a plan that must write nothing.

    None when there is no `cache.db` there, or one this version cannot read (another schema,
    a damaged file): a plan then predicts from no entries and no history, where a run would
    reset or set the file aside.
    """
    path = directory / INDEX_NAME
    if not path.is_file():
        return None
    index = Index(path, read_only=True)
    if index.current():
        return index
    index.close()
    return None


def open_index_or_off(directory: Path, *, now_ms: Callable[[], int] = _now_ms) -> Index:
    """`open_index`, or an index that is off for the whole run when the disk refuses the file.

    A full, read-only or failing disk costs a run its cache, never its tasks: probes miss,
    nothing is saved, the history is not kept, and the index's one notice says so (with the
    VX_E_FS code a refusal would have carried, so scripts can find it).
    """
    try:
        return open_index(directory, now_ms=now_ms)
    except IndexWriteError as err:
        path = directory / INDEX_NAME
        name = errno.errorcode.get(err.errno or 0, "EIO")
        why = (
            f"{ErrorCode.FS}: cache index {path} refused ({name}: {err.strerror or err});"
            " running without the cache: nothing is restored or saved, and this run's history"
            " is not kept"
        )
        return Index.unusable(path, why)


class Index(RunLog):
    """A handle on `cache.db`; each thread that calls it gets its own connection.

    WAL mode and a long busy timeout, and every write one short `BEGIN IMMEDIATE`
    transaction: concurrent runs wait their turn instead of failing with "database is locked".
    """

    def __init__(
        self, path: Path, *, now_ms: Callable[[], int] = _now_ms, read_only: bool = False
    ) -> None:
        self.path = path
        self.read_only = read_only
        """Opened by `read_index`: every write is refused before SQLite sees it."""
        self.notice: str | None = None
        self.off: str | None = None
        """Why the index answers nothing for the rest of the run; None while it works."""
        self._now_ms = now_ms
        self._local = threading.local()
        self._lock = threading.Lock()
        self._conns: list[sqlite3.Connection] = []
        self._told = False
        self._damage: str | None = None
        self._aside: Path | None = None
        self._identity: tuple[int, int] | None = None

    @classmethod
    def unusable(cls, path: Path, why: str) -> Index:
        """An index that is off from the start (its disk refused it); `why` is its notice."""
        index = cls(path)
        index.off = index.notice = why
        index._told = True
        return index

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                f"{self.path.as_uri()}?mode=ro" if self.read_only else self.path,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
                uri=self.read_only,
            )
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short transaction, undone whole when anything fails, its COMMIT included.

        A COMMIT refused (a full disk) leaves SQLite's transaction open and this connection
        holding the write lock: without the ROLLBACK every later write, this process's and
        every other run's, would wait out the busy timeout and fail "database is locked".
        """
        if self.off is not None:
            raise IndexOffError(errno.EIO, self.off, str(self.path))
        if self.read_only:
            raise IndexWriteError(errno.EROFS, "opened for reading only", str(self.path))
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as err:
            raise self._refused(err) from err
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as err:
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if isinstance(err, sqlite3.DatabaseError):
                raise self._refused(err) from err
            raise

    def _refused(self, err: sqlite3.DatabaseError) -> IndexWriteError:
        if self._damaged(err):
            return IndexOffError(errno.EIO, self.off or str(err), str(self.path))
        return _refusal(self.path, err)

    def _damaged(self, err: sqlite3.DatabaseError) -> bool:
        """Whether `err` shows the file damaged; the first time, the index goes off.

        A corrupt page, or our own SQL failing because a table or column is gone. The file is
        moved aside later (`recover`), not here: other threads may be reading it right now.
        """
        code = primary_code(err)
        if code not in _CORRUPT and not (code == sqlite3.SQLITE_ERROR and self._schema_gone()):
            return False
        with self._lock:
            if self._damage is None:
                self._damage = str(err)
                self._aside = self.path.with_name(f"{INDEX_NAME}.corrupt-{self._now_ms()}")
                self.off = (
                    f"cache index {self.path} is damaged ({err}): the cache is off for the rest"
                    f" of this run, and the file moves to {self._aside.name} when it ends"
                )
        return True

    def _schema_gone(self) -> bool:
        try:
            return damaged_schema(self._conn(), _SCHEMA)
        except sqlite3.Error:
            return False  # cannot tell: never move a file aside on a guess

    def _unreadable(self, key: str, err: sqlite3.DatabaseError) -> None:
        """A read failed: a damaged file turns the index off; a row that does not decode is
        dropped (best effort); anything else (a busy or failing disk) is only a miss."""
        if not self._damaged(err) and primary_code(err) is None:
            self._drop_rotten(key)

    def _drop_rotten(self, key: str) -> None:
        """A row vx did not write is a miss; drop it, unless the disk refuses that too."""
        with contextlib.suppress(OSError):
            self.drop_entry(key)

    def announce(self) -> str | None:
        """Why the index is off, the first time anyone asks (one line per run); else None."""
        with self._lock:
            if self.off is None or self._told:
                return None
            self._told = True
            return self.off

    def open(self) -> str | None:
        """Start on the file; the notice when its schema was reset or it was moved aside."""
        try:
            return self.start()
        except (sqlite3.DatabaseError, IndexOffError) as err:
            self.close()
            if isinstance(err, sqlite3.DatabaseError) and not self._damaged(err):
                raise _refusal(self.path, err) from err
        reason = self._damage
        try:
            aside = self._start_afresh()
        except sqlite3.DatabaseError as err:
            self.close()
            raise _refusal(self.path, err) from err
        return (
            f"cache index {self.path} was unreadable ({reason}); "
            f"moved it to {aside.name} and started an empty one"
        )

    def recover(self) -> str | None:
        """Move a file found damaged aside and start an empty index in its place.

        For the end of a run, once no other thread reads: the run's history then lands in the
        new file. The line to print, or None: nothing to do, or the damage was already told.
        """
        if self._aside is None:
            return None
        damage, told = self._damage, self._told
        try:
            aside = self._start_afresh()
        except (OSError, sqlite3.Error) as err:
            self.close()
            return (
                f"cache index {self.path} is damaged ({damage}) and could not be moved aside"
                f" and replaced ({err}); this run's history is not kept"
            )
        if told:
            return None
        return (
            f"cache index {self.path} was damaged ({damage}); "
            f"moved it to {aside.name} and started an empty one"
        )

    def _start_afresh(self) -> Path:
        """Close, move the damaged file aside, open an empty one in its place; where the old
        one went. Raises what the disk or SQLite raise; the index then stays off."""
        aside = self._aside
        if aside is None:
            raise AssertionError("only an index found damaged starts afresh")
        self.close()
        self._aside = None
        self._set_aside(aside)
        off, self.off = self.off, None
        try:
            self.start()
        except BaseException:
            self.off = off
            raise
        self._damage = None
        self._told = False
        return aside

    def _set_aside(self, aside: Path) -> None:
        """Rename the file (and its WAL, which belongs with it) to `aside`; drop its `-shm`.

        Skipped when the file there is no longer the one this handle opened: another run
        sharing the directory moved it first and may have started a fresh one.
        """
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return
        if self._identity is not None and (st.st_dev, st.st_ino) != self._identity:
            return
        self.path.replace(aside)
        with contextlib.suppress(FileNotFoundError):
            self.path.with_name(INDEX_NAME + "-wal").replace(aside.with_name(aside.name + "-wal"))
        with contextlib.suppress(FileNotFoundError):
            self.path.with_name(INDEX_NAME + "-shm").unlink()

    def close(self) -> None:
        with self._lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()

    def current(self) -> bool:
        """The file reads as this version's schema (no reset needed); False when unreadable."""
        try:
            return _version(self._conn()) == SCHEMA_VERSION
        except sqlite3.Error:
            return False

    def file_version(self) -> int | None:
        """The schema version the file says it has; None for none or an unreadable file."""
        try:
            return _version(self._conn())
        except sqlite3.Error:
            return None

    def start(self) -> str | None:
        """`prepare`, remembering which file was opened (see `_set_aside`)."""
        self._identity = _identity(self.path)
        notice = self.prepare()
        if self._identity is None:
            self._identity = _identity(self.path)
        return notice

    def prepare(self) -> str | None:
        """Bring the schema to SCHEMA_VERSION; the notice to print when that reset tables."""
        conn = self._conn()
        _into_wal(conn)
        if _version(conn) == SCHEMA_VERSION:
            return None
        with self._write() as tx:
            found = _version(tx)
            if found == SCHEMA_VERSION:
                return None
            tables = [
                str(row[0])
                for row in tx.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%'"
                )
            ]
            for table in tables:
                tx.execute(f'DROP TABLE "{table.replace(chr(34), chr(34) * 2)}"')
            for statement in _SCHEMA:
                tx.execute(statement)
            tx.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        if not tables:
            return None
        return f"cache index schema changed (v{found or 0} → v{SCHEMA_VERSION}); entries were reset"

    def get_entry(self, key: str) -> Entry | None:
        """The entry for `key`; None for a miss, which a row vx did not write is too."""
        if self.off is not None:
            return None
        try:
            row = (
                self._conn()
                .execute(
                    "SELECT project, task, size, digest, manifest, created_at, last_used_at,"
                    " duration_ms, cpu_ms, peak_rss_bytes FROM entries WHERE key = ?",
                    (key,),
                )
                .fetchone()
            )
        except sqlite3.DatabaseError as err:
            self._unreadable(key, err)
            return None
        if row is None:
            return None
        fields = entry_from_row(row)
        if fields is None:
            self._drop_rotten(key)
            return None
        return Entry(key, *fields)

    def readable_entries(self, keys: Sequence[str]) -> set[str]:
        """Which of `keys` have an entry `get_entry` would return, in a few queries; for a plan,
        which writes nothing, so a rotten row is only left out, not dropped."""
        if self.off is not None:
            return set()
        out: set[str] = set()
        # a failing query: the keys not read yet answer miss, as `get_entry` would for each
        with contextlib.suppress(sqlite3.DatabaseError):
            out.update(
                str(row[0]) for row in self._entry_rows(keys) if entry_from_row(row[1:]) is not None
            )
        return out

    def get_entries(self, keys: Sequence[str]) -> dict[str, Entry]:
        """`get_entry` of each of `keys`, in a few queries instead of one each: a miss is left
        out, a rotten row dropped. A query that fails leaves the keys it did not answer to
        `get_entry`, which tells a damaged file from a busy disk."""
        out: dict[str, Entry] = {}
        if self.off is not None:
            return out
        answered: set[str] = set()
        try:
            for row in self._entry_rows(keys):
                key = str(row[0])
                answered.add(key)
                fields = entry_from_row(row[1:])
                if fields is None:
                    self._drop_rotten(key)
                else:
                    out[key] = Entry(key, *fields)
        except sqlite3.DatabaseError:
            for key in keys:
                if key not in answered and (entry := self.get_entry(key)) is not None:
                    out[key] = entry
        return out

    def _entry_rows(self, keys: Sequence[str]) -> Iterator[tuple[object, ...]]:
        """The `entries` rows of `keys`, key first, 500 keys a query."""
        conn = self._conn()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = (
                "SELECT key, project, task, size, digest, manifest, created_at,"  # noqa: S608
                " last_used_at, duration_ms, cpu_ms, peak_rss_bytes FROM entries"
                f" WHERE key IN ({marks})"
            )
            yield from conn.execute(sql, chunk).fetchall()

    def put_entry(
        self,
        key: str,
        *,
        project: str,
        task: str,
        artifact: ArtifactInfo,
        inputs: Sequence[KeyComponent] = (),
        log: Sequence[LogChunk] = (),
        duration_ms: float | None = None,
        cpu_ms: float | None = None,
        peak_rss_bytes: int | None = None,
    ) -> None:
        """Write an entry with its components and log, whole or not at all.

        Called after the artifact's rename, so a row never points at bytes not yet there.
        """
        self.put_entries(
            [
                NewEntry(
                    key, project, task, artifact, inputs, log, duration_ms, cpu_ms, peak_rss_bytes
                )
            ]
        )

    def put_entries(self, entries: Sequence[NewEntry]) -> None:
        """Write entries in one transaction, all or none: a run keeping many entries at once
        (remote hits) pays one write lock and one WAL commit, not one each."""
        entries = list({e.key: e for e in entries}.values())  # a key twice: the last one
        if not entries:
            return
        now = self._now_ms()
        with self._write() as tx:
            log_sizes = []
            for e in entries:
                _delete_entry(tx, e.key)
                log_sizes.append(_insert_log(tx, e.key, e.log))
            tx.executemany(
                "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        *(e.key, e.project, e.task, e.artifact.size, e.artifact.digest, now, now),
                        *(e.duration_ms, e.cpu_ms, e.peak_rss_bytes, e.artifact.manifest_json()),
                        log_size,
                    )
                    for e, log_size in zip(entries, log_sizes, strict=True)
                ),
            )
            tx.executemany(
                "INSERT INTO entry_inputs VALUES (?, ?, ?, ?, ?)",
                (
                    (e.key, i, str(c.kind), c.name, c.digest)
                    for e in entries
                    for i, c in enumerate(e.inputs)
                ),
            )

    def drop_entry(self, key: str) -> None:
        with self._write() as tx:
            _delete_entry(tx, key)

    def touch(self, keys: Iterable[str]) -> None:
        """Mark entries used now (what retention's `olderThan` reads), in one transaction."""
        now = self._now_ms()
        rows = [(now, key) for key in keys]
        if rows:
            with self._write() as tx:
                tx.executemany("UPDATE entries SET last_used_at = ? WHERE key = ?", rows)

    def entry_inputs(self, key: str) -> tuple[KeyComponent, ...]:
        """The components the entry's key was derived from, in key order, for `vx why`.

        Empty when they do not read: `why` then has nothing recorded to compare.
        """
        if self.off is not None:
            return ()
        try:
            rows = self._conn().execute(
                "SELECT kind, name, digest FROM entry_inputs WHERE key = ? ORDER BY seq", (key,)
            )
            return tuple(KeyComponent(Kind(kind), name, digest) for kind, name, digest in rows)
        except sqlite3.DatabaseError as err:
            self._damaged(err)
        except (ValueError, TypeError):
            pass
        return ()

    def entry_log(self, key: str) -> Iterable[LogChunk] | None:
        """The log a hit replays, read through once to prove every block decodes; None when
        one does not, which makes the entry a miss (and drops it).

        A short log comes back decoded, so a prune racing the replay cannot cut it; a long one
        (past `_HELD_CHARS`) is read again a block at a time as it is replayed, so a replay
        never holds more of it than a block.
        """
        if self.off is not None:
            return None
        try:
            return self._read_logs([key]).get(key, ())
        except sqlite3.DatabaseError as err:
            self._unreadable(key, err)
        except RottenLogError:
            self._drop_rotten(key)
        return None

    def entry_logs(self, keys: Sequence[str]) -> Logs | None:
        """`entry_log` of each of `keys` in a few queries, for a warm replay of many tasks;
        None when one does not read (the full path then judges each entry)."""
        if self.off is not None:
            return None
        try:
            return self._read_logs(keys)
        except (sqlite3.DatabaseError, RottenLogError):
            return None

    def _read_logs(self, keys: Sequence[str]) -> dict[str, Iterable[LogChunk]]:
        """Each of `keys`' logs, every block decoded once: held while `_HELD_CHARS` in all
        allows, else a `StoredLog` that reads the rows again. Raises what reading raises."""
        out: dict[str, Iterable[LogChunk]] = {}
        held: dict[str, list[LogChunk]] = {}
        budget = _HELD_CHARS
        conn = self._conn()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key, data FROM entry_log WHERE key IN ({marks}) ORDER BY key, seq"  # noqa: S608
            for key, block in conn.execute(sql, chunk):
                decoded = [LogChunk(stream, text) for stream, text in unpack(block)]
                budget -= sum(len(c.text) for c in decoded)
                if key in out:
                    continue  # read again on replay: only proven here
                if budget < 0:
                    held.pop(key, None)
                    out[key] = StoredLog(self, key)
                else:
                    held.setdefault(key, []).extend(decoded)
        return {**held, **out}

    def log_blocks(self, key: str) -> Iterator[object]:
        """The stored blocks of the entry's log, in order, as the rows are read."""
        rows = self._conn().execute("SELECT data FROM entry_log WHERE key = ? ORDER BY seq", (key,))
        for (block,) in rows:
            yield block

    def stats(self) -> IndexStats:
        count, size = (
            self._conn()
            .execute("SELECT count(*), coalesce(sum(size + log_size), 0) FROM entries")
            .fetchone()
        )
        return IndexStats(int(count), int(size))

    def entry_digests(self, keys: Sequence[str]) -> dict[str, tuple[int, str]]:
        """`(size, digest)` of each well-formed entry among `keys`, in one query; nothing at all
        when the file is damaged (the caller, the warm path, then takes the full path)."""
        out: dict[str, tuple[int, str]] = {}
        if self.off is not None:
            return out
        try:
            conn = self._conn()
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, size, digest FROM entries WHERE key IN ({marks})",  # noqa: S608
                    chunk,
                ).fetchall()
                for k, size, digest in rows:
                    if isinstance(size, int) and isinstance(digest, str):
                        out[str(k)] = (size, digest)
        except sqlite3.DatabaseError as err:
            self._damaged(err)
            return {}
        return out

    def retention_rows(self) -> list[tuple[str, int, int]]:
        """Every entry's `(key, size, last_used_at ms)`: what a prune's policy judges, the size
        its artifact's and its stored log's together."""
        rows = (
            self._conn()
            .execute("SELECT key, size + log_size, last_used_at FROM entries")
            .fetchall()
        )
        return [(str(k), int(size), int(used)) for k, size, used in rows]

    def oldest_use_ms(self) -> int | None:
        """When the least recently used entry was last used; None for an empty index."""
        row = self._conn().execute("SELECT min(last_used_at) FROM entries").fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def drop_unused(self, victims: Iterable[tuple[str, int]]) -> set[str]:
        """Delete each `(key, last_used_at)` entry still as a prune planned it; the keys gone.

        An entry used or saved again since the plan keeps its row: it is no longer the
        least recently used, and a run may be restoring it right now.
        """
        gone: set[str] = set()
        with self._write() as tx:
            for key, used in victims:
                cur = tx.execute(
                    "DELETE FROM entries WHERE key = ? AND last_used_at = ?", (key, used)
                )
                if cur.rowcount:
                    tx.execute("DELETE FROM entry_inputs WHERE key = ?", (key,))
                    tx.execute("DELETE FROM entry_log WHERE key = ?", (key,))
                    gone.add(key)
        return gone

    def entry_keys(self, keys: Sequence[str]) -> set[str]:
        """Which of `keys` have an entry now."""
        out: set[str] = set()
        conn = self._conn()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key FROM entries WHERE key IN ({marks})"  # noqa: S608
            out.update(str(k) for (k,) in conn.execute(sql, chunk))
        return out


def _version(conn: sqlite3.Connection) -> int | None:
    """The layout version the file says it has; None for none (a reset follows).

    Only a missing or unreadable `meta` means that: a busy or failing disk is raised, since
    resetting the tables on a transient error would throw away a good cache.
    """
    try:
        row = conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()
    except sqlite3.OperationalError as err:
        if primary_code(err) not in (None, sqlite3.SQLITE_ERROR):
            raise
        return None
    if row is None:
        return None
    try:
        return int(row[0])
    except (ValueError, TypeError):
        return 0


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _delete_entry(tx: sqlite3.Connection, key: str) -> None:
    for table in ("entries", "entry_inputs", "entry_log"):
        tx.execute(f"DELETE FROM {table} WHERE key = ?", (key,))  # noqa: S608  fixed names


def _insert_log(tx: sqlite3.Connection, key: str, log: Iterable[tuple[Stream, str]]) -> int:
    """Store `log` as blocks, one row each, made as they are written; the bytes stored."""
    stored = 0

    def rows() -> Iterator[tuple[str, int, bytes]]:
        nonlocal stored
        for seq, block in enumerate(pack(log)):
            stored += len(block)
            yield key, seq, block

    tx.executemany("INSERT INTO entry_log VALUES (?, ?, ?)", rows())
    return stored
