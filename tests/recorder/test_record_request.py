"""Request bodies for each API, from the options of ``tcr record``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcr.recorder import (
    RecordError,
    build_request,
    detect_api,
    load_tools,
    parse_param,
    tool_names,
    with_params,
)

WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}


@pytest.mark.parametrize(
    ("url", "api"),
    [
        ("http://127.0.0.1:8080/v1/chat/completions", "openai"),
        ("https://api.example.com/v1/chat/completions/", "openai"),
        ("http://127.0.0.1:8080/completion", "llamacpp"),
        ("http://127.0.0.1:11434/api/chat", "ollama"),
        ("http://127.0.0.1:8080/v1/completions", None),
        ("http://127.0.0.1:8080/", None),
    ],
)
def test_api_is_detected_from_the_url_path(url: str, api: str | None) -> None:
    assert detect_api(url) == api


def test_openai_body_has_system_user_tools_model_and_stream() -> None:
    body = build_request(
        "openai",
        prompt="Weather in Paris?",
        system="Be brief.",
        tools=[{"type": "function", "function": WEATHER}],
        model="smollm2",
    )
    assert body == {
        "model": "smollm2",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "stream": True,
        "tools": [{"type": "function", "function": WEATHER}],
    }


def test_llamacpp_body_is_a_raw_prompt() -> None:
    assert build_request("llamacpp", prompt="Once upon") == {"prompt": "Once upon", "stream": True}


@pytest.mark.parametrize("option", ["system", "tools"])
def test_llamacpp_refuses_roles_and_tools(option: str) -> None:
    given = {"system": "x"} if option == "system" else {"tools": []}
    with pytest.raises(RecordError, match=f"--{option} needs a chat API"):
        build_request("llamacpp", prompt="p", **given)  # type: ignore[arg-type]


def test_ollama_needs_a_model() -> None:
    with pytest.raises(RecordError, match="needs --model"):
        build_request("ollama", prompt="hi")
    body = build_request("ollama", prompt="hi", model="qwen3")
    assert body["model"] == "qwen3" and body["stream"] is True


def test_params_are_json_when_they_parse_and_strings_otherwise() -> None:
    assert parse_param("temperature=0.2") == ("temperature", 0.2)
    assert parse_param("cache_prompt=true") == ("cache_prompt", True)
    assert parse_param('stop=["\\n"]') == ("stop", ["\n"])
    assert parse_param("grammar=root ::= x") == ("grammar", "root ::= x")
    assert parse_param("note=") == ("note", "")


@pytest.mark.parametrize("bad", ["temperature", "=1", "a..b=1"])
def test_malformed_params_are_refused(bad: str) -> None:
    with pytest.raises(RecordError, match="expected KEY=VALUE"):
        parse_param(bad)


def test_dotted_params_nest_and_are_set_last() -> None:
    body = build_request(
        "ollama",
        prompt="hi",
        model="m",
        params=[("options.temperature", 0), ("options.seed", 7), ("stream", False)],
    )
    assert body["options"] == {"temperature": 0, "seed": 7}
    assert body["stream"] is False


def test_with_params_does_not_touch_its_input() -> None:
    original = {"options": {"a": 1}}
    assert with_params(original, [("options.b", 2)]) == {"options": {"a": 1, "b": 2}}
    assert original == {"options": {"a": 1}}


def test_tools_file_accepts_openai_tools_and_bare_function_specs(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"type": "function", "function": WEATHER}, {"name": "search"}]))
    tools = load_tools(path)
    assert [t["function"]["name"] for t in tools] == ["get_weather", "search"]
    path.write_text(json.dumps({"tools": [WEATHER]}))
    assert load_tools(path) == [{"type": "function", "function": WEATHER}]


def test_a_bad_tools_file_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text("[{")
    with pytest.raises(RecordError, match=r"tools\.json: not JSON"):
        load_tools(path)
    path.write_text("[1]")
    with pytest.raises(RecordError, match="tool 0 has neither"):
        load_tools(path)


def test_tool_names_come_from_the_request() -> None:
    assert tool_names({"tools": [{"type": "function", "function": WEATHER}]}) == ["get_weather"]
    assert tool_names({"messages": []}) is None


@pytest.mark.parametrize("function", [5, "get_weather", ["get_weather"], None])
def test_tool_names_skip_a_function_that_is_not_an_object(function: object) -> None:
    # A client's request is outside input: recording it must not fail on its shape.
    tools = [{"type": "function", "function": function}, {"function": WEATHER}]
    assert tool_names({"tools": tools}) == ["get_weather"]
