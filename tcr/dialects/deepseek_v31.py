"""DeepSeek V3.1: ``NAME<｜tool▁sep｜>{…}``, no type word and no fence.

vLLM calls its parser ``deepseek_v31``, SGLang ``deepseekv31``. Each call is
``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>``, all of a turn's
calls in one tool-calls section that V3 shares (``tcr.dialects._deepseek``; a
section is V3's when its first call starts ``function<｜tool▁sep｜>`` and a fence
follows the name). Checked against SGLang's
python/sglang/srt/function_call/deepseekv31_detector.py (``func_detail_regex``
``<｜tool▁call▁begin｜>(.*)<｜tool▁sep｜>(.*)<｜tool▁call▁end｜>``; its streaming
name group ``([^<]*?)``) and vLLM's
vllm/entrypoints/openai/tool_parsers/deepseekv31_tool_parser.py (``tool_call_regex``
``<｜tool▁call▁begin｜>(.*?)<｜tool▁sep｜>(.*?)<｜tool▁call▁end｜>``, no DOTALL; it looks
the section markers up in the vocabulary). V3.1's thinking
mode writes ``<think>`` reasoning first (dialect ``think``).
"""

from __future__ import annotations

from tcr.dialects._calls import ParsedCall, check_name
from tcr.dialects._deepseek import OPEN, SEP, DeepSeekCalls, arguments_at, find_sep
from tcr.dialects._grammars import CITY_ARGUMENTS, TZ_ARGUMENTS
from tcr.dialects._record import Call, Engines, RegressionCase

__all__ = ["DIALECT"]


def _read_call(body: str, pos: int) -> tuple[ParsedCall, int]:
    sep = find_sep(body, pos)
    name = check_name(body[pos:sep].strip(), f"before {SEP}")
    arguments, end = arguments_at(body, sep + len(SEP))
    return ParsedCall(name, arguments), end


def _write_call(name: str, arguments: str) -> str:
    return f"{name}{SEP}{arguments}"


_CALLS = DeepSeekCalls(_read_call, _write_call)

_PARIS = Call("get_weather", {"city": "Paris"})
_BERLIN = Call("get_time", {"tz": "Europe/Berlin"})


DIALECT = _CALLS.dialect(
    id="deepseek_v31",
    summary="DeepSeek V3.1: NAME<｜tool▁sep｜>{…} calls in a tool-calls section",
    grammars=(
        _CALLS.grammar(
            "deepseek_v31",
            "DeepSeek V3.1 tool-calls section, one NAME<｜tool▁sep｜>{…} call after a sentence.",
            "What is the weather in Paris?",
            ("get_weather", CITY_ARGUMENTS),
        ),
        _CALLS.grammar(
            "deepseek_v31_two_calls",
            "DeepSeek V3.1 parallel calls: two calls in one tool-calls section.",
            "Get the weather in Paris and the time in Berlin.",
            ("get_weather", CITY_ARGUMENTS),
            ("get_time", TZ_ARGUMENTS),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_deepseek_v31.msgpack",
            bug="format-deepseek-v31",
            note=(
                "Dialect deepseek_v31: two calls in one tool-calls section, the name before "
                "<｜tool▁sep｜> and bare JSON after it (vLLM deepseek_v31, SGLang deepseekv31)."
            ),
            model="deepseek_v31",
            ask="Weather in Paris and the time in Berlin?",
            text=_CALLS.section("I'll check both. ", _PARIS, _BERLIN),
            tools=("get_weather", "get_time"),
            shown="I'll check both. ",
            calls=(_PARIS, _BERLIN),
        ),
        _CALLS.end_marker_in_argument(
            "deepseek_v31",
            (
                "Dialect deepseek_v31: <｜tool▁call▁end｜> inside an argument string; vLLM's "
                "deepseek_v31 tool_call_regex reads the arguments with .*? up to the first one, "
                "so the JSON is cut short."
            ),
            "deepseek_v31",
        ),
        RegressionCase(
            file="deepseek_v31_after_thinking.msgpack",
            bug="deepseek-v31-after-thinking",
            note=(
                "Dialect deepseek_v31: thinking mode, the section after </think>; the reasoning "
                "names <｜tool▁calls▁begin｜>, which opens no call there (policy 10), and the "
                "real section after it is still read."
            ),
            model="deepseek_v31",
            ask="Weather in Paris?",
            text=f"<think>I should call get_weather inside {OPEN}.</think>"
            + _CALLS.section("", _PARIS),
            tools=("get_weather",),
            reasoning=f"I should call get_weather inside {OPEN}.",
            calls=(_PARIS,),
        ),
    ),
    engines=Engines(vllm=("deepseek_v31",), sglang=("deepseekv31",), llamacpp=("DEEPSEEK_V3_1",)),
    model_seeds=("deepseek-v3.1*",),
)
