"""Which CA certificates vx's HTTPS connections trust: the user's choice, else the system's.

A Python linked against the system's OpenSSL finds the system's certificates through the
paths that OpenSSL was built with. The standalone binary carries the OpenSSL of the machine
that built it, and its built-in paths (`/usr/lib/ssl` from a Debian build) may not exist
where it runs: on Fedora, RHEL, Alpine or macOS it would trust nothing. So when those paths
hold nothing, the bundle is looked for where the common systems keep theirs.
`SSL_CERT_FILE` and `SSL_CERT_DIR` come first, as OpenSSL itself reads them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vx.util.record import Record

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

# Where systems keep one PEM file of every trusted CA, most common first.
CA_FILES = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu, Alpine, Arch, Gentoo
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL, CentOS, Amazon Linux
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  # the same, where the link is absent
    "/etc/ssl/ca-bundle.pem",  # openSUSE, SLES
    "/etc/ssl/cert.pem",  # Alpine, macOS, the BSDs
    "/usr/local/etc/openssl/cert.pem",  # Homebrew's OpenSSL on macOS
    "/usr/local/share/certs/ca-root-nss.crt",  # FreeBSD
)
# Where they keep one file per CA (hashed names), for a system with no bundle file.
CA_DIRS = ("/etc/ssl/certs", "/etc/pki/tls/certs")


class CaLocations(Record):
    """What to load: a bundle file, a directory of certificates, or both."""

    cafile: str | None
    capath: str | None


def ca_locations(
    env: Mapping[str, str], *, root: str = "/", defaults: tuple[str, str] | None = None
) -> CaLocations | None:
    """Where the trusted CAs are; None when OpenSSL's own built-in paths hold them.

    `root` is the file system's root (a test points it at a tree holding one layout);
    `defaults` are OpenSSL's built-in (file, directory), by default this OpenSSL's.
    """
    cafile, capath = env.get("SSL_CERT_FILE") or None, env.get("SSL_CERT_DIR") or None
    if cafile or capath:
        return CaLocations(cafile, capath)
    if defaults is None:
        import ssl

        paths = ssl.get_default_verify_paths()
        defaults = (paths.openssl_cafile, paths.openssl_capath)
    default_file, default_dir = defaults
    if os.path.isfile(_under(root, default_file)) or _holds_files(_under(root, default_dir)):  # noqa: PTH113
        return None
    for candidate in CA_FILES:
        path = _under(root, candidate)
        if os.path.isfile(path):  # noqa: PTH113
            return CaLocations(path, None)
    for candidate in CA_DIRS:
        path = _under(root, candidate)
        if _holds_files(path):
            return CaLocations(None, path)
    return None


def client_context(
    env: Mapping[str, str] | None = None,
    *,
    root: str = "/",
    defaults: tuple[str, str] | None = None,
) -> ssl.SSLContext:
    """A verifying client context trusting `ca_locations`' CAs (OpenSSL's defaults if None)."""
    import ssl

    found = ca_locations(os.environ if env is None else env, root=root, defaults=defaults)
    if found is None:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=found.cafile, capath=found.capath)


def _under(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/")) if path else ""  # noqa: PTH118


def _holds_files(directory: str) -> bool:
    try:
        with os.scandir(directory) as entries:
            return any(True for _ in entries)
    except OSError:
        return False
