"""Secrets never reach the disk: the redaction rules, one at a time."""

from __future__ import annotations

import pytest

from tcr.recorder import REDACTED, redact_body, redact_headers, redact_url


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "Proxy-Authorization",
        "Cookie",
        "Set-Cookie",
        "X-Api-Key",
        "Api-Key",
        "x-goog-api-key",
        "X-Auth-Token",
        "X-Client-Secret",
        "X-Password",
    ],
)
def test_secret_header_names_are_redacted(name: str) -> None:
    assert redact_headers({name: "value-123"}) == {name.lower(): REDACTED}


def test_credential_values_are_redacted_whatever_the_header_is_called() -> None:
    headers = {"X-Custom": "Bearer abc", "X-Other": "sk-abcdefghijklmnopqrstuvwx", "Accept": "*/*"}
    assert redact_headers(headers) == {"x-custom": REDACTED, "x-other": REDACTED, "accept": "*/*"}


def test_repeated_headers_are_kept_joined() -> None:
    pairs = [("Vary", "Origin"), ("Vary", "Accept"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]
    assert redact_headers(pairs) == {
        "vary": "Origin, Accept",
        "set-cookie": f"{REDACTED}, {REDACTED}",
    }


def test_url_loses_userinfo_fragment_and_secret_query_values() -> None:
    url = "http://user:hunter2@host:8080/v1/chat/completions?api_key=abc123&stream=1&token=t0k#frag"
    shown = redact_url(url)
    for secret in ("user", "hunter2", "abc123", "t0k", "frag"):
        assert secret not in shown
    assert shown.startswith("http://host:8080/v1/chat/completions?api_key=")
    assert "stream=1" in shown


def test_key_shaped_query_values_are_redacted_under_any_name() -> None:
    assert "sk-" not in redact_url("http://h/x?q=sk-abcdefghijklmnopqrstuvwx")


def test_body_secret_strings_are_redacted_but_parameters_are_not() -> None:
    body = {
        "api_key": "abc",
        "max_tokens": 100,
        "timings_per_token": True,
        "messages": [{"role": "user", "content": "Basic question: what is 2+2?"}],
        "extra": {"password": "pw", "nested": ["sk-abcdefghijklmnopqrstuvwx"]},
    }
    assert redact_body(body) == {
        "api_key": REDACTED,
        "max_tokens": 100,
        "timings_per_token": True,
        "messages": [{"role": "user", "content": "Basic question: what is 2+2?"}],
        "extra": {"password": REDACTED, "nested": [REDACTED]},
    }
    assert body["api_key"] == "abc"  # the input is untouched
