"""An Nx target's `inputs`: named sets expanded, each entry sorted into vx's input fields."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vx.util.globs import has_magic

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence


class NxInputs:
    """A target's inputs with named sets expanded, sorted into vx's input fields."""

    def __init__(self, named: Mapping[str, Any], warn: Callable[[str, str], None]) -> None:
        self.named = named
        self.warn = warn
        self.files: list[str] = []
        self.ws: list[str] = []
        self.env: list[str] = []
        self.runtime: list[str] = []
        self.upstream = ""

    def expand(self, entries: Sequence[object], trail: tuple[str, ...]) -> None:
        named = self.named
        for entry in entries:
            if isinstance(entry, str):
                if entry.startswith("^"):
                    self.upstream = self.upstream or entry[1:]
                elif entry in named and entry not in trail:
                    self.expand(named[entry] or [], (*trail, entry))
                elif "{" in entry or "/" in entry or has_magic(entry):
                    self.fileset(entry)
                else:
                    self.warn(f'inputs "{entry}"', "no named input has that name")
            elif isinstance(entry, dict):
                self.object(entry)

    def object(self, entry: Mapping[str, Any]) -> None:
        if isinstance(entry.get("fileset"), str):
            self.fileset(entry["fileset"])
        elif isinstance(entry.get("env"), str):
            self.env.append(entry["env"])
        elif isinstance(entry.get("runtime"), str):
            self.runtime.append(entry["runtime"])
        else:
            key = next(iter(entry), "?")
            self.warn(f'inputs "{key}"', "vx keys files, variables and commands only")

    def fileset(self, entry: str) -> None:
        negated = entry.startswith("!")
        body = entry.removeprefix("!")
        bang = "!" if negated else ""
        if body == "{projectRoot}" or body.startswith("{projectRoot}/"):
            self.files.append(bang + (body.removeprefix("{projectRoot}").removeprefix("/") or "**"))
            return
        path = body.removeprefix("{workspaceRoot}/")
        self.ws.append(bang + path)

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {"files": list(dict.fromkeys(self.files))}
        if self.ws:
            out["workspaceFiles"] = list(dict.fromkeys(self.ws))
        if self.env:
            out["env"] = list(dict.fromkeys(self.env))
        if self.runtime:
            out["workspaceRuntime"] = list(dict.fromkeys(self.runtime))
        return out
