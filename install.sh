#!/bin/sh
# Install the vx binary for this machine: pick the asset for `uname -sm`, download it and its
# SHA-256, verify, check it starts, put it in ~/.vx/bin (or $VX_INSTALL_DIR), and leave the
# receipt `vx upgrade` reads.
#
#   curl -fsSL https://github.com/vx-runner/vx/releases/latest/download/install.sh | sh
#
# Environment: VX_INSTALL_DIR (where vx goes), VX_VERSION (a tag such as v0.2.0; default the
# latest), VX_UPGRADE_URL (the releases base URL: a mirror). Every failure is one line on
# stderr and exit 1; nothing is left half-installed.
set -u

BASE="${VX_UPGRADE_URL:-https://github.com/vx-runner/vx/releases}"
BASE="${BASE%/}"
DIR="${VX_INSTALL_DIR:-$HOME/.vx/bin}"
TAG="${VX_VERSION:-latest}"
TMP=""

die() {
  printf 'install.sh: %s\n' "$1" >&2
  [ -n "$TMP" ] && rm -rf "$TMP"
  exit 1
}

asset_for() {
  case "$1" in
    "Linux x86_64" | "Linux amd64") echo vx-linux-x64 ;;
    "Linux aarch64" | "Linux arm64") echo vx-linux-arm64 ;;
    "Darwin arm64") echo vx-darwin-arm64 ;;
    *) return 1 ;;
  esac
}

# fetch URL FILE: download with curl or wget; on failure, say why in one line.
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
    404) die "no such file: $1 (404) — check VX_VERSION ($TAG) and that this release has $ASSET" ;;
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
ASSET=$(asset_for "$PLATFORM") || die "no vx binary is built for $PLATFORM — pip install vx runs anywhere Python 3.11 does"
if [ "$TAG" = latest ]; then FROM="$BASE/latest/download"; else FROM="$BASE/download/$TAG"; fi

TMP=$(mktemp -d 2>/dev/null || mktemp -d -t vx-install) || die "cannot make a temp directory"
fetch "$FROM/$ASSET.sha256" "$TMP/sum"
fetch "$FROM/$ASSET" "$TMP/vx"
WANT=$(cut -d ' ' -f 1 "$TMP/sum" | tr -d '\r\n')
case "$WANT" in
  *[!0-9a-f]* | "") die "$ASSET.sha256 holds no SHA-256 — nothing installed" ;;
esac
[ ${#WANT} -eq 64 ] || die "$ASSET.sha256 holds no SHA-256 — nothing installed"
GOT=$(sha256_of "$TMP/vx")
[ "$GOT" = "$WANT" ] || die "the download did not match its SHA-256 (expected $WANT, got $GOT) — nothing installed"

chmod 755 "$TMP/vx"
VERSION=$("$TMP/vx" --version 2>/dev/null) || die "the downloaded vx does not start on this machine ($PLATFORM) — nothing installed"
VERSION=${VERSION#vx }

mkdir -p "$DIR" 2>/dev/null || die "cannot create $DIR — set VX_INSTALL_DIR to a directory you can write"
[ -w "$DIR" ] || die "cannot write to $DIR — set VX_INSTALL_DIR to a directory you can write"
cp "$TMP/vx" "$DIR/.vx-install-$$" 2>/dev/null || die "cannot write to $DIR"
mv -f "$DIR/.vx-install-$$" "$DIR/vx" || die "cannot replace $DIR/vx"
printf '{\n  "installer": "install.sh",\n  "asset": "%s",\n  "url": "%s",\n  "version": "%s"\n}\n' \
  "$ASSET" "$BASE" "$VERSION" >"$DIR/.vx-receipt.json" || die "cannot write $DIR/.vx-receipt.json"
rm -rf "$TMP"

echo "vx $VERSION installed at $DIR/vx"
case ":${PATH:-}:" in
  *":$DIR:"*) ;;
  *) echo "add it to your PATH (e.g. in ~/.profile): export PATH=\"$DIR:\$PATH\"" ;;
esac
