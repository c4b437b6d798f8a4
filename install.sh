#!/bin/sh
# Install the vx binary for this machine: read the release's version, pick the tarball for
# `uname -sm`, download it and its SHA-256, verify, unpack, check it starts, put the folder in
# ~/.vx/lib/vx-<version>/ (or under $VX_INSTALL_DIR), point ~/.vx/bin/vx at the executable
# inside, and leave the receipt `vx upgrade` reads.
#
#   curl -fsSL https://github.com/vx-runner/vx/releases/latest/download/install.sh | sh
#
# Environment: VX_INSTALL_DIR (the install root, default ~/.vx), VX_VERSION (a tag such as
# v0.2.0; default the latest), VX_UPGRADE_URL (the releases base URL: a mirror). Every
# failure is one line on stderr and exit 1; nothing is left half-installed.
set -u

BASE="${VX_UPGRADE_URL:-https://github.com/vx-runner/vx/releases}"
BASE="${BASE%/}"
ROOT="${VX_INSTALL_DIR:-$HOME/.vx}"
ROOT="${ROOT%/}"
TAG="${VX_VERSION:-latest}"
TMP=""
STAGE=""

die() {
  printf 'install.sh: %s\n' "$1" >&2
  [ -n "$TMP" ] && rm -rf "$TMP"
  [ -n "$STAGE" ] && rm -rf "$STAGE"
  exit 1
}

platform_for() {
  case "$1" in
    "Linux x86_64" | "Linux amd64") echo linux-x64 ;;
    "Linux aarch64" | "Linux arm64") echo linux-arm64 ;;
    "Darwin arm64") echo darwin-arm64 ;;
    *) return 1 ;;
  esac
}

# fetch URL FILE WHAT: download with curl or wget; on failure, say why in one line.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    code=$(curl -sSL -o "$2" -w '%{http_code}' "$1" 2>"$TMP/err") || {
      die "could not download $1 ($(tail -n 1 "$TMP/err" | sed 's/^curl: ([0-9]*) //')) — check the network or the proxy"
    }
  elif command -v wget >/dev/null 2>&1; then
    if wget -q -O "$2" "$1" 2>"$TMP/err"; then code=200; else
      code=$(wget -S -O /dev/null "$1" 2>&1 | sed -n 's/^ *HTTP\/[0-9.]* \([0-9]*\).*/\1/p' | tail -n 1)
      [ -n "$code" ] || die "could not download $1 — check the network or the proxy"
    fi
  else
    die "neither curl nor wget is installed: install one and re-run"
  fi
  case "$code" in
    200) ;;
    404) die "no such file: $1 (404) — check VX_VERSION ($TAG) and that this release has $3" ;;
    429 | 403) die "the release host is rate-limiting this address ($code) — try again later" ;;
    *) die "could not download $1 (HTTP $code)" ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed: cannot verify the download"
  fi
}

PLATFORM="$(uname -s) $(uname -m)"
PLAT=$(platform_for "$PLATFORM") || die "no vx binary is built for $PLATFORM — pip install vx runs anywhere Python 3.11 does"
command -v tar >/dev/null 2>&1 || die "tar is not installed: install it and re-run"
if [ "$TAG" = latest ]; then FROM="$BASE/latest/download"; else FROM="$BASE/download/$TAG"; fi

TMP=$(mktemp -d 2>/dev/null || mktemp -d -t vx-install) || die "cannot make a temp directory"
# The asset's name carries the version, so the release document says which one "latest" is.
fetch "$FROM/release.json" "$TMP/release.json" release.json
VERSION=$(tr -d '\n' <"$TMP/release.json" | sed -n 's/.*"version" *: *"\([^"]*\)".*/\1/p')
case "$VERSION" in
  "" | *[!0-9A-Za-z.+-]*) die "$FROM/release.json names no version (not a release document: a proxy or a portal answering?)" ;;
esac
ASSET="vx-$VERSION-$PLAT.tar.gz"
TOP="vx-$VERSION-$PLAT"
fetch "$FROM/$ASSET.sha256" "$TMP/sum" "$ASSET.sha256"
fetch "$FROM/$ASSET" "$TMP/$ASSET" "$ASSET"
WANT=$(cut -d ' ' -f 1 "$TMP/sum" | tr -d '\r\n')
case "$WANT" in
  *[!0-9a-f]* | "") die "$ASSET.sha256 holds no SHA-256 — nothing installed" ;;
esac
[ ${#WANT} -eq 64 ] || die "$ASSET.sha256 holds no SHA-256 — nothing installed"
GOT=$(sha256_of "$TMP/$ASSET")
[ "$GOT" = "$WANT" ] || die "the download did not match its SHA-256 (expected $WANT, got $GOT) — nothing installed"

mkdir "$TMP/unpacked" && tar -xzf "$TMP/$ASSET" -C "$TMP/unpacked" 2>"$TMP/err" \
  || die "could not unpack $ASSET ($(tail -n 1 "$TMP/err")) — nothing installed"
[ -f "$TMP/unpacked/$TOP/vx" ] || die "$ASSET holds no $TOP/vx — nothing installed"
ANSWER=$("$TMP/unpacked/$TOP/vx" --version 2>/dev/null) || die "the downloaded vx does not start on this machine ($PLATFORM) — nothing installed"
[ "$ANSWER" = "vx $VERSION" ] || die "the downloaded vx answers \"$ANSWER\", not \"vx $VERSION\" — nothing installed"

mkdir -p "$ROOT/bin" "$ROOT/lib" 2>/dev/null || die "cannot create $ROOT — set VX_INSTALL_DIR to a directory you can write"
[ -w "$ROOT/bin" ] && [ -w "$ROOT/lib" ] || die "cannot write to $ROOT — set VX_INSTALL_DIR to a directory you can write"
# Into the root's file system under a hidden name first, then renamed whole: lib/vx-<version>
# is never a partly copied folder.
STAGE="$ROOT/lib/.vx-install-$$"
mv "$TMP/unpacked/$TOP" "$STAGE" 2>/dev/null || die "cannot write to $ROOT/lib"
DEST="$ROOT/lib/vx-$VERSION"
if [ -e "$DEST" ]; then
  mv "$DEST" "$ROOT/lib/.vx-old-$$" || die "cannot replace $DEST"
fi
mv "$STAGE" "$DEST" || die "cannot rename $STAGE to $DEST"
STAGE=""
rm -rf "$ROOT/lib/.vx-old-$$"
# A relative link, swapped in by a rename: bin/vx is at every instant the old vx or the new.
ln -s "../lib/vx-$VERSION/vx" "$ROOT/bin/.vx-link-$$" || die "cannot write to $ROOT/bin"
mv -f "$ROOT/bin/.vx-link-$$" "$ROOT/bin/vx" || die "cannot replace $ROOT/bin/vx"
for old in "$ROOT"/lib/vx-*; do
  [ "$old" = "$DEST" ] || rm -rf "$old"
done
rm -f "$ROOT/bin/.vx-receipt.json" # a single-file install's, from before the binary was a folder
printf '{\n  "installer": "install.sh",\n  "asset": "%s",\n  "url": "%s",\n  "version": "%s"\n}\n' \
  "$ASSET" "$BASE" "$VERSION" >"$ROOT/.vx-receipt.json" || die "cannot write $ROOT/.vx-receipt.json"
rm -rf "$TMP"

echo "vx $VERSION installed at $ROOT/bin/vx"
case ":${PATH:-}:" in
  *":$ROOT/bin:"*) ;;
  *) echo "add it to your PATH (e.g. in ~/.profile): export PATH=\"$ROOT/bin:\$PATH\"" ;;
esac
