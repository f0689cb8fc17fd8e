"""``tcr record`` on the command line: the summary, and exit code 2 with one line
on stderr for every way a recording can fail (keeping what arrived)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from record_upstreams import Upstream, free_port, llm_app, openai_events

from tcr.commands.record import record
from tcr.corpus import read_recording


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream(llm_app()) as server:
        yield server


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(record, list(args), env=env)


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("tcr record: ")
    assert "Traceback" not in result.output
    return result.stderr


def test_record_prints_frames_bytes_ttfb_duration_and_a_preview(
    upstream: Upstream, tmp_path: Path
) -> None:
    out = tmp_path / "r.msgpack"
    result = invoke(
        "--endpoint", f"{upstream.url}/v1/chat/completions?n=4", "--prompt", "hi", "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    for shown in (
        "HTTP 200",
        "sse",
        "6 frames",
        "bytes",
        "TTFB",
        "duration",
        "tok0 tok1 tok2 tok3",
    ):
        assert shown in result.stdout
    assert read_recording(out).complete


def test_options_build_the_request(upstream: Upstream, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "get_weather", "parameters": {}}]))
    result = invoke(
        "--endpoint", f"{upstream.url}/v1/chat/completions?n=1",
        "--prompt", "Weather?", "--system", "Be brief.", "--tools", str(tools),
        "--model", "smollm2", "--param", "temperature=0", "--param", "stop=[\"\\n\"]",
        "--label", "dialect=hermes", "--out", str(tmp_path / "r.msgpack"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sent = json.loads(upstream.requests[-1][3])
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["tools"][0]["function"]["name"] == "get_weather"
    assert (sent["model"], sent["temperature"], sent["stop"], sent["stream"]) == (
        "smollm2", 0, ["\n"], True,
    )  # fmt: skip
    header = read_recording(tmp_path / "r.msgpack").header
    assert header["tools"] == ["get_weather"] and header["labels"]["dialect"] == "hermes"


def test_a_request_file_is_sent_whole_with_params_on_top(
    upstream: Upstream, tmp_path: Path
) -> None:
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"messages": [], "custom": {"a": 1}}))
    result = invoke(
        "--endpoint", f"{upstream.url}/v1/chat/completions?n=1", "--request", str(body),
        "--param", "custom.b=2", "--model", "m", "--out", str(tmp_path / "r.msgpack"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sent = json.loads(upstream.requests[-1][3])
    assert sent == {
        "messages": [], "custom": {"a": 1, "b": 2}, "stream": True, "model": "m", "max_tokens": 1024,
    }  # fmt: skip


def test_count_makes_that_many_recordings(upstream: Upstream, tmp_path: Path) -> None:
    result = invoke(
        "--endpoint", f"{upstream.url}/completion?n=2", "--prompt", "p",
        "--count", "3", "--out", str(tmp_path / "many"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "many").glob("*.msgpack"))) == 3
    numbered = invoke(
        "--endpoint", f"{upstream.url}/completion?n=2", "--prompt", "p",
        "--count", "2", "--out", str(tmp_path / "r.msgpack"),
    )  # fmt: skip
    assert numbered.exit_code == 0
    assert (tmp_path / "r-001.msgpack").exists() and (tmp_path / "r-002.msgpack").exists()


def test_api_key_env_is_sent_and_not_recorded(upstream: Upstream, tmp_path: Path) -> None:
    result = invoke(
        "--endpoint", f"{upstream.url}/v1/chat/completions?n=1", "--prompt", "hi",
        "--api-key-env", "TCR_TEST_KEY", "--header", "X-Api-Key: header-secret-7",
        "--out", str(tmp_path / "r.msgpack"),
        env={"TCR_TEST_KEY": "env-secret-8"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sent = upstream.requests[-1][2]
    assert sent["Authorization"] == "Bearer env-secret-8" and sent["X-Api-Key"] == "header-secret-7"
    on_disk = (tmp_path / "r.msgpack").read_bytes()
    assert b"env-secret-8" not in on_disk and b"header-secret-7" not in on_disk


def test_json_output(upstream: Upstream, tmp_path: Path) -> None:
    result = invoke(
        "--endpoint", f"{upstream.url}/api/chat?n=2", "--prompt", "hi", "--model", "m",
        "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [summary] = json.loads(result.stdout)
    assert summary["kind"] == "ndjson" and summary["complete"] and summary["frames"] == 3


@pytest.mark.parametrize(
    ("route", "reason"),
    [
        ("/error", "HTTP 500 Internal Server Error: the model exploded"),
        ("/json", "not a stream: the server answered application/json"),
        ("/drop?n=10", "upstream disconnected: the body was cut short"),
        ("/stall", "timed out after 0.5s without data"),
    ],
)
def test_failed_streams_exit_2_with_one_line_and_keep_what_arrived(
    upstream: Upstream, tmp_path: Path, route: str, reason: str
) -> None:
    out = tmp_path / "r.msgpack"
    result = invoke(
        "--endpoint", upstream.url + route, "--api", "openai", "--prompt", "hi",
        "--timeout", "0.5", "--out", str(out),
    )  # fmt: skip
    line = one_error_line(result)
    assert reason in line and f"in {out} (incomplete)" in line
    recording = read_recording(out)
    assert recording.incomplete_reason is not None and reason in recording.incomplete_reason
    assert recording.frames
    assert "incomplete" in result.stdout  # the summary shows what was kept


def test_what_a_dropped_stream_delivered_is_on_disk(upstream: Upstream, tmp_path: Path) -> None:
    out = tmp_path / "r.msgpack"
    invoke(
        "--endpoint",
        f"{upstream.url}/drop?n=10",
        "--api",
        "openai",
        "--prompt",
        "x",
        "--out",
        str(out),
    )
    events = openai_events(10)
    assert [f.data for f in read_recording(out).frames] == events[: len(events) // 2]


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        # The free port is taken when the test runs: a test id must be the same in every
        # xdist worker's collection, and a port free at collection may not be by then.
        ("http://127.0.0.1:{free_port}/v1/chat/completions", "connection refused"),
        ("http://tcr-test.invalid/v1/chat/completions", "cannot resolve host"),
        ("not-a-url/v1/chat/completions", "is not an http:// or https:// URL"),
    ],
)
def test_unreachable_endpoints_exit_2_with_one_line(
    tmp_path: Path, endpoint: str, message: str
) -> None:
    endpoint = endpoint.replace("{free_port}", str(free_port()))
    result = invoke("--endpoint", endpoint, "--prompt", "hi", "--out", str(tmp_path))
    assert message in one_error_line(result)
    assert list(tmp_path.iterdir()) == []


def test_a_server_that_never_answers_exits_2(upstream: Upstream, tmp_path: Path) -> None:
    result = invoke(
        "--endpoint", f"{upstream.url}/silent", "--api", "openai", "--prompt", "hi",
        "--timeout", "0.3", "--out", str(tmp_path),
    )  # fmt: skip
    assert "no response after 0.3s" in one_error_line(result)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give --endpoint URL"),
        (("--endpoint", "http://h/v1/chat/completions"), "give --prompt TEXT or --request"),
        (("--endpoint", "http://h/x", "--prompt", "p"), "cannot tell the API from the path"),
        (
            ("--endpoint", "http://h/completion", "--prompt", "p", "--system", "s"),
            "--system needs a chat API",
        ),
        (
            ("--endpoint", "http://h/v1/chat/completions", "--prompt", "p", "--param", "t"),
            "expected KEY=VALUE",
        ),
        (
            ("--endpoint", "http://h/v1/chat/completions", "--prompt", "p", "--header", "X"),
            "expected NAME:VALUE",
        ),
        (
            (
                "--endpoint",
                "http://h/v1/chat/completions",
                "--prompt",
                "p",
                "--api-key-env",
                "TCR_UNSET_VAR",
            ),
            "not set",
        ),
        (
            ("--endpoint", "http://h/v1/chat/completions", "--prompt", "p", "--request", "b.json"),
            "not used with --request",
        ),
        (
            (
                "--endpoint",
                "http://h/v1/chat/completions",
                "--prompt",
                "p",
                "--tools",
                "missing.json",
            ),
            "cannot read",
        ),
        (("--proxy", "9000"), "needs both --proxy"),
        (
            ("--proxy", "9000", "--upstream", "http://h", "--prompt", "p"),
            "--prompt: not used with --proxy",
        ),
        (("--proxy", "nope", "--upstream", "http://h"), "expected [HOST:]PORT"),
        (("--label", "x"), "expected KEY=VALUE"),
    ],
)
def test_bad_options_exit_2_with_one_line(args: tuple[str, ...], message: str) -> None:
    assert message in one_error_line(invoke(*args))


def test_help_ends_with_examples() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    examples = result.output.split("Examples:")[1]
    assert "--endpoint" in examples and "--proxy" in examples and "--upstream" in examples


@pytest.mark.parametrize("option", ["--request", "--tools"])
def test_a_json_file_nested_too_deeply_is_one_line(option: str, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    args = ["--endpoint", "http://127.0.0.1:9/v1/chat/completions", option, str(deep)]
    if option == "--tools":
        args += ["--prompt", "hi"]
    line = one_error_line(invoke(*args))
    assert f"{option} {deep}: not JSON: nested too deeply" in line


@pytest.mark.parametrize(
    ("path", "request_body", "sent_limit"),
    [
        ("/v1/chat/completions", {"messages": []}, {"max_tokens": 1024}),
        (
            "/v1/chat/completions",
            {"messages": [], "max_completion_tokens": 9},
            {"max_completion_tokens": 9},
        ),
        ("/v1/chat/completions", {"messages": [], "max_tokens": 7}, {"max_tokens": 7}),
        ("/completion", {"prompt": "x"}, {"n_predict": 1024}),
        ("/api/chat", {"model": "m", "messages": []}, {"options": {"num_predict": 1024}}),
    ],
    ids=["openai", "openai-own-completion-limit", "openai-own-limit", "llamacpp", "ollama"],
)
def test_a_request_without_a_length_bound_gets_one(
    upstream: Upstream,
    tmp_path: Path,
    path: str,
    request_body: dict[str, object],
    sent_limit: dict[str, object],
) -> None:
    body = tmp_path / "body.json"
    body.write_text(json.dumps(request_body))
    result = invoke(
        "--endpoint", f"{upstream.url}{path}?n=1", "--request", str(body),
        "--out", str(tmp_path / "r.msgpack"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sent = json.loads(upstream.requests[-1][3])
    assert sent == {**request_body, "stream": True, **sent_limit}


def test_max_tokens_0_sends_the_request_as_it_is(upstream: Upstream, tmp_path: Path) -> None:
    result = invoke(
        "--endpoint", f"{upstream.url}/v1/chat/completions?n=1", "--prompt", "hi",
        "--max-tokens", "0", "--out", str(tmp_path / "r.msgpack"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "max_tokens" not in json.loads(upstream.requests[-1][3])
    shown = invoke("--max-tokens", "5", "--endpoint", f"{upstream.url}/v1/chat/completions?n=1",
                   "--prompt", "hi", "--out", str(tmp_path / "s.msgpack"))  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert json.loads(upstream.requests[-1][3])["max_tokens"] == 5


def test_the_default_bound_is_the_library_s() -> None:
    from tcr.recorder.session import DEFAULT_MAX_TOKENS

    (option,) = [p for p in record.params if p.name == "max_tokens"]
    assert option.default == DEFAULT_MAX_TOKENS


def test_a_stream_that_runs_long_gets_one_warning_on_stderr(
    upstream: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tcr.recorder import RecordOptions, record_session

    options = RecordOptions(
        endpoint=f"{upstream.url}/v1/chat/completions?n=4",
        prompt="hi",
        out=tmp_path / "r.msgpack",
        long_stream_s=0.0,
    )
    record_session(options)
    err = capsys.readouterr().err
    assert err.count("tcr record: still streaming after") == 1, err
    assert "Ctrl-C ends it and keeps what arrived" in err
    assert read_recording(tmp_path / "r.msgpack").complete


def test_on_a_terminal_a_live_line_counts_frames_and_bytes() -> None:
    import io

    from rich.console import Console

    from tcr.recorder.session import _Counter

    screen = io.StringIO()
    counter = _Counter(Console(file=screen, force_terminal=True, width=80), long_stream_s=3600)
    with counter.shown():
        counter(3, 120)
    assert "recording: 3 frames, 120 bytes" in screen.getvalue()
    quiet = io.StringIO()
    plain = _Counter(Console(file=quiet, force_terminal=False), long_stream_s=3600)
    with plain.shown():
        plain(3, 120)
    assert quiet.getvalue() == ""  # not a terminal: nothing but the warning, when due
