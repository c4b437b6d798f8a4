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
# failure is one line on stderr and exit 1, and so is an interrupt (INT, TERM, HUP) before
# bin/vx is flipped; nothing is left half-installed.
set -u

BASE="${VX_UPGRADE_URL:-https://github.com/vx-runner/vx/releases}"
BASE="${BASE%/}"
ROOT="${VX_INSTALL_DIR:-$HOME/.vx}"
ROOT="${ROOT%/}"
TAG="${VX_VERSION:-latest}"
TMP=""
NEWDIR=""
NEWLINK=""
MADE=""
MADE_BIN=""
MADE_LIB=""

# Whatever this run made goes again: the work folder, an unlinked new folder, a link not yet
# renamed into place, and the directories it created for the root (emptied first).
cleanup() {
  [ -n "$TMP" ] && rm -rf "$TMP"
  [ -n "$NEWDIR" ] && rm -rf "$NEWDIR"
  [ -n "$NEWLINK" ] && rm -f "$NEWLINK"
  [ -n "$MADE_LIB" ] && rmdir "$ROOT/lib" 2>/dev/null
  [ -n "$MADE_BIN" ] && rmdir "$ROOT/bin" 2>/dev/null
  if [ -n "$MADE" ]; then
    d=$ROOT
    while rmdir "$d" 2>/dev/null && [ "$d" != "$MADE" ]; do d=$(dirname "$d"); done
  fi
}

die() {
  printf 'install.sh: %s\n' "$1" >&2
  cleanup
  exit 1
}

trap 'die "interrupted — nothing installed"' INT TERM HUP

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

# alive PID: the process exists (whoever owns it: kill -0 fails for another user's too).
alive() {
  if [ -d /proc/self ]; then
    [ -d "/proc/$1" ]
  elif command -v ps >/dev/null 2>&1; then
    ps -p "$1" >/dev/null 2>&1
  else
    kill -0 "$1" 2>/dev/null
  fi
}

# escapes DIR TARGET: whether a symlink in DIR (a path relative to the release's top folder)
# pointing at TARGET leads outside that folder: an absolute target, or more `..` than depth.
escapes() {
  case $2 in /*) return 0 ;; esac
  depth=0
  set -f
  old_ifs=$IFS
  IFS=/
  # shellcheck disable=SC2086 # split on purpose, at each /
  set -- $1 $2
  IFS=$old_ifs
  set +f
  for part in "$@"; do
    case $part in
      "" | .) ;;
      ..)
        depth=$((depth - 1))
        [ "$depth" -ge 0 ] || return 0
        ;;
      *) depth=$((depth + 1)) ;;
    esac
  done
  return 1
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
PLAT=$(platform_for "$PLATFORM") || die "no vx binary is built for $PLATFORM — pip install vx-runner runs anywhere Python 3.11 does"
command -v tar >/dev/null 2>&1 || die "tar is not installed: install it and re-run"
if [ "$TAG" = latest ]; then FROM="$BASE/latest/download"; else FROM="$BASE/download/$TAG"; fi

# Everything is downloaded, unpacked and probed inside the root, not in /tmp (often mounted
# noexec, where the probe would fail for the wrong reason); the new folder is then one rename
# away from its place.
d=$ROOT
while [ ! -d "$d" ]; do MADE=$d; d=$(dirname "$d"); done
[ -d "$ROOT/bin" ] || MADE_BIN=1
[ -d "$ROOT/lib" ] || MADE_LIB=1
mkdir -p "$ROOT/bin" "$ROOT/lib" 2>/dev/null || die "cannot create $ROOT — set VX_INSTALL_DIR to a directory you can write"
[ -w "$ROOT/bin" ] && [ -w "$ROOT/lib" ] || die "cannot write to $ROOT — set VX_INSTALL_DIR to a directory you can write"
# Work folders of runs that were killed (SIGKILL, a power cut: no trap ran) are swept here:
# each names its run's pid, and one whose pid is gone is a leftover. A live run's is kept.
for stale in "$ROOT"/lib/.vx-install-*; do
  pid=${stale##*-}
  case $pid in "" | *[!0-9]*) continue ;; esac
  [ "$pid" = $$ ] || ! alive "$pid" || continue
  rm -rf "$stale"
done
TMP="$ROOT/lib/.vx-install-$$"
mkdir "$TMP" 2>/dev/null || die "cannot write to $ROOT/lib — set VX_INSTALL_DIR to a directory you can write"
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

# Every member under the one top folder, as vx upgrade requires; then, unpacked, every
# symlink leading to a place inside it.
tar -tzf "$TMP/$ASSET" >"$TMP/members" 2>"$TMP/err" \
  || die "could not unpack $ASSET ($(tail -n 1 "$TMP/err")) — nothing installed"
STRAY=$(grep -v -e "^$TOP\$" -e "^$TOP/" "$TMP/members" | head -n 1)
[ -z "$STRAY" ] || die "could not unpack $ASSET ($STRAY lies outside $TOP/) — nothing installed"
mkdir "$TMP/unpacked" && tar -xzf "$TMP/$ASSET" -C "$TMP/unpacked" 2>"$TMP/err" \
  || die "could not unpack $ASSET ($(tail -n 1 "$TMP/err")) — nothing installed"
LEAK=$(cd "$TMP/unpacked/$TOP" 2>/dev/null && find . -type l | while IFS= read -r link; do
  target=$(readlink "$link")
  if escapes "$(dirname "$link")" "$target"; then
    printf '%s links to %s' "${link#./}" "$target"
    break
  fi
done)
[ -z "$LEAK" ] || die "could not unpack $ASSET ($TOP/$LEAK, outside $TOP/) — nothing installed"
[ -f "$TMP/unpacked/$TOP/vx" ] || die "$ASSET holds no $TOP/vx — nothing installed"
# stdin from /dev/null: under `curl … | sh` the script itself is on stdin. The answer goes
# to a file, not through $(…): a pipe is read to its end, so anything the new vx left running
# with its stdout (a daemon in a session of its own) would keep the install waiting.
if command -v timeout >/dev/null 2>&1; then
  timeout 10 "$TMP/unpacked/$TOP/vx" --version >"$TMP/answer" 2>/dev/null </dev/null
  rc=$?
  [ $rc -ne 124 ] || die "the downloaded vx did not answer --version within 10 s on this machine ($PLATFORM) — nothing installed"
else
  "$TMP/unpacked/$TOP/vx" --version >"$TMP/answer" 2>/dev/null </dev/null
  rc=$?
fi
ANSWER=$(cat "$TMP/answer")
[ $rc -eq 0 ] || die "the downloaded vx does not start on this machine ($PLATFORM) — nothing installed"
[ "$ANSWER" = "vx $VERSION" ] || die "the downloaded vx answers \"$ANSWER\", not \"vx $VERSION\" — nothing installed"

# The folder bin/vx leads to now (the previous install's) is never renamed or removed: a
# running vx still loads files from it. Reinstalling that same version gets a fresh name.
PREV=$(readlink "$ROOT/bin/vx" 2>/dev/null) || PREV=""
case "$PREV" in
  ../lib/*/vx) PREV_DIR="$ROOT/lib/${PREV#../lib/}" ;;
  "$ROOT"/lib/*/vx) PREV_DIR=$PREV ;;
  *) PREV_DIR="" ;;
esac
PREV_DIR=${PREV_DIR%/vx}
DEST="$ROOT/lib/vx-$VERSION"
[ "$DEST" != "$PREV_DIR" ] || DEST="$ROOT/lib/vx-$VERSION-$$"
if [ -e "$DEST" ]; then
  rm -rf "$DEST" || die "cannot replace $DEST (not in use) — nothing installed"
fi
NEWDIR=$DEST
mv "$TMP/unpacked/$TOP" "$DEST" 2>/dev/null || die "cannot write to $ROOT/lib — nothing installed"
# A relative link, swapped in by a rename: bin/vx is at every instant the old vx or the new.
NEWLINK="$ROOT/bin/.vx-link-$$"
rm -f "$NEWLINK"
ln -s "../lib/${DEST##*/}/vx" "$NEWLINK" || die "cannot write to $ROOT/bin — nothing installed"
# From the flip on, the install runs to its end (tidying, the receipt): no signal stops it
# between "nothing installed" and "installed".
trap '' INT TERM HUP
mv -f "$NEWLINK" "$ROOT/bin/vx" || die "cannot replace $ROOT/bin/vx — nothing installed"
NEWLINK=""
NEWDIR=""
MADE=""
MADE_BIN=""
MADE_LIB=""
for old in "$ROOT"/lib/vx-*; do
  [ "$old" = "$DEST" ] || [ "$old" = "$PREV_DIR" ] || rm -rf "$old"
done
rm -f "$ROOT/bin/.vx-receipt.json" # a single-file install's, from before the binary was a folder
# The URL is the user's text: its backslashes and quotes are escaped for JSON.
URL_JSON=$(printf '%s' "$BASE" | sed 's/\\/\\\\/g; s/"/\\"/g')
printf '{\n  "installer": "install.sh",\n  "asset": "%s",\n  "url": "%s",\n  "version": "%s"\n}\n' \
  "$ASSET" "$URL_JSON" "$VERSION" >"$ROOT/.vx-receipt.json" || die "cannot write $ROOT/.vx-receipt.json"
rm -rf "$TMP"

echo "vx $VERSION installed at $ROOT/bin/vx"
case ":${PATH:-}:" in
  *":$ROOT/bin:"*) ;;
  *) echo "add it to your PATH (e.g. in ~/.profile): export PATH=\"$ROOT/bin:\$PATH\"" ;;
esac
