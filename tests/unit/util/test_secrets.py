"""The one rule for secret-looking names that masking, `vx lock` and the not-passed list share."""

from __future__ import annotations

import pytest

from vx.util.secrets import maskable, secret_name


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("NPM_TOKEN", True),
        ("gh_token", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("DB_PASSWORD", True),
        ("DB_PASSWD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("OPENAI_API_KEY", True),
        ("STRIPEAPIKEY", True),  # no word boundary needed: a miss would print a credential
        ("API_KEY_ID", True),
        ("DATABASE_URL", False),
        ("HOME", False),
        ("PATH", False),
    ],
)
def test_secret_name(name: str, *, secret: bool) -> None:
    assert secret_name(name) is secret


def test_short_values_are_not_masked() -> None:
    assert (maskable("abc"), maskable("abcd")) == (False, True)
