"""Mistral before v11: ``[TOOL_CALLS]`` then a JSON array of calls (or one call object).

vLLM and SGLang call its parser ``mistral``. No closing marker: the block ends
at the bracket that balances the array, or the brace that balances the object.
The same ``[TOOL_CALLS]`` opens v11's compact ``NAME{…}`` (``mistral_v11``) and
v13's ``NAME[ARGS]{…}`` (``mistral_v13``); they are registered before this one,
which takes every body neither of them owns.
"""

from __future__ import annotations

import json

from tcr.dialects._calls import ParsedCall, json_calls
from tcr.dialects._grammars import WEATHER, around, expectation
from tcr.dialects._record import (
    BodyLexer,
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
from tcr.dialects._writing import (
    FLAVORS,
    MAX_CALLS,
    SHAPES,
    BodyText,
    Calls,
    json_text,
    rendered,
)
from tcr.dialects._writing import json_calls as write_json_calls

__all__ = ["DIALECT"]

OPEN = "[TOOL_CALLS]"


# vLLM's mistral parser indexes raw_function_call["arguments"] and llama.cpp's Mistral Nemo
# grammar writes only it; SGLang's parse_base_json also takes "parameters" (a policy).
_KEYS = ("arguments",)


def _parse(body: str) -> list[ParsedCall]:
    """``[{…}, …]`` or one ``{…}``: JSON calls with ``name`` and ``arguments``."""
    return json_calls(body, _KEYS)


def _render(draws: Draws, tools: Tools) -> Rendered:
    form = draws.variant(("array", "object"))
    calls = Calls(draws, tools, most=MAX_CALLS if form == "array" else 1, flavors=FLAVORS)
    shapes = tuple(shape for shape in SHAPES if shape != "parameters")
    objects, found = write_json_calls(draws, calls, optional=True, shapes=shapes)
    body = BodyText()
    body.add(draws.option(0, ("", " ")))
    value = objects if form == "array" else objects[0]
    body.add(json_text(value, draws.style()), fragile=True)
    return rendered(DIALECT, form, body, calls.accepted(), found)


def _expect_array(content: str) -> dict[str, object]:
    m = around(r"(.*?)\[TOOL_CALLS\](\[.*\])(.*)", content)
    return expectation(m[1] + m[3], json.loads(m[2]))


_ARRAY = f'{OPEN}[{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}, ' + (
    '{"name": "get_time", "arguments": {"tz": "CET"}}]'
)

DIALECT = Dialect(
    id="mistral",
    summary="Mistral before v11: [TOOL_CALLS] then a JSON array of calls",
    opens=(OPEN,),
    closes=(),
    closing=Closing.BALANCED,
    parse=_parse,
    render=_render,
    example=Example(
        "Calling. ",
        _ARRAY,
        " then",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "mistral",
            "Mistral [TOOL_CALLS] JSON array.",
            "What is the weather in Paris?",
            f'"[TOOL_CALLS][" {WEATHER} "]"',
            _expect_array,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_mistral.msgpack",
            bug="format-mistral",
            note="Dialect mistral: Mistral v0.3's [TOOL_CALLS] then a JSON array.",
            model="mistral_v03",
            ask="Weather in Paris?",
            text=f'{OPEN} [{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}]',
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
    ),
    engines=Engines(vllm=("mistral",), sglang=("mistral",), llamacpp=("MISTRAL_NEMO", "MAGISTRAL")),
    special_tokens=frozenset({OPEN}),
    lexer_by_first=(("[", BodyLexer.BALANCED),),
    lexer_otherwise=BodyLexer.BEFORE_BRACE,
    model_seeds=("mistral*", "mixtral*"),
    markup=(OPEN,),
)
