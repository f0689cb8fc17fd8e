"""Redaction fuzzed: generated requests with secrets planted in every position
(headers, query strings, URL userinfo, nested body values, and the errors of a
server that echoes them) are recorded through the real recorder and proxy against
a local upstream, then every byte written and every message is grepped for each
secret: raw, URL-encoded, JSON-escaped and base64.

Property: no secret on disk or in a message; every outcome is a clean result or
a ``TcrError`` whose message is one line. The one exception is by design: the
frames of a response are exactly what the server sent, so an echoing route's
copy of the credentials stays in them (and nowhere else).
"""

from __future__ import annotations

import asyncio
import base64
import json
import string
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import aiohttp
import pytest
from corpus.fuzzing import clean_or_one_line_error, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from record_upstreams import Upstream, free_port, llm_app
from yarl import URL

from tcr.corpus import read_recording
from tcr.errors import TcrError
from tcr.recorder import Recorded, record_sync, running_proxy

TOKEN_CHARS = string.ascii_letters + string.digits + "-._~+/"
TEXT_CHARS = TOKEN_CHARS + ' "\\&=?:@#%é✓'
SECRET_HEADERS = ("Authorization", "X-Api-Key", "Api-Key", "X-Auth-Token", "Cookie")
SCHEMES = ("Bearer ", "Token ", "")
SECRET_QUERY = ("sig", "SIG", "key", "token", "api_key", "access_token", "code", "Signature")
SECRET_FIELDS = ("password", "api_key", "auth", "secret", "access_token", "credentials")
INNOCENT = ("note", "metadata", "extra", "options", "x")
# Each route, and what a client of the proxy gets from it (None: its stream is cut).
ROUTES = {
    "/v1/chat/completions": 200,
    "/unauthorized": 401,
    "/echo": 200,
    "/error": 500,
    "/json": 200,
    "/drop": None,
}
# Routes whose body echoes the request's credentials: a 401 page, and a JSON echo
# of the request (which the not-a-stream error quotes).
ECHOING = ("/unauthorized", "/echo")


def token_secrets() -> st.SearchStrategy[str]:
    """Credentials as issued: token-like words (the prefix makes each one unique in
    the files and gives it the digit that tells a token from a prose word)."""
    return st.text(TOKEN_CHARS, min_size=10, max_size=24).map(lambda text: f"Q7{text}")


def text_secrets() -> st.SearchStrategy[str]:
    """Secrets a user may put in a query or a body: anything, quotes and non-ASCII too."""
    return st.text(TEXT_CHARS, min_size=10, max_size=24).map(lambda text: f"Q7{text}")


@dataclass(frozen=True, slots=True)
class Planted:
    """A request with secrets in it, and the secrets."""

    route: str
    query: tuple[tuple[str, str], ...]
    user: str | None
    password: str | None
    headers: dict[str, str]
    body: dict[str, Any]
    secrets: tuple[str, ...]

    def url(self, base: str) -> URL:
        url = URL(base + self.route).with_query(self.query)
        if self.user is None:
            return url
        return url.with_user(self.user).with_password(self.password)


def _nest(body: dict[str, Any], path: list[str], key: str, value: Any) -> None:
    target = body
    for part in path:
        child = target.get(part)
        if not isinstance(child, dict):
            child = target[part] = {}  # what an earlier plant left there goes
        target = child
    target[key] = value


@st.composite
def planted_requests(draw: st.DrawFn) -> Planted:
    planted: list[str] = []

    def secret(kind: st.SearchStrategy[str]) -> str:
        value = draw(kind)
        planted.append(value)
        return value

    headers = {
        name: draw(st.sampled_from(SCHEMES)) + secret(token_secrets())
        for name in draw(st.lists(st.sampled_from(SECRET_HEADERS), unique=True, max_size=3))
    }
    if draw(st.booleans()):
        headers["X-" + draw(st.sampled_from(INNOCENT))] = "Bearer " + secret(token_secrets())
    names = draw(st.lists(st.sampled_from(SECRET_QUERY), unique=True, max_size=3))
    query = (*((name, secret(text_secrets())) for name in names), ("n", "2"))
    user = password = None
    if draw(st.booleans()):
        user, password = secret(token_secrets()), secret(text_secrets())
        planted.append(base64.b64encode(f"{user}:{password}".encode()).decode())

    body: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
    for _ in range(draw(st.integers(0, 4))):
        path = draw(st.lists(st.sampled_from(INNOCENT), max_size=3))
        shape = draw(st.sampled_from(("string", "list", "object", "bearer", "key", "prose")))
        if shape in ("string", "list", "object"):
            value: Any = secret(text_secrets())
            value = {"string": value, "list": [value], "object": {"value": value}}[shape]
            _nest(body, path, draw(st.sampled_from(SECRET_FIELDS)), value)
        elif shape == "bearer":
            _nest(body, path, draw(st.sampled_from(INNOCENT)), "Bearer " + secret(token_secrets()))
        elif shape == "key":
            key = "sk-" + draw(st.text(string.ascii_letters + string.digits, min_size=20))
            planted.append(key)
            _nest(body, path, draw(st.sampled_from(INNOCENT)), [key])
        else:
            prose = f"my header is Bearer {secret(token_secrets())}, is that right?"
            _nest(body, path, draw(st.sampled_from(INNOCENT)), prose)
    return Planted(
        route=draw(st.sampled_from(tuple(ROUTES))),
        query=query,
        user=user,
        password=password,
        headers=headers,
        body=body,
        secrets=tuple(planted),
    )


def forms(secret: str) -> set[bytes]:
    """A secret as it may be written: raw, URL-encoded, JSON-escaped, base64."""
    raw = secret.encode()
    return {
        raw,
        quote(raw, safe="").encode(),
        quote_plus(raw).encode(),
        URL.build(query={"q": secret}).raw_query_string[2:].encode(),
        json.dumps(secret)[1:-1].encode(),
        json.dumps(secret, ensure_ascii=False)[1:-1].encode(),
        base64.b64encode(raw),
        base64.urlsafe_b64encode(raw),
    }


def written(root: Path, *, echoed: bool) -> bytes:
    """Every byte written under ``root``; without the frames' bodies when the server
    echoed the credentials (frames hold what the server sent, by design)."""
    data = b""
    for path in sorted(root.rglob("*")):
        content = path.read_bytes()
        if echoed:
            for frame in read_recording(path).frames:
                payload = frame.data if isinstance(frame.data, bytes) else frame.data.encode()
                content = content.replace(payload, b"")
        data += content
    return data


def assert_nothing_leaked(planted: Planted, data: bytes, messages: list[str]) -> None:
    text = "\n".join(messages).encode()
    for secret in planted.secrets:
        for form in forms(secret):
            assert form not in data, f"{secret!r} on disk as {form!r}"
            assert form not in text, f"{secret!r} in a message as {form!r}: {messages}"


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def outcome_messages(outcome: Recorded | TcrError) -> list[str]:
    if isinstance(outcome, TcrError):
        return [str(outcome)]
    return [outcome.endpoint, outcome.reason, outcome.error or "", str(outcome.path)]


@fuzz_settings(40)
@given(planted=planted_requests(), refused=st.booleans())
def test_record_writes_and_prints_no_planted_secret(
    upstream: Upstream, planted: Planted, refused: bool
) -> None:
    base = f"http://127.0.0.1:{free_port()}" if refused else upstream.url
    with tempfile.TemporaryDirectory() as out:
        outcome = clean_or_one_line_error(
            lambda: record_sync(
                str(planted.url(base)),
                planted.body,
                Path(out) / "r.msgpack",
                headers=planted.headers,
                timeout=10,
            )
        )
        echoed = planted.route in ECHOING and not refused
        assert_nothing_leaked(planted, written(Path(out), echoed=echoed), outcome_messages(outcome))


async def _through(proxy_url: str, planted: Planted) -> int | None:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            planted.url(proxy_url).with_user(None),
            json=planted.body,
            headers=planted.headers,
        ) as response,
    ):
        try:
            await response.read()
        except aiohttp.ClientPayloadError:
            return None
        return response.status


@fuzz_settings(25)
@given(planted=planted_requests())
def test_proxy_writes_and_prints_no_planted_secret(upstream: Upstream, planted: Planted) -> None:
    # The userinfo is the upstream's (``--upstream http://u:p@host``); the rest is the client's.
    target = planted.url(upstream.url)
    base = str(target.with_path("").with_query(None))
    with tempfile.TemporaryDirectory() as out:
        with running_proxy(base, out) as proxy:
            status = asyncio.run(_through(proxy.url, planted))
            upstream_url = str(proxy.upstream)
        assert status == ROUTES[planted.route]  # the proxy did not fail on its own
        messages = [upstream_url]
        for recorded in proxy.recordings:
            messages += outcome_messages(recorded)
        assert_nothing_leaked(planted, written(Path(out), echoed=False), messages)
