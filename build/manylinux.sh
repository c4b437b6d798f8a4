#!/bin/sh
# Build the Linux release binary inside a manylinux2014 container, whose glibc is 2.17: a
# binary links against the glibc it is built on, and runs only where glibc is that new or newer
# (built on ubuntu-22.04 it needed 2.34, leaving out Debian 11, Ubuntu 20.04, RHEL 8 and
# Amazon Linux 2). release.yml runs it, then checks the floor with build/glibc.py:
#
#   docker run --rm -v "$PWD:/src" -w /src quay.io/pypa/manylinux2014_x86_64 sh build/manylinux.sh
#
# The container's own CPythons are linked statically and ship no libpython, which Nuitka needs
# to link vx against; uv's managed CPython (python-build-standalone, itself built for glibc
# 2.17) provides one. gcc and patchelf come with the image.
set -eu
/opt/python/cp311-cp311/bin/python -m pip install --quiet --disable-pip-version-check uv
uv=/opt/python/cp311-cp311/bin/uv
"$uv" python install 3.11
"$uv" venv --quiet --python 3.11 /tmp/build-venv
"$uv" pip install --quiet --python /tmp/build-venv/bin/python '.[reapi]' nuitka
/tmp/build-venv/bin/python build/binary.py --mode standalone --out dist/binary
