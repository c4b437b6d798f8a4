"""`vx prune <project...>`: the workspace cut down to some projects, with pruned lockfiles."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vx.cli.parser import Command, Flag, Section, Takes
from vx.util.record import Record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vx.cli.parser import ParsedArgs
    from vx.cli.settings import Streams

DEFAULT_OUT = "out"

COMMAND = Command(
    "prune",
    flags=(
        Flag("--out-dir", "where to write the pruned workspace (default: out)", Takes.VALUE, "DIR"),
        Flag("--docker", "split it into json/ (what the install reads) and full/ (everything)"),
        Flag("--production", "leave out what only a dev dependency (uv: a group) reaches"),
        Flag("--untracked", "copy untracked files git does not ignore too (left out and listed)"),
    ),
    words="project",
    most_words=None,
    sections=(
        Section(
            "What it writes",
            (
                ("", "the named projects and the workspace packages they depend on, with their"),
                ("", "files; the root manifests with the workspace list cut to them; the vx"),
                ("", "configs; the lockfile (npm, pnpm, Yarn, bun, uv) pruned to what they"),
                ("", "install, so npm ci / pnpm install --frozen-lockfile / yarn --immutable /"),
                ("", "uv sync --locked accept it"),
                ("", "uv: [tool.uv.workspace] members is cut to the kept members; --docker's"),
                ("", "json/ takes uv sync --locked --all-packages --no-install-workspace"),
                ("", "(--no-install-local when the lock installs a local path package, which"),
                ("", "is copied too); --production also drops dependency groups from the kept"),
                ("", "pyproject.toml"),
                ("", "the root's turbo.json / nx.json and the root files a kept task reads"),
                ("", "(workspaceFiles, turbo's globalDependencies)"),
                ("", "an untracked file git does not ignore (.env.production, an .npmrc with a"),
                ("", "token) is left out and named, unless --untracked"),
                ("", "an earlier prune's output is replaced; any other existing directory is"),
                ("", "refused"),
            ),
        ),
        Section(
            "Examples",
            (
                ("vx prune app", "app and what it depends on, into out/"),
                ("vx prune app --docker", "out/json/ to install in one layer, out/full/ after"),
                ("vx prune app api --out-dir build/ctx --production", ""),
            ),
        ),
    ),
)


class PruneSettings(Record):
    """`vx prune`: the projects to keep, where to write, the layout, and where it runs from."""

    projects: tuple[str, ...]
    out_dir: Path
    docker: bool
    production: bool
    untracked: bool
    cwd: Path
    env: Mapping[str, str]


def resolve(args: ParsedArgs, env: Mapping[str, str], cwd: Path) -> PruneSettings:
    """The named projects, and the output directory relative to the cwd."""
    from vx.errors import ErrorCode, UserError

    if not args.words:
        raise UserError(ErrorCode.USAGE, "vx prune: name the projects to keep, e.g. vx prune app")
    out = args.text("out-dir")
    if out is not None and not out.strip():
        raise UserError(ErrorCode.USAGE, "--out-dir: the path is blank; name a directory")
    return PruneSettings(
        projects=tuple(args.words),
        out_dir=Path(cwd.absolute() / (out or DEFAULT_OUT)),
        docker=args.switch("docker"),
        production=args.switch("production"),
        untracked=args.switch("untracked"),
        cwd=cwd,
        env=env,
    )


def execute(settings: PruneSettings, streams: Streams) -> int:
    """Load the workspace, prune, say what was written."""
    from vx.loader.assemble import load_workspace
    from vx.prune.subset import prune

    ws = load_workspace(settings.cwd)
    found = prune(
        ws,
        settings.projects,
        out_dir=settings.out_dir,
        docker=settings.docker,
        production=settings.production,
        untracked=settings.untracked,
        env=settings.env,
    )
    locks = ", ".join(found.lockfiles) or "no lockfile"
    for note in found.notes:
        streams.err.write(f"vx prune: note: {note}\n")
    if found.untracked:
        from vx.util.fuzzy import listing

        count = len(found.untracked)
        files = f"{count} untracked file{'s' * (count != 1)} git does not ignore"
        shown = listing(found.untracked, most=10)
        streams.err.write(
            f"vx prune: note: copied {files}: {shown}\n"
            if settings.untracked
            else f"vx prune: note: left out {files}: {shown} — commit them, or pass --untracked"
            " to copy them\n"
        )
    streams.err.write(
        f"vx prune: {len(found.projects)} project{'s' * (len(found.projects) != 1)}"
        f" ({', '.join(found.projects)}), {found.files} files, {locks} pruned → {found.out_dir}\n"
    )
    return 0
