"""Secrets never reach the disk: what is redacted from headers, URLs and bodies.

A recording is evidence that gets shared (attached to a bug, committed as a
regression corpus), so credentials are removed before anything is written:

* headers whose name looks secret (``Authorization``, ``Proxy-Authorization``,
  ``Cookie``, ``Set-Cookie``, ``X-Api-Key``, anything with key, token, secret,
  password, auth, cookie, credential, session or signature in it, or named
  ``sig``, ``code``, ``pwd``…), or whose value looks like a credential
  (``Bearer …``, ``Basic …``, ``sk-…``);
* URL userinfo (dropped), fragments (dropped) and query parameters with such
  names (the value goes, the name stays) or values;
* request body values under such keys, whole, when they hold any string (a list
  or an object too); and credential-shaped spans of any other string
  (``Bearer …`` with a token-like word, ``Basic`` with ``user:pass`` in base64,
  well-known key prefixes). Numbers and booleans are parameters, not secrets:
  ``max_tokens: 100`` or ``stop_token_ids: [2]`` stay as sent.

Some text is written that no rule can foresee: an error body that echoes the
credential back. :class:`Secrets` holds the credentials one request carries, so
that such text can be scrubbed of them (raw, URL-encoded, JSON-escaped, base64).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, quote_plus

from yarl import URL

__all__ = [
    "REDACTED",
    "Secrets",
    "is_secret_name",
    "is_secret_value",
    "redact_body",
    "redact_headers",
    "redact_text",
    "redact_url",
]

REDACTED: Final = "<redacted>"

_SECRET_NAME: Final = re.compile(
    r"key|token|secret|passw|auth|cookie|credential|session|signature", re.IGNORECASE
)
# Names too short to search for inside others ("code" is in "encoding"): secrets
# only as the whole name. Azure SAS ``sig``, OAuth and Azure Functions ``code``.
_SECRET_EXACT_NAMES: Final = frozenset({"sig", "code", "pwd", "pass", "jwt", "bearer"})
# Shapes of credentials that can turn up under an innocent name.
_KEY_SHAPES: Final = (
    r"(?<![\w\-])(?:"
    r"(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"  # OpenAI, Anthropic and look-alikes
    r"|hf_[A-Za-z0-9]{20,}"  # Hugging Face
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API key
    r")"
)
_KEY_SHAPE: Final = re.compile(_KEY_SHAPES)
# An auth scheme and its credentials (RFC 9110 §11.4: a token68).
_SCHEME_TOKEN: Final = re.compile(
    r"\b(Bearer|Basic|Digest|Token)(\s+)([A-Za-z0-9\-._~+/]+=*)", re.IGNORECASE
)
# In a header value an auth scheme alone gives it away; in a prompt it would not.
_SECRET_HEADER_VALUE: Final = re.compile(
    rf"(?:Bearer|Basic|Digest|Token)\s+\S+|{_KEY_SHAPES}", re.IGNORECASE
)
# Shorter secrets are not scrubbed from free text: every "pw" of an error message
# would go, and a secret that short is not kept secret by redaction anyway.
_SCRUB_MIN_LENGTH: Final = 4


def is_secret_name(name: str) -> bool:
    """Whether a header, query parameter or body field of this name holds a secret."""
    return name.lower() in _SECRET_EXACT_NAMES or _SECRET_NAME.search(name) is not None


def _is_credential(scheme: str, token: str) -> bool:
    """Whether ``scheme token`` in free text is a credential, not prose ("Basic
    arithmetic", "the bearer of bad news")."""
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(token, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return False
        return ":" in decoded and decoded.isprintable()
    return len(token) >= 16 or (len(token) >= 8 and any(c.isdigit() for c in token))


def _credential_spans(text: str) -> Iterable[str]:
    """The credentials in free text: key-shaped words and the tokens after an auth scheme."""
    yield from _KEY_SHAPE.findall(text)
    for match in _SCHEME_TOKEN.finditer(text):
        if _is_credential(match[1], match[3]):
            yield match[3]


def is_secret_value(value: str) -> bool:
    """Whether a string holds a credential (an API key, ``Bearer …``), whatever it is called."""
    return next(iter(_credential_spans(value)), None) is not None


def redact_text(text: str) -> str:
    """``text`` with each credential in it replaced by ``REDACTED`` (an auth scheme's
    name stays: ``Bearer <redacted>``), the prose around it kept."""

    def token(match: re.Match[str]) -> str:
        if not _is_credential(match[1], match[3]):
            return match[0]
        return f"{match[1]}{match[2]}{REDACTED}"

    return _SCHEME_TOKEN.sub(token, _KEY_SHAPE.sub(REDACTED, text))


def redact_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a plain map (names lower-cased, repeated ones joined with ", "),
    secrets replaced by ``REDACTED``."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    result: dict[str, str] = {}
    for name, value in pairs:
        key = name.lower()
        secret = is_secret_name(key) or _SECRET_HEADER_VALUE.fullmatch(value.strip())
        shown = REDACTED if secret else redact_text(value)
        result[key] = shown if key not in result else f"{result[key]}, {shown}"
    return result


def redact_url(url: str | URL) -> str:
    """The URL without userinfo or fragment, secret query values replaced (names kept)."""
    parsed = url if isinstance(url, URL) else URL(url)
    if parsed.is_absolute() and (parsed.user is not None or parsed.password is not None):
        parsed = parsed.with_user(None)
    parsed = parsed.with_fragment(None)
    if parsed.query:
        query = [
            (
                redact_text(name),
                REDACTED if is_secret_name(name) or is_secret_value(value) else value,
            )
            for name, value in parsed.query.items()
        ]
        parsed = parsed.with_query(query)
    return str(parsed)


def _holds_text(value: Any) -> bool:
    return next(iter(_strings(value)), None) is not None


def redact_body(value: Any) -> Any:
    """A JSON value with secrets replaced (a new value; the input is untouched)."""
    return _redact(value, names_count=True)


def _redact(value: Any, *, names_count: bool) -> Any:
    if isinstance(value, Mapping):
        return {
            key: (
                REDACTED
                if names_count and is_secret_name(str(key)) and _holds_text(item)
                # A JSON Schema's ``properties`` maps parameter names to their
                # schemas: a tool's ``api_key`` parameter is declared, not given.
                else _redact(item, names_count=key != "properties")
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact(item, names_count=True) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


@dataclass(frozen=True, slots=True)
class Secrets:
    """The credentials one request carries (header, URL and body values the rules
    above redact), to scrub from text about it that no rule foresees: an error
    body that echoes them, an exception message that quotes the URL."""

    values: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        url: str | URL | None = None,
        headers: Iterable[tuple[str, str]] = (),
        body: Any = None,
    ) -> Secrets:
        found: set[str] = set()
        for name, value in headers:
            found.update(_header_secrets(name, value))
        if url is not None:
            found.update(_url_secrets(url if isinstance(url, URL) else URL(url)))
        found.update(_body_secrets(body, names_count=True))
        return cls(frozenset(_encodings(found)))

    def scrub(self, text: str) -> str:
        """``text`` with every form of every secret replaced by ``REDACTED``."""
        pattern = self._pattern()
        return text if pattern is None else pattern.sub(REDACTED, text)

    def scrub_value(self, value: Any) -> Any:
        """A JSON value with :meth:`scrub` applied to every string in it."""
        if isinstance(value, Mapping):
            return {self.scrub(str(k)): self.scrub_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub_value(item) for item in value]
        return self.scrub(value) if isinstance(value, str) else value

    def _pattern(self) -> re.Pattern[str] | None:
        if not self.values:
            return None
        longest_first = sorted(self.values, key=len, reverse=True)
        return re.compile("|".join(map(re.escape, longest_first)))


def _header_secrets(name: str, value: str) -> Iterable[str]:
    value = value.strip()
    if is_secret_name(name) or _SECRET_HEADER_VALUE.fullmatch(value):
        yield value
        scheme, _, token = value.partition(" ")
        if token.strip():
            yield token.strip()
            yield from _basic_parts(scheme, token.strip())
    yield from _credential_spans(value)


def _basic_parts(scheme: str, token: str) -> Iterable[str]:
    """The user and password a ``Basic`` credential encodes."""
    if scheme.lower() == "basic" and _is_credential(scheme, token):
        user, _, password = base64.b64decode(token).decode("utf-8").partition(":")
        yield from (user, password, f"{user}:{password}")


def _url_secrets(url: URL) -> Iterable[str]:
    if url.is_absolute():
        user, password = url.user or "", url.password or ""
        yield from (user, password)
        if user or password:
            yield f"{user}:{password}"
            yield base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        yield from (url.raw_user or "", url.raw_password or "")
    for name, value in url.query.items():
        if is_secret_name(name):
            yield value
        yield from _credential_spans(name)
        yield from _credential_spans(value)
    for pair in url.raw_query_string.split("&"):  # as sent, however it was encoded
        name, _, value = pair.partition("=")
        if is_secret_name(name):
            yield value


def _body_secrets(value: Any, *, names_count: bool) -> Iterable[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if names_count and is_secret_name(str(key)):
                yield from _strings(item)
            else:
                yield from _body_secrets(item, names_count=key != "properties")
    elif isinstance(value, list):
        for item in value:
            yield from _body_secrets(item, names_count=True)
    elif isinstance(value, str):
        yield from _credential_spans(value)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _encodings(secrets: Iterable[str]) -> Iterable[str]:
    """Each secret as it may be written back: raw, URL-encoded, JSON-escaped, base64."""
    for secret in secrets:
        if len(secret) < _SCRUB_MIN_LENGTH:
            continue
        raw = secret.encode("utf-8", "surrogatepass")
        yield from (
            secret,
            quote(raw, safe=""),
            quote(raw),
            quote_plus(raw),
            json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1],
            base64.b64encode(raw).decode("ascii"),
            base64.urlsafe_b64encode(raw).decode("ascii"),
            base64.b64encode(raw).decode("ascii").rstrip("="),
        )
