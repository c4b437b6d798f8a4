"""Directory trees as REAPI Directory messages: built from disk, and laid back onto disk.

An input root is a sparse copy of the workspace: the files a task declares, plus whole
directories (its dependencies' outputs, the toolchain under node_modules). A whole directory
is walked once per run and its digest remembered by path, so a root that shares a big
node_modules with a hundred other tasks costs one walk. Symlinks stay symlinks with their
targets as written (pnpm's node_modules is a forest of them); nothing is followed.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from typing import TYPE_CHECKING

from vx.cache.remote.reapi import Digest
from vx.remoteexec.messages import Directory, FileEntry, decode_tree, encode_tree

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

_WHOLE = "whole"


class TreeBuilder:
    """Digests directories under `base`; every blob it names is kept in `blobs` for upload."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.blobs: dict[Digest, bytes | str] = {}
        self._whole: dict[str, tuple[Digest, Directory]] = {}
        self._files: dict[str, Digest] = {}
        self._lock = threading.Lock()

    def root(self, files: Iterable[str], dirs: Iterable[str]) -> Digest:
        """The digest of a root holding `files` and whole `dirs` (paths relative to base)."""
        tree: dict[str, object] = {}
        for rel in dirs:
            if os.path.isdir(os.path.join(self.base, rel)):
                self._insert(tree, rel, (_WHOLE, os.path.join(self.base, rel)))
        for rel in files:
            self._insert(tree, rel, None)
        return self._encode(tree, self.base)

    def whole(self, path: str) -> tuple[Digest, Directory]:
        """One directory on disk, walked once and remembered by its path."""
        with self._lock:
            found = self._whole.get(path)
        if found is not None:
            return found
        files, dirs, links = [], [], []
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            if entry.is_symlink():
                links.append((entry.name, os.readlink(entry.path)))
            elif entry.is_dir(follow_symlinks=False):
                dirs.append((entry.name, self.whole(entry.path)[0]))
            elif entry.is_file(follow_symlinks=False):
                files.append(self.file_entry(entry.name, entry.path))
        directory = Directory(tuple(files), tuple(dirs), tuple(links))
        digest = self._keep(directory)
        with self._lock:
            self._whole[path] = (digest, directory)
        return digest, directory

    def tree(self, path: str) -> bytes:
        """An output directory's Tree message (its root and every directory below)."""
        _, root = self.whole(path)
        children: dict[Digest, Directory] = {}
        pending = list(root.dirs)
        while pending:
            _, digest = pending.pop()
            if digest not in children:
                child = Directory.decode(_as_bytes(self.blobs[digest]))
                children[digest] = child
                pending.extend(child.dirs)
        return encode_tree(root, list(children.values()))

    def file(self, path: str) -> Digest:
        """A file's content digest, hashed once per path."""
        with self._lock:
            found = self._files.get(path)
        if found is not None:
            return found
        sha, size = hashlib.sha256(), 0
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                sha.update(chunk)
                size += len(chunk)
        digest = Digest(sha.hexdigest(), size)
        with self._lock:
            self._files[path] = digest
            self.blobs[digest] = path
        return digest

    def file_entry(self, name: str, path: str) -> FileEntry:
        mode = os.stat(path).st_mode
        return FileEntry(name, self.file(path), bool(mode & stat.S_IXUSR))

    def _keep(self, directory: Directory) -> Digest:
        data = directory.encode()
        digest = Digest.of(data)
        with self._lock:
            self.blobs[digest] = data
        return digest

    def _insert(self, tree: dict[str, object], rel: str, leaf: object) -> None:
        parts = [p for p in rel.split("/") if p and p != "."]
        node = tree
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            child = node.get(part)
            if last:
                if child is None:
                    node[part] = leaf
                elif isinstance(child, dict) and isinstance(leaf, tuple):
                    self._spread(child, leaf[1])
                return
            if isinstance(child, tuple):
                child = self._expanded(child[1])
            elif not isinstance(child, dict):
                child = {}
            node[part] = child
            node = child

    def _expanded(self, path: str) -> dict[str, object]:
        """A whole directory opened one level, so that a path may be added inside it."""
        out: dict[str, object] = {}
        self._spread(out, path)
        return out

    def _spread(self, node: dict[str, object], path: str) -> None:
        with os.scandir(path) as it:
            for entry in it:
                if entry.name in node:
                    continue
                whole = entry.is_dir(follow_symlinks=False) and not entry.is_symlink()
                node[entry.name] = (_WHOLE, entry.path) if whole else None

    def _encode(self, tree: dict[str, object], path: str) -> Digest:
        files, dirs, links = [], [], []
        for name, child in tree.items():
            here = os.path.join(path, name)
            if isinstance(child, dict):
                dirs.append((name, self._encode(child, here)))
            elif isinstance(child, tuple):
                dirs.append((name, self.whole(child[1])[0]))
            elif os.path.islink(here):
                links.append((name, os.readlink(here)))
            elif os.path.isfile(here):
                files.append(self.file_entry(name, here))
        return self._keep(Directory(tuple(files), tuple(dirs), tuple(links)))


def lay_out(
    directory: Directory,
    dest: Path,
    read: Callable[[Digest], bytes],
    children: Callable[[Digest], Directory],
) -> None:
    """Write a Directory's files, symlinks and subdirectories under `dest` (created)."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in directory.files:
        target = dest / entry.name
        target.write_bytes(read(entry.digest))
        if entry.executable:
            target.chmod(0o755)
    for name, link in directory.symlinks:
        (dest / name).symlink_to(link)
    for name, digest in directory.dirs:
        lay_out(children(digest), dest / name, read, children)


def lay_out_tree(data: bytes, dest: Path, read: Callable[[Digest], bytes]) -> None:
    """Write an output Tree under `dest`."""
    root, children = decode_tree(data)
    lay_out(root, dest, read, children.__getitem__)


def _as_bytes(blob: bytes | str) -> bytes:
    if isinstance(blob, bytes):
        return blob
    with open(blob, "rb") as fh:
        return fh.read()
