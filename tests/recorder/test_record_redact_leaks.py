"""Secrets an adversarial probe got onto the disk (issue 14), one test each: through
``record()`` and through the proxy, the file and every message stay clean."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner
from record_upstreams import Upstream, llm_app

from tcr.cli import main
from tcr.corpus import read_recording
from tcr.recorder import REDACTED, RecordError, record_sync, redact_body, redact_url, running_proxy
from tcr.recorder.capture import Capture

CHAT = "/v1/chat/completions?n=2"
BODY = {"messages": [{"role": "user", "content": "hi"}], "stream": True}


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def written(root: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file())


@pytest.mark.parametrize(
    "name", ["sig", "SIG", "key", "token", "api_key", "access_token", "code", "Signature"]
)
def test_secret_query_parameters_keep_their_name_and_lose_their_value(name: str) -> None:
    shown = redact_url(f"http://h/v1/chat/completions?{name}=s3cr3t-value&n=2")
    assert "s3cr3t-value" not in shown
    assert f"{name}=" in shown and "n=2" in shown


def test_secret_named_lists_and_objects_are_redacted_whole() -> None:
    body = {"password": ["pw-1", "pw-2"], "auth": {"value": "auth-secret-1"}, "n": 1}
    assert redact_body(body) == {"password": REDACTED, "auth": REDACTED, "n": 1}


def test_numbers_under_token_names_stay_parameters() -> None:
    body = {"stop_token_ids": [1, 2], "max_tokens": 5, "logit_bias": {"15": 1}}
    assert redact_body(body) == body


def test_tool_parameters_named_like_secrets_keep_their_schema() -> None:
    schema = {"properties": {"api_key": {"type": "string", "description": "the key"}}}
    body = {"tools": [{"type": "function", "function": {"name": "f", "parameters": schema}}]}
    assert redact_body(body) == body


def test_bearer_and_basic_tokens_are_redacted_under_innocent_keys() -> None:
    body = {"note": "Bearer tok3n-abcdefgh", "x": ["use Basic dXNlcjpodW50ZXIy please"]}
    shown = json.dumps(redact_body(body))
    assert "tok3n-abcdefgh" not in shown and "dXNlcjpodW50ZXIy" not in shown
    assert "please" in shown


@pytest.mark.parametrize(
    "prose",
    ["Basic question: what is 2+2?", "Basic arithmetic", "the bearer of bad news", "Token limit"],
)
def test_prose_that_names_an_auth_scheme_is_kept(prose: str) -> None:
    assert redact_body({"content": prose}) == {"content": prose}


SECRETS = ("SIGSECRET123", "CODESECRET1", "PWLISTSECRET", "AUTHOBJSECRET", "BEARERSECRET99")
LEAKY_BODY = {
    **BODY,
    "password": ["PWLISTSECRET"],
    "auth": {"value": "AUTHOBJSECRET"},
    "note": "Bearer BEARERSECRET99",
}


def test_record_keeps_no_query_or_body_secret(upstream: Upstream, tmp_path: Path) -> None:
    url = f"{upstream.url}{CHAT}&sig=SIGSECRET123&code=CODESECRET1"
    recorded = record_sync(url, LEAKY_BODY, tmp_path / "r.msgpack")
    data = written(tmp_path)
    assert recorded.complete
    assert [secret for secret in SECRETS if secret.encode() in data] == []
    assert not any(secret in recorded.endpoint for secret in SECRETS)


def test_proxy_keeps_no_query_or_body_secret(upstream: Upstream, tmp_path: Path) -> None:
    async def post(url: str) -> bytes:
        async with aiohttp.ClientSession() as session, session.post(url, json=LEAKY_BODY) as r:
            return await r.read()

    with running_proxy(upstream.url, tmp_path) as proxy:
        asyncio.run(post(f"{proxy.url}{CHAT}&sig=SIGSECRET123&code=CODESECRET1"))
        assert proxy.recordings and proxy.recordings[0].complete
    assert [secret for secret in SECRETS if secret.encode() in written(tmp_path)] == []


def test_a_401_echoing_the_credential_keeps_it_out_of_the_error(
    upstream: Upstream, tmp_path: Path
) -> None:
    headers = {"Authorization": "Bearer ECHOEDKEY123", "X-Api-Key": "XAPIKEY456"}
    url = f"{upstream.url}/unauthorized?key=QUERYKEY789"
    recorded = record_sync(url, BODY, tmp_path / "r.msgpack", headers=headers)
    trailer = read_recording(recorded.path).end
    trailer_error = trailer["error"] if trailer is not None else None
    assert recorded.error is not None and recorded.error.startswith("HTTP 401")
    for secret in ("ECHOEDKEY123", "XAPIKEY456", "QUERYKEY789"):
        assert secret not in recorded.error
        assert trailer_error is not None and secret not in trailer_error


def test_userinfo_and_api_key_together_record_and_reach_no_disk(
    upstream: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TCR_TEST_KEY", "ENVKEY-12345")
    endpoint = upstream.url.replace("http://", "http://uzer:pazzword@") + CHAT
    command = ["record", "--endpoint", endpoint, "--prompt", "hi", "--json"]
    options = ["--api-key-env", "TCR_TEST_KEY", "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, [*command, *options])
    assert result.exit_code == 0, result.output
    sent = upstream.requests[-1][2]
    assert sent["Authorization"] == "Bearer ENVKEY-12345"  # the explicit key wins
    for secret in ("uzer", "pazzword", "ENVKEY-12345"):
        assert secret.encode() not in written(tmp_path)
        assert secret not in result.output


def test_userinfo_alone_is_sent_as_basic_auth(upstream: Upstream, tmp_path: Path) -> None:
    endpoint = upstream.url.replace("http://", "http://uzer:pazzword@") + CHAT
    recorded = record_sync(endpoint, BODY, tmp_path / "r.msgpack")
    assert recorded.complete
    assert upstream.requests[-1][2]["Authorization"].startswith("Basic ")
    assert b"uzer" not in written(tmp_path) and b"pazzword" not in written(tmp_path)


def test_record_errors_never_print_the_query_secret() -> None:
    with pytest.raises(RecordError) as caught:
        record_sync("http://127.0.0.1:1/x?sig=SIGSECRET123", BODY, "/nonexistent/x.msgpack")
    assert "SIGSECRET123" not in str(caught.value)


def test_proxy_upstream_userinfo_gives_way_to_the_clients_authorization(
    upstream: Upstream, tmp_path: Path
) -> None:
    async def post(url: str, headers: dict[str, str]) -> int:
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, json=BODY, headers=headers) as response,
        ):
            await response.read()
            return response.status

    base = upstream.url.replace("http://", "http://uzer:pazzword@")
    with running_proxy(base, tmp_path) as proxy:
        assert "pazzword" not in str(proxy.upstream)
        assert asyncio.run(post(f"{proxy.url}{CHAT}", {})) == 200
        assert upstream.requests[-1][2]["Authorization"].startswith("Basic ")
        own = {"Authorization": "Bearer CLIENTKEY123"}
        assert asyncio.run(post(f"{proxy.url}{CHAT}", own)) == 200
        assert upstream.requests[-1][2]["Authorization"] == "Bearer CLIENTKEY123"
        assert asyncio.run(post(f"{proxy.url}/unauthorized", own)) == 401
    data = written(tmp_path)
    assert b"uzer" not in data and b"pazzword" not in data and b"CLIENTKEY123" not in data


def test_an_echoed_secret_cut_by_the_excerpt_leaves_no_part_of_it(tmp_path: Path) -> None:
    capture = Capture(
        tmp_path / "r.msgpack",
        start_ns=0,
        endpoint="http://h/v1/chat/completions",
        request=BODY,
        status=401,
        reason="Unauthorized",
        headers=[("Content-Type", "text/plain")],
        request_headers=[("Authorization", "Bearer CUTSECRET-0123456789")],
    )
    capture.feed([b"x" * 180 + b" Bearer CUTSECRET-0123456789 is not valid"])
    error = capture.close().error
    assert error is not None and error.startswith("HTTP 401") and "CUTSEC" not in error
