"""`vx run --report=html`: the page is drawn by a real headless Chromium and its bars counted.

The screenshot is read with the standard library (zlib; no imaging package), and a bar is a
region of one of the page's bar colours exactly a bar high: text, legend swatches and the
critical-path marks never are. Each task that ran gets one bar, in its outcome's colour.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import zlib
from typing import TYPE_CHECKING, Any

import pytest
from tests.e2e.runws import tree

from vx.history.picture import BAR_COLOURS, BAR_HEIGHT

if TYPE_CHECKING:
    from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CACHED: dict[str, Any] = {
    "dependsOn": ["^build"],
    "exec": "sleep 0.2; mkdir -p dist && cp src/index.txt dist/",
    "cache": {"inputs": {"files": ["src/**"]}, "outputs": {"files": ["dist/**"]}},
}


def needs_chromium() -> str:
    if CHROMIUM is None:
        reason = "chromium is not installed (apt-get install chromium); the HTML report's drawing goes untested"
        print(reason)
        pytest.skip(reason)
    return CHROMIUM


def screenshot(page: Path, png: Path) -> None:
    """Headless Chromium, offline, in a profile of its own, at one device pixel per CSS px."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                needs_chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                f"--user-data-dir={profile}",
                f"--screenshot={png}",
                "--window-size=1200,900",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit RGB or RGBA PNG, unfiltered."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, interlace) == (8, 0)
    assert colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                corner = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, up, corner)) & 0xFF
        prev = line
        rgb = bytes(line) if bpp == 3 else bytes(b for j, b in enumerate(line) if j % 4 != 3)
        rows.append(rgb)
    return width, height, rows


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def bars(png: Path) -> dict[str, int]:
    """How many bars of each outcome the screenshot shows."""
    width, height, rows = read_png(png.read_bytes())
    colours = {bytes.fromhex(hexa[1:]): kind for kind, hexa in BAR_COLOURS.items()}
    seen: set[tuple[int, int]] = set()
    found: dict[str, int] = {}
    for y in range(height):
        row = rows[y]
        for x in range(width):
            kind = colours.get(row[3 * x : 3 * x + 3])
            if kind is None or (x, y) in seen:
                continue
            pixels = region(rows, x, y, row[3 * x : 3 * x + 3], width, height)
            seen |= pixels
            if is_bar(pixels):
                found[kind] = found.get(kind, 0) + 1
    return found


def region(
    rows: list[bytes], x: int, y: int, colour: bytes, width: int, height: int
) -> set[tuple[int, int]]:
    """The 4-connected pixels of exactly `colour` around (x, y)."""
    todo, pixels = [(x, y)], {(x, y)}
    while todo:
        cx, cy = todo.pop()
        for nx, ny in ((cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)):
            inside = 0 <= nx < width and 0 <= ny < height and (nx, ny) not in pixels
            if inside and rows[ny][3 * nx : 3 * nx + 3] == colour:
                pixels.add((nx, ny))
                todo.append((nx, ny))
    return pixels


def is_bar(pixels: set[tuple[int, int]]) -> bool:
    """A bar's height, and solid along its top and bottom rows (a label sits inside)."""
    xs = [x for x, _ in pixels]
    ys = [y for _, y in pixels]
    top, bottom, span = min(ys), max(ys), max(xs) - min(xs) + 1
    if abs(bottom - top + 1 - BAR_HEIGHT) > 1 or span < 2:
        return False
    edge = [sum(1 for x, y in pixels if y == row) for row in (top, bottom)]
    return all(n >= span * 0.9 for n in edge)


def test_the_page_draws_one_bar_per_task_in_its_outcomes_colour(workspace, vx, tmp_path) -> None:
    needs_chromium()
    ws = workspace(
        tree(
            {
                "lib": ((), {"build": CACHED, "lint": {"exec": "sleep 0.2"}}),
                "app": (
                    ("lib",),
                    {
                        "build": CACHED,
                        "test": {"dependsOn": ["build"], "exec": "sleep 0.2"},
                        "lint": {"exec": "sleep 0.1; exit 1"},
                    },
                ),
            }
        )
    )
    vx(["run", "lib#build"], ws).assert_ok()
    args = ["run", "build", "test", "lint", "--all", "--report=html=out/run.html"]
    run = vx(args, ws)
    assert run.code == 1, run
    page = ws / "out/run.html"
    text = page.read_text()
    for fetch in ("<script", "src=", "url(", "@import", "http:", "https:", "<link"):
        assert fetch not in text
    png = tmp_path / "run.png"
    screenshot(page, png)
    assert bars(png) == {"cache-hit": 1, "success": 3, "failed": 1}
