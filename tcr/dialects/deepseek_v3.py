"""DeepSeek V3: ``function<｜tool▁sep｜>NAME`` then the arguments in a ```json fence.

vLLM calls its parser ``deepseek_v3``, SGLang ``deepseekv3``. Each call is
``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\nARGS\\n```<｜tool▁call▁end｜>``
(``function`` is the call's type), all of a turn's calls in one tool-calls section
(``tcr.dialects._deepseek``). Checked against vLLM's
vllm/entrypoints/openai/tool_parsers/deepseekv3_tool_parser.py (``tool_call_regex``:
type, ``<｜tool▁sep｜>``, name, ``\\n```json\\n``, arguments, ``\\n```<｜tool▁call▁end｜>``;
it looks the section markers up in the vocabulary) and SGLang's
python/sglang/srt/function_call/deepseekv3_detector.py (the same regex). DeepSeek-R1
writes the same format.
"""

from __future__ import annotations

import json
import re

from tcr.dialects._calls import BodyError, ParsedCall, check_name
from tcr.dialects._deepseek import (
    BEGIN,
    CLOSE,
    END,
    OPEN,
    SEP,
    DeepSeekCalls,
    arguments_at,
    expect,
    find_sep,
)
from tcr.dialects._grammars import CITY_ARGUMENTS
from tcr.dialects._record import Call, Engines, RegressionCase

__all__ = ["DIALECT"]

TYPE = "function"
FENCE_OPEN = "```json"
FENCE_CLOSE = "```"

# A V3 call: the type word, the separator, a name on its own line, then a fence.
_OWNS = re.compile(rf"\s*{BEGIN}\s*{TYPE}\s*{SEP}[^\n<{{]*\n\s*```")


def _owns(body: str) -> bool:
    return _OWNS.match(body) is not None


def _read_call(body: str, pos: int) -> tuple[ParsedCall, int]:
    sep = find_sep(body, pos)
    if body[pos:sep].strip() != TYPE:
        raise BodyError("malformed", f"the call's type is {body[pos:sep][:20]!r}, not {TYPE!r}")
    line_end = body.find("\n", sep)
    if line_end < 0:
        raise BodyError("malformed", f"no line break after the name at offset {sep}")
    name = check_name(body[sep + len(SEP) : line_end].strip(), f"after {SEP}")
    arguments, end = arguments_at(body, expect(body, FENCE_OPEN, line_end, "before the arguments"))
    return ParsedCall(name, arguments), expect(body, FENCE_CLOSE, end, "after the arguments")


def _write_call(name: str, arguments: str) -> str:
    return f"{TYPE}{SEP}{name}\n{FENCE_OPEN}\n{arguments}\n{FENCE_CLOSE}"


_CALLS = DeepSeekCalls(_read_call, _write_call, between="\n")  # the template's newline

_PARIS = Call("get_weather", {"city": "Paris"})
_BERLIN = Call("get_time", {"tz": "Europe/Berlin"})


DIALECT = _CALLS.dialect(
    id="deepseek_v3",
    summary="DeepSeek V3: function<｜tool▁sep｜>NAME + ```json arguments, in a tool-calls section",
    grammars=(
        _CALLS.grammar(
            "deepseek_v3",
            "DeepSeek V3 tool-calls section with one fenced call after a sentence.",
            "What is the weather in Paris?",
            ("get_weather", CITY_ARGUMENTS),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_deepseek_v3.msgpack",
            bug="format-deepseek-v3",
            note=(
                "Dialect deepseek_v3: two calls in one tool-calls section, a newline between "
                "them, each a name then its ```json fence (vLLM deepseek_v3, SGLang deepseekv3)."
            ),
            model="deepseek_v3",
            ask="Weather in Paris and the time in Berlin?",
            text=_CALLS.section("I'll check both. ", _PARIS, _BERLIN),
            tools=("get_weather", "get_time"),
            shown="I'll check both. ",
            calls=(_PARIS, _BERLIN),
        ),
        RegressionCase(
            file="deepseek_v3_indented_arguments.msgpack",
            bug="deepseek-v3-indented-arguments",
            note=(
                "Dialect deepseek_v3: arguments pretty-printed over several lines; vLLM's "
                "deepseek_v3 tool_call_regex has no DOTALL, its .* stops at a line break, "
                "and the call is lost."
            ),
            model="deepseek_v3",
            ask="Weather in Paris for three days?",
            text=OPEN
            + _write_call("get_weather", json.dumps({"city": "Paris", "days": 3}, indent=2)).join(
                (BEGIN, END)
            )
            + CLOSE,
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris", "days": 3}),),
        ),
        _CALLS.end_marker_in_argument(
            "deepseek_v3",
            (
                "Dialect deepseek_v3: <｜tool▁call▁end｜> inside an argument string; SGLang's "
                "DeepSeekV3Detector cuts each call at the first one (.*? over the text), so the "
                "call breaks."
            ),
            "deepseek_v3",
        ),
        RegressionCase(
            file="deepseek_v3_spelled_markers.msgpack",
            bug="deepseek-v3-spelled-markers",
            note=(
                "Dialect deepseek_v3: the section as llama-server streams it when a grammar makes "
                "a model without DeepSeek's special tokens spell it: <｜tool▁calls▁begin｜> in "
                "pieces, cut after its 'begin'; a partial-marker check that cuts the marker by "
                "UTF-8 bytes (3 for each ｜ and ▁) holds no prefix past <｜tool▁calls▁ and shows "
                "the section as text."
            ),
            model="smollm2",
            ask="What is the weather in Paris? Answer with a tool call.",
            text=_CALLS.section("Sure. ", _PARIS),
            tools=None,
            shown="Sure. ",
            calls=(_PARIS,),
        ),
        RegressionCase(
            file="deepseek_v3_fence_in_text.msgpack",
            bug="deepseek-v3-fence-in-text",
            note=(
                "Dialect deepseek_v3: a plain answer with a markdown code fence and no call; "
                "SGLang's DeepSeekV3Detector deletes every ``` from streamed text until a call "
                "starts, so the fence vanishes."
            ),
            model="deepseek_v3",
            ask="Show a Python example.",
            text="Here:\n```python\nprint(1)\n```\nThat is all.",
            tools=("get_weather",),
            shown="Here:\n```python\nprint(1)\n```\nThat is all.",
        ),
    ),
    engines=Engines(vllm=("deepseek_v3",), sglang=("deepseekv3",), llamacpp=("DEEPSEEK_R1",)),
    owns=_owns,
    model_seeds=("deepseek-v3", "deepseek-v3-*", "deepseek-r1*"),
)
