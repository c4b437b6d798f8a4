"""Which proxy a remote cache request takes, from the variables Turborepo's client reads."""

from __future__ import annotations

import pytest

from vx.cache.remote.http1 import Tunnel
from vx.cache.remote.proxy import Proxies

PROXY = Tunnel("proxy.corp", 3128)


@pytest.mark.parametrize(
    ("env", "scheme", "host", "expected"),
    [
        ({}, "https", "cache.corp", None),
        ({"HTTPS_PROXY": "http://proxy.corp:3128"}, "https", "cache.corp", PROXY),
        ({"https_proxy": "proxy.corp:3128"}, "https", "cache.corp", PROXY),
        ({"HTTPS_PROXY": "http://proxy.corp:3128"}, "http", "cache.corp", None),
        ({"HTTP_PROXY": "http://proxy.corp:3128"}, "http", "cache.corp", PROXY),
        ({"ALL_PROXY": "http://proxy.corp:3128"}, "http", "cache.corp", PROXY),
        ({"HTTPS_PROXY": "http://proxy.corp:3128", "https_proxy": "http://other:1"},
         "https", "cache.corp", PROXY),
        ({"HTTP_PROXY": "http://proxy.corp"}, "http", "c", Tunnel("proxy.corp", 80)),
    ],
)  # fmt: skip
def test_the_schemes_own_variable_then_all_proxy(
    env: dict[str, str], scheme: str, host: str, expected: Tunnel | None
) -> None:
    assert Proxies.from_env(env).for_url(scheme, host) == expected


@pytest.mark.parametrize(
    ("no_proxy", "host", "bypassed"),
    [
        ("*", "cache.corp", True),
        ("corp", "cache.corp", True),
        (".corp", "cache.corp", True),
        ("cache.corp", "cache.corp", True),
        ("CACHE.corp", "cache.corp", True),
        ("ache.corp", "cache.corp", False),
        ("other.corp, cache.corp", "cache.corp", True),
        ("other.corp", "cache.corp", False),
        ("127.0.0.1", "127.0.0.1", True),
        ("10.0.0.0/8", "10.1.2.3", True),
        ("10.0.0.0/8", "11.1.2.3", False),
        ("::1", "::1", True),
        ("", "cache.corp", False),
    ],
)
def test_no_proxy_hosts_domains_addresses_and_blocks(
    no_proxy: str, host: str, bypassed: bool
) -> None:
    proxies = Proxies.from_env({"HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": no_proxy})
    assert (proxies.for_url("https", host) is None) == bypassed
    lower = Proxies.from_env({"https_proxy": "http://proxy.corp:3128", "no_proxy": no_proxy})
    assert (lower.for_url("https", host) is None) == bypassed


def test_credentials_in_the_proxy_url_become_basic_authorization() -> None:
    proxies = Proxies.from_env({"HTTPS_PROXY": "http://me%40corp:s3cret@proxy.corp:3128"})
    tunnel = proxies.for_url("https", "cache.corp")
    assert tunnel == Tunnel("proxy.corp", 3128, "Basic bWVAY29ycDpzM2NyZXQ=")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("socks5://proxy:1080",
         "HTTPS_PROXY is a socks5:// proxy — vx reaches caches through http:// proxies only"),
        ("https://proxy:3128",
         "HTTPS_PROXY is a https:// proxy — vx reaches caches through http:// proxies only"),
        ("http://proxy:99999", "HTTPS_PROXY is not a proxy URL — set it to http://host:port"),
        ("http://proxy\r\n:1", "HTTPS_PROXY is not a proxy URL — set it to http://host:port"),
    ],
)  # fmt: skip
def test_a_proxy_vx_cannot_use_is_refused_by_name(value: str, message: str) -> None:
    with pytest.raises(ValueError, match="proxy") as caught:
        Proxies.from_env({"HTTPS_PROXY": value})
    assert str(caught.value) == message
