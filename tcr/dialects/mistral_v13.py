"""Mistral v13: ``[TOOL_CALLS]NAME[ARGS]{…}``, with ``[ARGS]`` (and maybe ``[CALL_ID]ID``).

mistral-common's v11+ instruct tokenizers write an ``[ARGS]`` control token
between a call's name and its JSON arguments, and v13's a ``[CALL_ID]ID`` before
it; vLLM and SGLang call the parser ``mistral``
(vllm/tool_parsers/mistral_tool_parser.py,
python/sglang/srt/function_call/mistral_detector.py). One call per
``[TOOL_CALLS]``: parallel calls repeat the marker, each a block that ends at the
``}`` balancing its arguments. It shares its opener with ``mistral`` and
``mistral_v11`` and owns the bodies that are a name then ``[ARGS]``.
"""

from __future__ import annotations

import json
import re

from tcr.dialects._calls import (
    BodyError,
    ParsedCall,
    canonical_arguments,
    check_name,
    decode_whole,
)
from tcr.dialects._grammars import around, call_map, expectation
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
from tcr.dialects._writing import BodyText, Calls, json_text, rendered
from tcr.dialects.mistral import OPEN

__all__ = ["DIALECT"]

ARGS = "[ARGS]"
_NAMED = re.compile(r"\s*([^\[\]\s{]+)(?:\[CALL_ID\][^\[]*)?\[ARGS\](.*)", re.S)


def _owns(body: str) -> bool:
    """A name (maybe with ``[CALL_ID]ID``), then ``[ARGS]``."""
    return _NAMED.match(body) is not None


def _parse(body: str) -> list[ParsedCall]:
    match = _NAMED.fullmatch(body.rstrip())
    if match is None:
        raise BodyError("malformed", "expected NAME[ARGS]{…}")
    name = check_name(match.group(1), "before [ARGS]")
    return [ParsedCall(name, canonical_arguments(decode_whole(match.group(2))))]


def _render(draws: Draws, tools: Tools) -> Rendered:
    # Without its name the body would start with "[" and close as an array (mistral's
    # block): this form is always named.
    named = Calls(draws, tools, most=1, flavors=("call",))
    name = named.names[0]
    args = draws.arguments()
    call_id = draws.option(1, ("", "[CALL_ID]a1B2c3D4e"))
    body = BodyText()
    body.add(f"{name}{call_id}{ARGS}{json_text(args, draws.style())}", fragile=True)
    return rendered(DIALECT, "args", body, named.accepted(), (Call(name, args),))


def _expect_args(content: str) -> dict[str, object]:
    m = around(r"(.*?)\[TOOL_CALLS\]get_weather\[ARGS\](\{.*?\})(.*)", content)
    return expectation(m[1] + m[3], [call_map("get_weather", json.loads(m[2]))])


DIALECT = Dialect(
    id="mistral_v13",
    summary="Mistral v13: [TOOL_CALLS]NAME[ARGS]{…}, the marker repeated per call",
    opens=(OPEN,),
    closes=(),
    closing=Closing.BALANCED,
    parse=_parse,
    render=_render,
    example=Example(
        "Calling. ",
        f'{OPEN}get_weather{ARGS}{{"city": "Paris"}}{OPEN}get_time{ARGS}{{"tz": "CET"}}',
        " then",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "mistral_v13",
            "Mistral [TOOL_CALLS]NAME[ARGS]{…} form.",
            "What is the weather in Paris?",
            '"[TOOL_CALLS]get_weather[ARGS]{\\"city\\": " city "}"',
            _expect_args,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_mistral_v13.msgpack",
            bug="format-mistral-v13",
            note=(
                "Dialect mistral_v13: Mistral Small 3.2's NAME[ARGS]{…} form, two calls, "
                "from llama-server's /completion endpoint."
            ),
            model="mistral_small",
            ask="Weather in Paris and the time there?",
            text=f'{OPEN}get_weather{ARGS}{{"city": "Paris"}}'
            f'{OPEN}get_time{ARGS}{{"tz": "Europe/Paris"}}',
            tools=("get_weather", "get_time"),
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Paris"}),
            ),
        ),
    ),
    engines=Engines(vllm=("mistral",), sglang=("mistral",)),
    special_tokens=frozenset({OPEN, ARGS}),
    lexer_by_first=(("[", BodyLexer.BALANCED),),
    lexer_otherwise=BodyLexer.BEFORE_BRACE,
    owns=_owns,
    tokens=(ARGS,),
    markup=(OPEN,),
)
