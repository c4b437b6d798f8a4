"""The CA finder against fake roots holding one system's layout, and a real TLS handshake.

OpenSSL's built-in paths are given as a Debian build's (`/usr/lib/ssl/…`), absent from each
fake root, as they are for the release binary on any system but the one that built it.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading

import pytest

from vx.util.tlsroots import CA_FILES, CaLocations, ca_locations, client_context

DEBIAN_BUILD = ("/usr/lib/ssl/cert.pem", "/usr/lib/ssl/certs")


def tree(tmp_path, *files):
    for name in files:
        path = tmp_path / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("-----BEGIN CERTIFICATE-----\n")
    return str(tmp_path)


@pytest.mark.parametrize(
    "layout",
    [
        "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu
        "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        "/etc/ssl/ca-bundle.pem",  # openSUSE
        "/etc/ssl/cert.pem",  # Alpine, macOS
    ],
)
def test_each_systems_bundle_is_found_where_only_it_is(tmp_path, layout):
    root = tree(tmp_path, layout)
    found = ca_locations({}, root=root, defaults=DEBIAN_BUILD)
    assert found == CaLocations(str(tmp_path / layout.lstrip("/")), None)
    assert layout in CA_FILES


def test_a_directory_of_certificates_when_no_bundle_file(tmp_path):
    root = tree(tmp_path, "/etc/pki/tls/certs/1a2b3c4d.0")
    assert ca_locations({}, root=root, defaults=DEBIAN_BUILD) == CaLocations(
        None, str(tmp_path / "etc/pki/tls/certs")
    )


def test_the_most_common_bundle_wins_where_several_are(tmp_path):
    root = tree(tmp_path, "/etc/ssl/cert.pem", "/etc/pki/tls/certs/ca-bundle.crt")
    found = ca_locations({}, root=root, defaults=DEBIAN_BUILD)
    assert found == CaLocations(str(tmp_path / "etc/pki/tls/certs/ca-bundle.crt"), None)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"SSL_CERT_FILE": "/mine.pem"}, CaLocations("/mine.pem", None)),
        ({"SSL_CERT_DIR": "/mine"}, CaLocations(None, "/mine")),
        ({"SSL_CERT_FILE": "/a.pem", "SSL_CERT_DIR": "/b"}, CaLocations("/a.pem", "/b")),
    ],
)
def test_ssl_cert_file_and_dir_come_first(tmp_path, env, expected):
    root = tree(tmp_path, "/etc/ssl/cert.pem")
    assert ca_locations(env, root=root, defaults=DEBIAN_BUILD) == expected


def test_openssls_own_paths_are_left_to_it_where_they_hold_certificates(tmp_path):
    """A system Python (or a binary on the system that built it): nothing to add."""
    root = tree(tmp_path, "/usr/lib/ssl/cert.pem", "/etc/pki/tls/certs/ca-bundle.crt")
    assert ca_locations({}, root=root, defaults=DEBIAN_BUILD) is None
    assert ca_locations({}, root=tree(tmp_path / "empty"), defaults=DEBIAN_BUILD) is None


@pytest.fixture(scope="module")
def own_ca(tmp_path_factory):
    """A CA of our own and a certificate it signed for 127.0.0.1, made by the openssl CLI."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed: cannot make a test CA")
    d = tmp_path_factory.mktemp("ca")

    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=vx test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=localhost")  # fmt: skip
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext")  # fmt: skip
    return d


@pytest.fixture
def tls_server(own_ca):
    """A TLS server on 127.0.0.1 that says `ok` to each client that completes a handshake."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(own_ca / "server.pem", own_ca / "server.key")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.sendall(b"ok")
            except (OSError, ssl.SSLError):
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    listener.close()
    thread.join(timeout=60)


def handshake(context, port):
    raw = socket.create_connection(("127.0.0.1", port), timeout=60)
    with raw, context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        return tls.recv(2)


def test_a_context_trusts_the_bundle_found_in_a_rhel_layout(tmp_path, own_ca, tls_server):
    bundle = tmp_path / "etc/pki/tls/certs/ca-bundle.crt"
    bundle.parent.mkdir(parents=True)
    shutil.copyfile(own_ca / "ca.pem", bundle)
    context = client_context({}, root=str(tmp_path), defaults=DEBIAN_BUILD)
    assert handshake(context, tls_server) == b"ok"


def test_without_the_bundle_the_same_server_is_not_trusted(tmp_path, own_ca, tls_server):
    (tmp_path / "etc/ssl").mkdir(parents=True)
    context = client_context({}, root=str(tmp_path), defaults=DEBIAN_BUILD)
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(context, tls_server)
