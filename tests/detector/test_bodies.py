"""Body parsers: one behaviour per test, in the shapes real models write."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcr.detector.bodies import (
    BodyError,
    ParsedCall,
    call_from_json,
    canonical_arguments,
    parse_body,
    strip_markers,
)
from tcr.detector.formats import FORMATS
from tcr.errors import TcrError

CALL_FORMATS = [f.id for f in FORMATS if f.kind == "call"]


def call(name: str, **arguments: object) -> ParsedCall:
    return ParsedCall(name, json.dumps(arguments, ensure_ascii=False))


def rejection(format_id: str, body: str) -> BodyError:
    with pytest.raises(BodyError) as caught:
        parse_body(format_id, body)
    return caught.value


# --- JSON calls (Hermes / Qwen2.5 inside <tool_call>) --------------------------------


def test_hermes_call_with_newlines_around_the_json() -> None:
    body = '\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    assert parse_body("hermes", body) == [call("get_weather", city="Paris")]


def test_arguments_are_canonical_whatever_the_spacing() -> None:
    body = '{"name":"get_weather","arguments":{"city":"Paris","days":3}}'
    assert parse_body("hermes", body)[0].arguments == '{"city": "Paris", "days": 3}'


def test_arguments_given_as_a_json_string() -> None:
    body = '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}'
    assert parse_body("hermes", body) == [call("get_weather", city="Paris")]


def test_parameters_key_is_read_like_arguments() -> None:
    body = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert parse_body("hermes", body) == [call("get_weather", city="Paris")]


def test_openai_nested_function_object_is_not_a_call() -> None:
    """No engine reads the OpenAI delta shape as a model's call: vLLM's hermes parser reads
    ``function_call["name"]``/``["arguments"]``, SGLang's ``parse_base_json``
    ``act.get("name")``, llama.cpp's Hermes parser opens only on ``{"name"``."""
    body = (
        '{"id": "call_0", "type": "function", '
        '"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}'
    )
    assert rejection("hermes", body).reason == "not_a_call"


def test_llama32_function_name_without_a_name_key_is_not_a_call() -> None:
    # PR #2262 (ARCHITECTURE.md §15.3): Llama-3.2-1B wrote this as a {-prefixed answer;
    # without "name" it is content.
    body = '{"type": "function", "function": "get_weather", "parameters": {"city": "Paris"}}'
    with pytest.raises(BodyError) as caught:
        parse_body("hermes", body)
    assert caught.value.reason == "not_a_call"


def test_nested_arguments_are_kept() -> None:
    body = (
        '{"name": "create_event", "arguments": {"title": "Standup", '
        '"when": {"day": "mon", "slots": [9, 9.5]}, "invitees": [{"id": 1}], "draft": false}}'
    )
    expected = call(
        "create_event",
        title="Standup",
        when={"day": "mon", "slots": [9, 9.5]},
        invitees=[{"id": 1}],
        draft=False,
    )
    assert parse_body("hermes", body) == [expected]


def test_string_with_braces_quotes_escapes_and_closing_marker() -> None:
    content = 'print("{x}")\\n</tool_call>\t\\\\ done'
    body = json.dumps({"name": "write_file", "arguments": {"content": content}})
    assert parse_body("hermes", body) == [call("write_file", content=content)]


def test_unicode_escapes_become_characters() -> None:
    body = '{"name": "say", "arguments": {"text": "caf\\u00e9 \\ud83c\\udf0d"}}'
    assert parse_body("hermes", body)[0].arguments == '{"text": "café 🌍"}'


def test_emoji_stays_literal() -> None:
    body = '{"name": "react", "arguments": {"emoji": "👍🏽", "note": "日本語"}}'
    assert parse_body("hermes", body) == [call("react", emoji="👍🏽", note="日本語")]


def test_raw_newline_inside_a_json_string_is_accepted() -> None:
    body = '{"name": "write_file", "arguments": {"content": "line 1\nline 2"}}'
    assert parse_body("hermes", body) == [call("write_file", content="line 1\nline 2")]


def test_missing_arguments_in_a_marked_block_mean_no_arguments() -> None:
    assert parse_body("hermes", '{"name": "get_time"}') == [call("get_time")]


def test_blank_string_arguments_mean_no_arguments() -> None:
    body = '{"name": "get_time", "arguments": ""}'
    assert parse_body("hermes", body) == [call("get_time")]


def test_extra_keys_beside_arguments_are_ignored() -> None:
    body = '{"id": "call_7", "name": "get_time", "arguments": {}, "index": 0}'
    assert parse_body("hermes", body) == [call("get_time")]


# --- not a call ------------------------------------------------------------------------


def test_object_without_name_is_not_a_call() -> None:
    assert rejection("hermes", '{"answer": 42}').reason == "not_a_call"


def test_list_of_numbers_is_not_a_call() -> None:
    assert rejection("hermes", "[1, 2, 3]").reason == "not_a_call"


def test_json_string_is_not_a_call() -> None:
    assert rejection("hermes", '"get_weather"').reason == "not_a_call"


def test_missing_arguments_beside_unknown_keys_is_not_a_call() -> None:
    assert rejection("hermes", '{"name": "Alice", "age": 31}').reason == "not_a_call"


def test_arguments_that_are_an_array_are_not_a_call() -> None:
    error = rejection("hermes", '{"name": "f", "arguments": [1, 2]}')
    assert (error.reason, "array" in error.detail) == ("not_a_call", True)


def test_arguments_string_that_is_not_an_object_is_not_a_call() -> None:
    error = rejection("hermes", '{"name": "f", "arguments": "city=Paris"}')
    assert error.reason == "not_a_call"


def test_null_arguments_are_not_a_call() -> None:
    assert rejection("hermes", '{"name": "f", "arguments": null}').reason == "not_a_call"


def test_empty_name_is_not_a_call() -> None:
    assert rejection("hermes", '{"name": " ", "arguments": {}}').reason == "not_a_call"


def test_nested_function_of_another_type_is_not_a_call() -> None:
    body = '{"type": "retrieval", "function": {"name": "f", "arguments": {}}}'
    assert rejection("hermes", body).reason == "not_a_call"


# --- malformed -------------------------------------------------------------------------


def test_invalid_json_is_malformed() -> None:
    error = rejection("hermes", '{"name": "get_weather", "arguments": {"city": "Paris"}')
    assert error.reason == "malformed"
    assert "offset" in error.detail


def test_text_after_the_json_value_is_malformed() -> None:
    body = '{"name": "get_time", "arguments": {}} Let me check.'
    assert rejection("hermes", body).reason == "malformed"


def test_two_objects_in_one_hermes_block_are_malformed() -> None:
    body = '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}'
    assert rejection("hermes", body).reason == "malformed"


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_malformed(number: str) -> None:
    body = '{"name": "f", "arguments": {"x": NUMBER}}'.replace("NUMBER", number)
    assert rejection("hermes", body).reason == "malformed"


def test_lone_surrogate_escape_in_arguments_is_malformed() -> None:
    body = '{"name": "say", "arguments": {"text": "broken \\ud83c here"}}'
    assert rejection("hermes", body).reason == "malformed"


def test_lone_surrogate_escape_in_the_name_is_malformed() -> None:
    body = '{"name": "say\\udc00", "arguments": {}}'
    assert rejection("hermes", body).reason == "malformed"


def test_integer_too_long_to_convert_is_malformed() -> None:
    body = '{"name": "f", "arguments": {"x": NUMBER}}'.replace("NUMBER", "9" * 5000)
    assert rejection("hermes", body).reason == "malformed"


@pytest.mark.parametrize("format_id", CALL_FORMATS)
def test_deeply_nested_json_is_malformed(format_id: str) -> None:
    assert rejection(format_id, "[" * 100_000).reason == "malformed"


@pytest.mark.parametrize("format_id", CALL_FORMATS)
@pytest.mark.parametrize("body", ["", "  \n\t "])
def test_empty_body_is_malformed(format_id: str, body: str) -> None:
    assert rejection(format_id, body).reason == "malformed"


def test_think_is_not_a_call_format() -> None:
    assert rejection("think", "Let me think.").reason == "malformed"


def test_unknown_format_is_malformed() -> None:
    assert rejection("yaml_calls", "name: f").reason == "malformed"


def test_body_error_is_a_tcr_error_with_reason_and_detail() -> None:
    error = rejection("hermes", "{")
    assert isinstance(error, TcrError)
    assert str(error) == f"malformed: {error.detail}"


# --- Qwen3-Coder -----------------------------------------------------------------------

QWEN_CODER = """
<function=get_weather>
<parameter=city>
Paris
</parameter>
<parameter=unit>
celsius
</parameter>
</function>
"""


def test_qwen3_coder_function_with_parameters() -> None:
    assert parse_body("qwen3_coder", QWEN_CODER) == [
        call("get_weather", city="Paris", unit="celsius")
    ]


def test_qwen3_coder_multiline_value_keeps_its_inner_lines() -> None:
    body = (
        "<function=write_file>\n<parameter=content>\ndef f():\n    return 1\n</parameter>\n"
        "</function>"
    )
    expected = call("write_file", content="def f():\n    return 1")
    assert parse_body("qwen3_coder", body) == [expected]


def test_qwen3_coder_trims_only_one_newline_at_each_end() -> None:
    body = "<function=write_file>\n<parameter=content>\n\nx\n\n</parameter>\n</function>"
    assert parse_body("qwen3_coder", body) == [call("write_file", content="\nx\n")]


def test_qwen3_coder_name_may_start_with_a_digit() -> None:
    """OpenAI allows ``^[a-zA-Z0-9_-]{1,64}$``; vLLM's and SGLang's parsers take the name
    as written up to ``>``."""
    body = "<function=9search>\n<parameter=q>\nx\n</parameter>\n</function>"
    assert parse_body("qwen3_coder", body) == [call("9search", q="x")]


def test_qwen3_coder_body_cut_inside_its_closing_tag_is_the_call() -> None:
    """A message that ends in ``</tool_``: vLLM's qwen3_coder and SGLang's qwen3_coder have
    emitted the call at ``</function>``; the partial closer is no part of the body."""
    body = "\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_"
    assert parse_body("qwen3_coder", body) == [call("f", x="1")]


def test_qwen3_coder_value_that_is_a_json_object_is_parsed() -> None:
    body = '<function=query>\n<parameter=filter>\n{"age": {"$gt": 3}}\n</parameter>\n</function>'
    assert parse_body("qwen3_coder", body) == [call("query", filter={"age": {"$gt": 3}})]


def test_qwen3_coder_value_that_is_a_json_array_is_parsed() -> None:
    body = '<function=tag>\n<parameter=labels>\n[1, "a"]\n</parameter>\n</function>'
    assert parse_body("qwen3_coder", body) == [call("tag", labels=[1, "a"])]


def test_qwen3_coder_bracketed_text_that_is_not_json_stays_text() -> None:
    body = "<function=note>\n<parameter=text>\n[draft] call Bob\n</parameter>\n</function>"
    assert parse_body("qwen3_coder", body) == [call("note", text="[draft] call Bob")]


def test_qwen3_coder_numbers_stay_strings_without_a_schema() -> None:
    body = "<function=set_volume>\n<parameter=level>\n7\n</parameter>\n</function>"
    assert parse_body("qwen3_coder", body) == [call("set_volume", level="7")]


def test_qwen3_coder_zero_parameters() -> None:
    assert parse_body("qwen3_coder", "<function=get_time>\n</function>") == [call("get_time")]


def test_qwen3_coder_value_that_mentions_the_closing_tag() -> None:
    body = (
        "<function=write_file>\n<parameter=content>\nclose with </parameter> then\n</parameter>\n"
        "</function>"
    )
    expected = call("write_file", content="close with </parameter> then")
    assert parse_body("qwen3_coder", body) == [expected]


def test_qwen3_coder_repeated_parameter_keeps_the_last_value() -> None:
    body = (
        "<function=f>\n<parameter=x>\n1\n</parameter>\n<parameter=x>\n2\n</parameter>\n</function>"
    )
    assert parse_body("qwen3_coder", body) == [call("f", x="2")]


def test_qwen3_coder_empty_parameter_name_is_malformed() -> None:
    body = "<function=f>\n<parameter=>\n1\n</parameter>\n</function>"
    assert rejection("qwen3_coder", body).reason == "malformed"


def test_qwen3_coder_two_functions_in_one_block() -> None:
    body = "<function=a>\n</function>\n<function=b>\n<parameter=x>\n1\n</parameter>\n</function>"
    assert parse_body("qwen3_coder", body) == [call("a"), call("b", x="1")]


def test_qwen3_coder_unclosed_parameter_is_malformed() -> None:
    body = "<function=get_weather>\n<parameter=city>\nParis\n</function>"
    assert rejection("qwen3_coder", body).reason == "malformed"


def test_qwen3_coder_text_between_parameters_is_malformed() -> None:
    body = "<function=f>\nI will now call it\n<parameter=x>\n1\n</parameter>\n</function>"
    assert rejection("qwen3_coder", body).reason == "malformed"


def test_qwen3_coder_missing_function_close_is_malformed() -> None:
    body = "<function=f>\n<parameter=x>\n1\n</parameter>\n"
    assert rejection("qwen3_coder", body).reason == "malformed"


# --- GLM-4.5 ---------------------------------------------------------------------------


def test_glm_name_then_key_value_pairs() -> None:
    body = (
        "get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
        "<arg_key>date</arg_key>\n<arg_value>2024-06-27</arg_value>\n"
    )
    assert parse_body("glm45", body) == [call("get_weather", city="Beijing", date="2024-06-27")]


def test_glm47_pairs_without_newlines() -> None:
    body = "get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value>"
    assert parse_body("glm47", body) == [call("get_weather", city="Beijing")]


@pytest.mark.parametrize(
    "body", ["get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value>", "get_time"]
)
def test_glm45_without_a_newline_after_the_name_is_malformed(body: str) -> None:
    """GLM-4.7's shapes: SGLang's glm45 (Glm4MoeDetector) and vLLM's glm4_moe need the newline."""
    assert rejection("glm45", body).reason == "malformed"


def test_glm47_reads_glm45_s_newline_form_as_the_engines_glm47_parsers_do() -> None:
    body = "get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
    assert parse_body("glm47", body) == [call("get_weather", city="Beijing")]


def test_glm_name_alone_is_a_call_without_arguments() -> None:
    assert parse_body("glm45", "get_time\n") == [call("get_time")]


def test_glm_value_that_is_json_is_parsed() -> None:
    body = 'search\n<arg_key>filters</arg_key>\n<arg_value>{"lang": "en"}</arg_value>'
    assert parse_body("glm45", body) == [call("search", filters={"lang": "en"})]


@pytest.mark.parametrize("dialect", ["glm45", "glm47"])
@pytest.mark.parametrize("value", ["\n\n", "\nx\n", "  x  "])
def test_glm_value_is_kept_as_written(dialect: str, value: str) -> None:
    """GLM's template writes values inline; vLLM's glm4_moe parser keeps a string value
    unstripped ("whitespace is significant"), SGLang's glm47 streaming keeps it raw: no
    Qwen3-Coder newline trimming."""
    body = f"f\n<arg_key>v</arg_key>\n<arg_value>{value}</arg_value>\n"
    assert parse_body(dialect, body) == [call("f", v=value)]


def test_glm_name_may_start_with_a_digit() -> None:
    assert parse_body("glm45", "9search\n") == [call("9search")]


def test_glm_prose_instead_of_a_name_is_malformed() -> None:
    assert rejection("glm45", "I cannot call tools.").reason == "malformed"


def test_glm_unclosed_value_is_malformed() -> None:
    body = "get_weather<arg_key>city</arg_key><arg_value>Beijing"
    assert rejection("glm45", body).reason == "malformed"


# --- <tools> ---------------------------------------------------------------------------


def test_tools_tag_single_call_object() -> None:
    body = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert parse_body("tools_tag", body) == [call("get_weather", city="Paris")]


def test_tools_tag_array_of_calls() -> None:
    body = '[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "parameters": {}}]'
    assert parse_body("tools_tag", body) == [call("a", x=1), call("b")]


def test_tools_tag_array_with_a_non_call_is_not_a_call() -> None:
    body = '[{"name": "a", "arguments": {}}, {"answer": 42}]'
    assert rejection("tools_tag", body).reason == "not_a_call"


def test_tools_tag_empty_array_is_not_a_call() -> None:
    assert rejection("tools_tag", "[]").reason == "not_a_call"


# --- Gemma 4 ---------------------------------------------------------------------------


def test_gemma4_call_with_a_string_argument() -> None:
    body = 'call:get_weather{city:<|"|>Paris<|"|>}'
    assert parse_body("gemma4", body) == [call("get_weather", city="Paris")]


def test_gemma4_every_kind_of_value() -> None:
    body = (
        'call:f{key:<|"|>string<|"|>,n:3,x:-1.5e2,flag:true,off:false,none:null,'
        'obj:{a:<|"|>x<|"|>},list:[1,<|"|>s<|"|>,[]]}'
    )
    expected = call(
        "f", key="string", n=3, x=-150.0, flag=True, off=False, none=None,
        obj={"a": "x"}, list=[1, "s", []],
    )  # fmt: skip
    assert parse_body("gemma4", body) == [expected]


def test_gemma4_string_may_hold_commas_braces_quotes_and_newlines() -> None:
    text = "echo \"{a, b}\" [1]\nprint('x:y')"
    body = 'call:bash{command:<|"|>' + text + '<|"|>}'
    assert parse_body("gemma4", body) == [call("bash", command=text)]


@pytest.mark.parametrize(
    "body", ['call:a{x:1}call:b{y:<|"|>z<|"|>}', "call:a{x:1}, call:c{}", "call:a{}\ncall:b{}"]
)
def test_gemma4_several_calls_in_one_block_are_malformed(body: str) -> None:
    """One ``call:`` per ``<|tool_call>`` block: llama.cpp's Gemma 4 grammar repeats the whole
    block (common/parsers/gemma4.cpp), vLLM's ``Gemma4ToolParser`` regex and SGLang's
    ``Gemma4Detector._extract_tool_calls`` take one call per block."""
    assert rejection("gemma4", body).reason == "malformed"


def test_gemma4_no_arguments() -> None:
    assert parse_body("gemma4", "call:get_time{}") == [call("get_time")]


def test_gemma4_name_with_dots_and_dashes() -> None:
    body = 'call:tools.shell-exec{cmd:<|"|>ls<|"|>}'
    assert parse_body("gemma4", body) == [call("tools.shell-exec", cmd="ls")]


def test_gemma4_quoted_keys_and_json_strings() -> None:
    body = 'call:f{<|"|>user id<|"|>:7,note:"a \\"b\\""}'
    assert parse_body("gemma4", body) == [call("f", **{"user id": 7, "note": 'a "b"'})]


def test_gemma4_white_space_between_tokens_is_allowed() -> None:
    body = "call:f{ a : 1 , b : [ 1 , 2 ] }"
    assert parse_body("gemma4", body) == [call("f", a=1, b=[1, 2])]


def test_gemma4_json_call_body_is_malformed() -> None:
    """No engine reads JSON inside Gemma 4's tokens: vLLM's and SGLang's parsers need
    ``call:`` right after ``<|tool_call>``, llama.cpp's grammar ``"<|tool_call>call:"``."""
    body = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert rejection("gemma4", body).reason == "malformed"


def test_gemma4_unterminated_string_is_malformed() -> None:
    assert rejection("gemma4", 'call:f{a:<|"|>Paris}').reason == "malformed"


def test_gemma4_unquoted_word_value_is_malformed() -> None:
    assert rejection("gemma4", "call:f{op:add}").reason == "malformed"


def test_gemma4_missing_call_prefix_is_malformed() -> None:
    assert rejection("gemma4", "f{a:1}").reason == "malformed"


def test_gemma4_name_with_a_space_is_malformed() -> None:
    assert rejection("gemma4", "call:bad name{a:1}").reason == "malformed"


def test_gemma4_unclosed_object_is_malformed() -> None:
    assert rejection("gemma4", "call:f{a:1,b:{c:2}").reason == "malformed"


def test_gemma4_text_after_the_calls_is_malformed() -> None:
    assert rejection("gemma4", "call:f{a:1} and more").reason == "malformed"


def test_gemma4_deep_nesting_is_malformed() -> None:
    body = "call:f{a:" + "[" * 10_000 + "]" * 10_000 + "}"
    assert rejection("gemma4", body).reason == "malformed"


# --- fenced and bare JSON --------------------------------------------------------------


def test_fenced_json_body_starts_at_the_brace() -> None:
    body = '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    assert parse_body("fenced_json", body) == [call("get_weather", city="Paris")]


def test_fenced_json_name_alone_is_not_a_call() -> None:
    assert rejection("fenced_json", '{"name": "my-app"}').reason == "not_a_call"


def test_bare_json_call() -> None:
    body = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert parse_body("bare_json", body) == [call("get_weather", city="Paris")]


def test_bare_json_answer_is_not_a_call() -> None:
    assert rejection("bare_json", '{"answer": 42, "unit": "km"}').reason == "not_a_call"


def test_bare_json_name_alone_is_not_a_call() -> None:
    assert rejection("bare_json", '{"name": "Alice"}').reason == "not_a_call"


# --- Mistral [TOOL_CALLS] --------------------------------------------------------------


def test_mistral_array_of_calls() -> None:
    body = (
        ' [{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_time", "arguments": {}}]'
    )
    assert parse_body("mistral", body) == [
        call("get_weather", city="Paris"),
        call("get_time"),
    ]


def test_mistral_array_reads_only_the_arguments_key() -> None:
    """vLLM's mistral parser indexes ``raw_function_call["arguments"]`` and llama.cpp's
    Mistral Nemo grammar writes only it; SGLang's ``parse_base_json`` also takes
    ``"parameters"`` (a policy, not the reference)."""
    body = '[{"name": "get_weather", "parameters": {"city": "Paris"}}]'
    assert rejection("mistral", body).reason == "not_a_call"


def test_mistral_v13_name_then_args() -> None:
    body = 'get_weather[ARGS]{"city": "Paris"}'
    assert parse_body("mistral_v13", body) == [call("get_weather", city="Paris")]


def test_mistral_v13_with_a_call_id() -> None:
    body = 'get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}'
    assert parse_body("mistral_v13", body) == [call("get_weather", city="Paris")]


def test_mistral_v13_args_that_are_not_an_object_are_not_a_call() -> None:
    assert rejection("mistral_v13", "get_weather[ARGS][1]").reason == "not_a_call"


def test_mistral_v13_invalid_args_json_is_malformed() -> None:
    assert rejection("mistral_v13", "get_weather[ARGS]{city: Paris}").reason == "malformed"


@pytest.mark.parametrize("dialect_id", ["mistral", "mistral_v13"])
def test_mistral_prose_is_malformed(dialect_id: str) -> None:
    assert rejection(dialect_id, "I would call get_weather").reason == "malformed"


# --- Llama <|python_tag|> --------------------------------------------------------------


def test_llama31_single_call() -> None:
    body = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert parse_body("python_tag", body) == [call("get_weather", city="Paris")]


def test_llama31_two_calls_separated_by_semicolon() -> None:
    body = (
        '{"name": "get_weather", "parameters": {"city": "Paris"}}; '
        '{"name": "get_time", "parameters": {"tz": "Europe/Paris"}}'
    )
    assert parse_body("python_tag", body) == [
        call("get_weather", city="Paris"),
        call("get_time", tz="Europe/Paris"),
    ]


def test_semicolon_inside_a_string_does_not_split_calls() -> None:
    body = '{"name": "sql", "parameters": {"q": "SELECT 1; DROP t; -- }"}}'
    assert parse_body("python_tag", body) == [call("sql", q="SELECT 1; DROP t; -- }")]


def test_trailing_semicolon_is_tolerated() -> None:
    assert parse_body("python_tag", '{"name": "f", "parameters": {}};\n') == [call("f")]


def test_calls_without_a_semicolon_between_are_malformed() -> None:
    body = '{"name": "a", "parameters": {}} {"name": "b", "parameters": {}}'
    assert rejection("python_tag", body).reason == "malformed"


def test_double_semicolon_is_malformed() -> None:
    body = '{"name": "a", "parameters": {}};; {"name": "b", "parameters": {}}'
    assert rejection("python_tag", body).reason == "malformed"


def test_llama_builtin_python_call_is_malformed() -> None:
    assert rejection("python_tag", 'brave_search.call(query="weather")').reason == "malformed"


def test_python_tag_with_a_non_call_is_not_a_call() -> None:
    body = '{"name": "a", "parameters": {}}; [1, 2]'
    assert rejection("python_tag", body).reason == "not_a_call"


# --- strip_markers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("format_id", "raw", "shown"),
    [
        ("gemma4", "<|tool_call>call:f{a:<tool_call|>", "call:f{a:"),
        ("hermes", "<tool_call>{bad</tool_call>", "{bad"),
        ("hermes", "<tool_call>\n{bad}\n</tool_call>", "\n{bad}\n"),
        ("tools_tag", "<tools>[1, 2]</tools>", "[1, 2]"),
        ("fenced_json", '```json\n{"a": 1}\n```', '{"a": 1}\n'),
        ("fenced_json", '```xml\n{"a": 1}', '{"a": 1}'),
        ("mistral_v13", "[TOOL_CALLS]f[ARGS]{bad}", "f[ARGS]{bad}"),
        ("python_tag", "<|python_tag|>print(1)<|eom_id|>", "print(1)"),
        ("python_tag", "<|python_tag|>print(1)<|eot_id|>", "print(1)"),
        ("bare_json", '{"answer": 42}', '{"answer": 42}'),
        ("think", "<think>hmm</think>", "hmm"),
    ],
)
def test_strip_markers_removes_the_format_markers(format_id: str, raw: str, shown: str) -> None:
    assert strip_markers(format_id, raw) == shown


@pytest.mark.parametrize(
    ("format_id", "raw", "shown"),
    [
        ("gemma4", "<|tool_call>call:f{a:1", "call:f{a:1"),
        ("hermes", "<tool_call>{bad", "{bad"),
        ("tools_tag", "<tools>[1,", "[1,"),
        ("fenced_json", '```json\n{"a": ', '{"a": '),
        ("mistral", "[TOOL_CALLS][{", "[{"),
        ("python_tag", '<|python_tag|>{"name": "f"', '{"name": "f"'),
        ("bare_json", '{"answer": ', '{"answer": '),
        ("think", "<think>hmm", "hmm"),
        ("hermes", "<tool_call>", ""),
    ],
)
def test_strip_markers_tolerates_an_unterminated_block(
    format_id: str, raw: str, shown: str
) -> None:
    assert strip_markers(format_id, raw) == shown


def test_strip_markers_keeps_a_closing_marker_inside_an_unterminated_string() -> None:
    raw = '<tool_call>{"content": "</tool_call>'
    assert strip_markers("hermes", raw, closed=False) == '{"content": "</tool_call>'


@pytest.mark.parametrize("format_id", ["native", "no_such_format"])
def test_strip_markers_leaves_raw_of_a_format_without_markers(format_id: str) -> None:
    assert strip_markers(format_id, "<tool_call>x</tool_call>") == "<tool_call>x</tool_call>"


# --- call_from_json and canonical_arguments --------------------------------------------


def test_call_from_json_returns_none_for_non_calls() -> None:
    assert [call_from_json(v) for v in ({"answer": 42}, [1, 2], "f", None, 3)] == [None] * 5


def test_call_from_json_needs_arguments_unless_told_they_are_optional() -> None:
    assert call_from_json({"name": "get_time"}) is None
    assert call_from_json({"name": "get_time"}, arguments_optional=True) == call("get_time")


def test_call_from_json_never_raises_on_unrepresentable_arguments() -> None:
    assert call_from_json({"name": "f", "arguments": {"x": float("nan")}}) is None
    assert call_from_json({"name": "f", "arguments": {"x": {1, 2}}}) is None


def test_canonical_arguments_of_a_non_object_is_not_a_call() -> None:
    with pytest.raises(BodyError) as caught:
        canonical_arguments([1, 2])
    assert caught.value.reason == "not_a_call"


def test_canonical_arguments_of_infinity_is_malformed() -> None:
    with pytest.raises(BodyError) as caught:
        canonical_arguments({"x": float("inf")})
    assert caught.value.reason == "malformed"


def test_canonical_arguments_keep_non_ascii_and_default_separators() -> None:
    text = canonical_arguments({"ville": "Zürich", "n": [1, 2]})
    assert text == '{"ville": "Zürich", "n": [1, 2]}'


# --- properties ------------------------------------------------------------------------

# Pieces of every dialect, so random text reaches deep into each reader.
FRAGMENTS = [
    "{", "}", "[", "]", '"', ":", ",", ";", " ", "\n", "\\", "\\u", "\\ud800", "'",
    '"name"', '"arguments"', '"parameters"', '"function"', '"type"', '"f"', '""',
    "1", "-0.5e3", "1e999", "NaN", "true", "null", "f", "call:", '<|"|>',
    "<function=", "</function>", "<parameter=", "</parameter>", ">",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "[ARGS]", "[CALL_ID]",
]  # fmt: skip
dialect_soup = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=40).map("".join)


@settings(max_examples=400)
@given(format_id=st.sampled_from([*CALL_FORMATS, "think", "native"]), body=st.text() | dialect_soup)
@pytest.mark.slow
def test_parse_body_raises_only_body_error(format_id: str, body: str) -> None:
    try:
        calls = parse_body(format_id, body)
    except BodyError as error:
        assert error.reason in ("malformed", "not_a_call")
        return
    assert calls
    for found in calls:
        arguments = json.loads(found.arguments)
        assert isinstance(arguments, dict)
        assert found.arguments == json.dumps(arguments, ensure_ascii=False)


REAL_BODIES = [
    ("hermes", '{"name": "f", "arguments": {"city": "Paris", "n": [1, 2.5, {"a": null}]}}'),
    ("qwen3_coder", QWEN_CODER),
    ("glm45", 'f\n<arg_key>a</arg_key>\n<arg_value>{"b": [1]}</arg_value>\n'),
    ("gemma4", 'call:f{s:<|"|>a, {x}<|"|>,n:-1.5e2,t:true,o:{a:null},l:[1,[]]}'),
    ("python_tag", '{"name": "a", "parameters": {"q": "x;y"}}; {"name": "b", "parameters": {}}'),
    ("mistral_v13", 'f[CALL_ID]abc[ARGS]{"city": "Paris"}'),
    ("tools_tag", '[{"name": "a", "arguments": "{}"}, {"name": "b", "parameters": {}}]'),
]
edits = st.tuples(
    st.integers(0, 120), st.integers(0, 4), st.sampled_from(FRAGMENTS) | st.text(max_size=2)
)


@settings(max_examples=300)
@given(
    seed=st.sampled_from(REAL_BODIES),
    changes=st.lists(edits, max_size=4),
    other_format=st.none() | st.sampled_from(CALL_FORMATS),
)
@pytest.mark.slow
def test_damaged_real_bodies_raise_only_body_error(
    seed: tuple[str, str], changes: list[tuple[int, int, str]], other_format: str | None
) -> None:
    format_id, body = seed
    for at, cut, text in changes:
        at %= len(body) + 1
        body = body[:at] + text + body[at + cut :]
    try:
        calls = parse_body(other_format or format_id, body)
    except BodyError:
        return
    assert all(isinstance(json.loads(found.arguments), dict) for found in calls)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
argument_objects = st.dictionaries(st.text(), json_values, max_size=6)
names = st.text(min_size=1).filter(str.strip)


@given(
    name=names,
    arguments=argument_objects,
    key=st.sampled_from(["arguments", "parameters"]),
    as_string=st.booleans(),
    ensure_ascii=st.booleans(),
)
@pytest.mark.slow
def test_json_call_round_trips_through_hermes(
    name: str, arguments: dict[str, object], key: str, as_string: bool, ensure_ascii: bool
) -> None:
    value: object = json.dumps(arguments) if as_string else arguments
    body = json.dumps({"name": name, key: value}, ensure_ascii=ensure_ascii)
    expected = ParsedCall(name, json.dumps(arguments, ensure_ascii=False))
    assert parse_body("hermes", body) == [expected]


def gemma_text(value: object) -> str:
    """Render a value the way Gemma 4's chat template does."""
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{gemma_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(gemma_text(v) for v in value) + "]"
    return json.dumps(value)


gemma_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
gemma_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text().filter(lambda s: '<|"|>' not in s),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(gemma_keys, inner, max_size=4),
    max_leaves=20,
)


@given(
    name=st.from_regex(r"[A-Za-z0-9_][\w.\-]{0,12}", fullmatch=True),
    arguments=st.dictionaries(gemma_keys, gemma_values, max_size=5),
)
@pytest.mark.slow
def test_gemma4_rendering_round_trips(name: str, arguments: dict[str, object]) -> None:
    body = f"call:{name}{gemma_text(arguments)}"
    assert parse_body("gemma4", body) == [
        ParsedCall(name, json.dumps(arguments, ensure_ascii=False))
    ]


@given(calls=st.lists(st.tuples(names, argument_objects), min_size=1, max_size=3))
@pytest.mark.slow
def test_llama_calls_joined_by_semicolons_round_trip(
    calls: list[tuple[str, dict[str, object]]],
) -> None:
    body = "; ".join(json.dumps({"name": n, "parameters": a}) for n, a in calls)
    expected = [ParsedCall(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]
    assert parse_body("python_tag", body) == expected
