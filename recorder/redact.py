"""Secrets never reach the disk: what is redacted from headers, URLs and bodies.

A recording is evidence that gets shared (attached to a bug, committed as a
regression corpus), so credentials are removed before anything is written:

* headers whose name looks secret (``Authorization``, ``Proxy-Authorization``,
  ``Cookie``, ``Set-Cookie``, ``X-Api-Key``, anything with key, token, secret,
  password, auth, cookie, credential or session in it), or whose value looks
  like a credential (``Bearer …``, ``Basic …``, ``sk-…``);
* URL userinfo (dropped), fragments (dropped) and query parameters with such
  names or values;
* request body string values under such keys, or shaped like a known API key.
  Only strings: ``max_tokens: 100`` or ``timings_per_token: true`` are
  parameters, not secrets, and stay as sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from yarl import URL

__all__ = [
    "REDACTED",
    "is_secret_name",
    "is_secret_value",
    "redact_body",
    "redact_headers",
    "redact_url",
]

REDACTED: Final = "<redacted>"

_SECRET_NAME: Final = re.compile(
    r"key|token|secret|passw|auth|cookie|credential|session|signature", re.IGNORECASE
)
# Shapes of credentials that can turn up under an innocent name.
_KEY_SHAPES: Final = (
    r"(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"  # OpenAI, Anthropic and look-alikes
    r"|hf_[A-Za-z0-9]{20,}"  # Hugging Face
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API key
)
_SECRET_VALUE: Final = re.compile(rf"(?:{_KEY_SHAPES})")
# In a header value an auth scheme also gives it away; in a prompt it would not.
_SECRET_HEADER_VALUE: Final = re.compile(
    rf"(?:Bearer|Basic|Digest|Token)\s+\S+|(?:{_KEY_SHAPES})", re.IGNORECASE
)


def is_secret_name(name: str) -> bool:
    """Whether a header, query parameter or body field of this name holds a secret."""
    return _SECRET_NAME.search(name) is not None


def is_secret_value(value: str) -> bool:
    """Whether a string is shaped like an API key (whatever it is called)."""
    return _SECRET_VALUE.fullmatch(value.strip()) is not None


def redact_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a plain map (names lower-cased, repeated ones joined with ", "),
    secrets replaced by ``REDACTED``."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    result: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        secret = is_secret_name(key) or _SECRET_HEADER_VALUE.fullmatch(value.strip())
        shown = REDACTED if secret else value
        result[key] = shown if key not in result else f"{result[key]}, {shown}"
    return result


def redact_url(url: str | URL) -> str:
    """The URL without userinfo or fragment, secret query values replaced."""
    parsed = url if isinstance(url, URL) else URL(url)
    if parsed.user is not None or parsed.password is not None:
        parsed = parsed.with_user(None)
    parsed = parsed.with_fragment(None)
    if parsed.query:
        query = [
            (name, REDACTED if is_secret_name(name) or is_secret_value(value) else value)
            for name, value in parsed.query.items()
        ]
        parsed = parsed.with_query(query)
    return str(parsed)


def redact_body(value: Any) -> Any:
    """A JSON value with secret string fields replaced (a new value; the input is untouched)."""
    if isinstance(value, Mapping):
        return {
            key: (
                REDACTED
                if isinstance(item, str) and (is_secret_name(str(key)) or is_secret_value(item))
                else redact_body(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact_body(item) for item in value]
    if isinstance(value, str) and is_secret_value(value):
        return REDACTED
    return value
