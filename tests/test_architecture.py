"""docs/architecture.md matches the code: every package and module is on it, and it names
nothing that does not exist; no package outgrows 30 modules, and a module over 500 lines is
there with its reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PAGE = ROOT / "docs" / "architecture.md"
MAX_MODULES = 30
LARGE = 500

_SECTION = re.compile(r"^### `(vx(?:\.\w+)*)`")
_ROW = re.compile(r"^\| `([\w./]+\.py)` \|")
_TICKED = re.compile(r"`([^`\s]+)`")
_DOTTED = re.compile(r"vx(?:\.\w+)*")
_PATH = re.compile(r"[\w./-]+/[\w.-]+\.(?:py|md|json)|[\w.-]+\.py")


def _packages() -> dict[str, set[str]]:
    """Each package's dotted name → its module files, `__init__.py` left out."""
    out: dict[str, set[str]] = {}
    for init in sorted(SRC.rglob("__init__.py")):
        pkg = init.parent
        name = ".".join(pkg.relative_to(SRC).parts)
        out[name] = {p.name for p in pkg.glob("*.py") if p.name != "__init__.py"}
    return out


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _sections(text: str) -> dict[str, set[str]]:
    """Each `### \\`vx.pkg\\`` section → the modules its table rows name."""
    out: dict[str, set[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            m = _SECTION.match(line)
            current = m.group(1) if m else None
            if current is not None:
                out.setdefault(current, set())
        elif current is not None and (row := _ROW.match(line)):
            out[current].add(row.group(1))
    return out


def _large_rows(text: str) -> set[str]:
    body = text.split("## Modules over 500 lines", 1)[1].split("\n## ", 1)[0]
    return {m.group(1) for line in body.splitlines() if (m := _ROW.match(line))}


def _top_names(path: Path) -> dict[str, set[str]]:
    """A module's top-level names, each with the names its class (if it is one) defines."""
    names: dict[str, set[str]] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = set()
        elif isinstance(node, ast.ClassDef):
            names[node.name] = {
                n.name
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            }
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update({t.id: set() for t in targets if isinstance(t, ast.Name)})
    return names


def _resolves(dotted: str, modules: dict[str, Path]) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in modules:
            rest = parts[cut:]
            if not rest:
                return True
            names = _top_names(modules[module])
            return rest[0] in names and (
                len(rest) == 1 or (len(rest) == 2 and rest[1] in names[rest[0]])
            )
    return False


TEXT = PAGE.read_text()
PACKAGES = _packages()
SECTIONS = _sections(TEXT)


def test_every_package_has_a_section_and_every_section_a_package() -> None:
    assert set(SECTIONS) == set(PACKAGES), (  # `vx` itself: the top-level modules
        f"missing: {sorted(set(PACKAGES) - set(SECTIONS))};"
        f" no such package: {sorted(set(SECTIONS) - set(PACKAGES))}"
    )


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_a_section_lists_exactly_its_modules(package: str) -> None:
    assert SECTIONS.get(package, set()) == PACKAGES[package], (
        f"{package}: missing {sorted(PACKAGES[package] - SECTIONS.get(package, set()))},"
        f" no such module {sorted(SECTIONS.get(package, set()) - PACKAGES[package])}"
    )


def test_every_dotted_name_and_path_on_the_page_exists() -> None:
    modules = _modules()
    wrong: list[str] = []
    for token in _TICKED.findall(TEXT):
        if _PATH.fullmatch(token):
            if (
                "/" in token and not any((base / token).exists() for base in (ROOT, SRC / "vx"))
            ) or (
                "/" not in token
                and not ((ROOT / token).exists() or list((SRC / "vx").rglob(token)))
            ):
                wrong.append(token)
        elif _DOTTED.fullmatch(token) and not _resolves(token, modules):
            wrong.append(token)
    assert not wrong, f"docs/architecture.md names what does not exist: {wrong}"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_package_outgrows_its_room(package: str) -> None:
    assert len(PACKAGES[package]) <= MAX_MODULES, (
        f"{package} holds {len(PACKAGES[package])} modules: split it into packages"
    )


def test_a_module_over_500_lines_says_why_on_the_page() -> None:
    large = {
        str(p.relative_to(SRC / "vx"))
        for p in SRC.rglob("*.py")
        if len(p.read_text().splitlines()) > LARGE
    }
    listed = _large_rows(TEXT)
    assert large <= listed, f"over {LARGE} lines, with no reason given: {sorted(large - listed)}"
    assert listed <= {str(p.relative_to(SRC / "vx")) for p in SRC.rglob("*.py")}


@pytest.mark.parametrize(
    ("dotted", "ok"),
    [
        ("vx.run.warm", True),
        ("vx.run.warm.replay", True),
        ("vx.run.executor.Executor.run", True),
        ("vx.run.nothing", False),
        ("vx.run.warm.nothing", False),
    ],
)
def test_the_name_check_itself(dotted: str, ok: bool) -> None:
    assert _resolves(dotted, _modules()) is ok
