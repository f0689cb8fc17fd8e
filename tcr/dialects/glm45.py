"""GLM-4.5: ``NAME``, a newline, then ``<arg_key>K</arg_key><arg_value>V</arg_value>`` pairs.

vLLM and SGLang call its parser ``glm45`` (SGLang also ``glm``); llama.cpp's format
was ``COMMON_CHAT_FORMAT_GLM_4_5``. Values are text (JSON only when they plainly are
an object or array), kept as written: the template writes them inline and the
engines keep their white space (vLLM 0.34 vllm/parser/glm47_moe.py
``_glm47_parse_args``; SGLang's ``_parse_argument_pairs``), so Qwen3-Coder's
one-newline trim is not GLM's. No pairs means no arguments. The newline after the
name is what makes a body this dialect's: SGLang's ``glm45`` (python/sglang/srt/
function_call/glm4_moe_detector.py, ``Glm4MoeDetector``: ``<tool_call>(.*?)(?:\\n|\n)
(.*)</tool_call>``) and vLLM's ``glm4_moe`` parser (``<tool_call>([^\n]*)\n(.*)
</tool_call>``) read nothing without it, so GLM-4.7's shapes (the name straight into
``<arg_key>``, or a name alone) are ``tcr.dialects.glm47``'s and malformed here. That
dialect reads either shape with ``read_name_and_pairs``, as the engines' glm47 parsers do.
"""

from __future__ import annotations

import re

from tcr.dialects._calls import BodyError, ParsedCall, Trim, check_name, text_call, walk
from tcr.dialects._grammars import city_call
from tcr.dialects._record import (
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import XML_FLAVORS, BodyText, Calls, rendered, xml_arguments
from tcr.dialects.hermes import CLOSE, OPEN

__all__ = ["DIALECT", "KEY", "read_name_and_pairs"]

KEY = "<arg_key>"
_PAIR = re.compile(
    r"<arg_key>([^<]*)</arg_key>\s*<arg_value>(.*?)</arg_value>\s*(?=<arg_key>|\Z)", re.S
)
_NAME_LINE = re.compile(r"\s*[\w\-][^\n<]*\n")  # a name, then a newline before any tag


def read_name_and_pairs(body: str) -> list[ParsedCall]:
    """``NAME`` then ``<arg_key>K</arg_key><arg_value>V</arg_value>…``, with or without
    white space around them; no pairs, no arguments."""
    text = body.strip()
    first = text.find(KEY)
    head, rest = (text, "") if first < 0 else (text[:first], text[first:])
    name = check_name(head.strip(), "the name before <arg_key>")
    return [text_call(name, walk(_PAIR, rest, "a pair"), Trim.NOTHING)]


def _parse(body: str) -> list[ParsedCall]:
    """``NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>…``; no pairs, no arguments."""
    if not _owns(body):
        raise BodyError("malformed", "no newline after the name before the first tag (GLM-4.5)")
    return read_name_and_pairs(body)


def _owns(body: str) -> bool:
    return _NAME_LINE.match(body) is not None


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=1, flavors=XML_FLAVORS)
    name = "" if calls.flavor == "missing_name" else calls.names[0]
    body = BodyText()
    body.add(name + "\n")
    params = xml_arguments(draws, trim=Trim.NOTHING)
    for key, value, _ in params:
        body.add(f"{KEY}{key}</arg_key>\n<arg_value>{value}</arg_value>", fragile=True)
        body.add("\n")
    found = (Call(name, {key: meant for key, _, meant in params}),) if name else ()
    return rendered(DIALECT, "pairs", body, calls.accepted(), found)


_expect = city_call(
    rf"(.*?){OPEN}get_weather\n<arg_key>city</arg_key>\n<arg_value>(\w+)</arg_value>\n{CLOSE}(.*)"
)


DIALECT = Dialect(
    id="glm45",
    summary="GLM-4.5 NAME<arg_key>K</arg_key><arg_value>V</arg_value> in <tool_call> tags",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "Checking. ",
        f"{OPEN}get_weather\n{KEY}city</arg_key>\n<arg_value>Paris</arg_value>\n{CLOSE}",
        " ok",
        (Call("get_weather", {"city": "Paris"}),),
    ),
    grammars=(
        Grammar(
            "tool_call_tag_glm",
            "GLM <arg_key>/<arg_value> call.",
            "What is the weather in Paris?",
            f'sentence "\\n{OPEN}get_weather\\n<arg_key>city</arg_key>\\n<arg_value>" word '
            f'"</arg_value>\\n{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_tool_call_tag_glm.msgpack",
            bug="format-tool-call-tag-glm",
            note="Dialect glm45: NAME then <arg_key>/<arg_value> pairs.",
            model="glm45_air",
            ask="Three-day forecast for Paris?",
            text=f"Checking.\n{OPEN}get_weather\n{KEY}city</arg_key>\n"
            f"<arg_value>Paris</arg_value>\n{KEY}days</arg_key>\n<arg_value>3</arg_value>\n"
            f"{CLOSE}",
            tools=("get_weather",),
            shown="Checking.\n",
            calls=(Call("get_weather", {"city": "Paris", "days": "3"}),),
        ),
    ),
    engines=Engines(vllm=("glm45",), sglang=("glm45", "glm"), llamacpp=("GLM_4_5",)),
    special_tokens=frozenset({OPEN, CLOSE, KEY, "</arg_key>", "<arg_value>", "</arg_value>"}),
    owns=_owns,
    schema_typed=True,
    model_seeds=("glm*",),
    tokens=(KEY, "</arg_value>"),
)
