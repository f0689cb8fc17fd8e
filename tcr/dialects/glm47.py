"""GLM-4.7: GLM-4.5's ``NAME<arg_key>K</arg_key><arg_value>V</arg_value>`` with no newlines.

SGLang has a parser of its own for it, ``glm47`` (python/sglang/srt/function_call/
glm47_moe_detector.py, ``Glm47MoeDetector``, for GLM-4.7 and GLM-5: the name runs up
to the first ``<arg_key>``, ``<tool_call>NAME</tool_call>`` is a call without
arguments), while its ``glm45`` (``Glm4MoeDetector``) needs a newline after the name
and reads neither shape. vLLM registers ``glm47`` for vllm/frontend/processing/
tool_parsers/glm47_moe_tool_parser.py (``Glm47MoeModelToolParser``, whose regex takes
the name and the pairs with or without white space) and now maps ``glm45`` to the same
class. So this is its own dialect: a parser claimed as ``glm45`` is not asked to read
it. A body is this dialect's when no newline follows the name before the first tag
(it runs straight into ``<arg_key>``, or ends the body); with one, it is GLM-4.5's,
and ``glm45`` reads nothing else. Claimed alone, this dialect still reads GLM-4.5's
newline form (``glm45.read_name_and_pairs``), as every glm47 parser above does:
expecting it rejected would blame them all.
"""

from __future__ import annotations

import re

from tcr.dialects import glm45
from tcr.dialects._calls import Trim
from tcr.dialects._grammars import CITY, city_block
from tcr.dialects._record import (
    Call,
    Closing,
    Dialect,
    Draws,
    Engines,
    Example,
    Model,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import XML_FLAVORS, BodyText, Calls, rendered, xml_arguments
from tcr.dialects.hermes import CLOSE, OPEN

__all__ = ["DIALECT"]

KEY = glm45.KEY
_OWNED = re.compile(r"\s*[\w\-][^\n<]*(?:<|\Z)")  # a name, then no newline before a tag

_MODEL = Model(
    "vllm",
    "zai-org/GLM-4.7-Flash",
    special_tokens=(OPEN, CLOSE, KEY, "</arg_key>", "<arg_value>", "</arg_value>"),
    ms_per_chunk=18.0,
)


def _owns(body: str) -> bool:
    return _OWNED.match(body) is not None


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=1, flavors=XML_FLAVORS)
    name = "" if calls.flavor == "missing_name" else calls.names[0]
    body = BodyText()
    body.add(name)
    params = xml_arguments(draws, trim=Trim.NOTHING)
    for key, value, _ in params:
        body.add(f"{KEY}{key}</arg_key><arg_value>{value}</arg_value>", fragile=True)
    found = (Call(name, {key: meant for key, _, meant in params}),) if name else ()
    return rendered(DIALECT, "pairs", body, calls.accepted(), found)


def _block(call: Call) -> str:
    pairs = "".join(
        f"{KEY}{key}</arg_key><arg_value>{value}</arg_value>"
        for key, value in call.arguments.items()
    )
    return f"{OPEN}{call.name}{pairs}{CLOSE}"


_PARIS = Call("get_weather", {"city": "Paris", "days": "3"})
_BERLIN = Call("get_time", {"tz": "Europe/Berlin"})
_NOW = Call("get_time", {})

DIALECT = Dialect(
    id="glm47",
    summary="GLM-4.7 NAME<arg_key>K</arg_key><arg_value>V</arg_value> in <tool_call> tags, "
    "no newlines",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=glm45.read_name_and_pairs,
    render=_render,
    example=Example("Checking.", _block(_PARIS) + _block(_BERLIN), "", (_PARIS, _BERLIN)),
    grammars=(
        city_block(
            "glm47",
            "GLM-4.7 <arg_key>/<arg_value> call without newlines, after a sentence.",
            "What is the weather in Paris?",
            _block(Call("get_weather", {"city": CITY})),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_glm47.msgpack",
            bug="format-glm47",
            note=(
                "Dialect glm47: two calls with no newline anywhere, as GLM-4.7 writes them; "
                "SGLang's glm45 detector needs a newline after the name and reads neither."
            ),
            model=_MODEL,
            ask="Three-day forecast for Paris, and the time in Berlin?",
            text="Checking." + _block(_PARIS) + _block(_BERLIN),
            tools=("get_weather", "get_time"),
            shown="Checking.",
            calls=(_PARIS, _BERLIN),
        ),
        RegressionCase(
            file="glm47_call_without_arguments.msgpack",
            bug="glm47-call-without-arguments",
            note=(
                "Dialect glm47: <tool_call>NAME</tool_call>, a call without arguments; vLLM's "
                "glm47 parser knew the name only after a newline or <arg_key> and never "
                "streamed the call (vllm-project/vllm#48201)."
            ),
            model=_MODEL,
            ask="What time is it?",
            text="One moment." + _block(_NOW),
            tools=("get_time",),
            shown="One moment.",
            calls=(_NOW,),
        ),
    ),
    # SGLang's ling3 (Ling3Detector) and spark25 (Spark25Detector) read GLM blocks with or
    # without the newline after NAME, values as written: this dialect's reading.
    engines=Engines(
        vllm=("glm47", "glm45"),
        sglang=("glm47", "ling3", "spark25"),
        llamacpp=("GLM_4_5",),
    ),
    special_tokens=glm45.DIALECT.special_tokens,
    owns=_owns,
    schema_typed=True,
    model_seeds=("glm-4.7*", "glm-5*", "glm47*", "glm5*"),
    tokens=(KEY, "</arg_value>"),
)
