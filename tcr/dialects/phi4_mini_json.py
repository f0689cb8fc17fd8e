"""Phi-4-mini: ``functools[…]``, a JSON array of calls after the word ``functools``.

vLLM calls its parser ``phi4_mini_json`` (``vllm/tool_parsers/phi4mini_tool_parser.py``):
the regex ``functools\\[(.*?)\\]`` takes the array, each item read as ``name`` and
``arguments`` (or ``parameters``). ``functools`` is plain text, not a special token;
the block ends at the ``]`` that balances the array, not at the first ``]`` as
vLLM's non-greedy regex does (an argument holding a list breaks it). vLLM drops
the text around the call; the reference shows it.
"""

from __future__ import annotations

import dataclasses
import json

from tcr.dialects._arrays import strict_array, strict_calls
from tcr.dialects._calls import ParsedCall
from tcr.dialects._grammars import TIME, WEATHER, around, expectation
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
from tcr.dialects._writing import BodyText, json_text

__all__ = ["DIALECT"]

WORD = "functools"
OPEN = WORD + "["  # the "[" is the array's own: kept in the body
KEYS = ("arguments", "parameters")
_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def _parse(body: str) -> list[ParsedCall]:
    return strict_array(body, KEYS)


def _render(draws: Draws, tools: Tools) -> Rendered:
    objects, found, accepted = strict_calls(draws, tools, keys=KEYS)
    body = BodyText()
    body.add(json_text(objects, draws.style()), fragile=True)
    return Rendered(
        DIALECT.id,
        "array",
        WORD,
        body.text,
        calls=tuple(dataclasses.replace(call, dialect=DIALECT.id) for call in found),
        accepted=accepted,
        fragile=tuple(body.fragile),
    )


def _expect(content: str) -> dict[str, object]:
    m = around(rf"(.*?){WORD}(\[.*\])(.*)", content)
    return expectation(m[1] + m[3], json.loads(m[2]))


DIALECT = Dialect(
    id="phi4_mini_json",
    summary="Phi-4-mini: functools then a JSON array of calls",
    opens=(OPEN,),
    closes=(),
    closing=Closing.BALANCED,
    parse=_parse,
    render=_render,
    example=Example(
        "",
        f'{OPEN}{_PARIS}, {{"name": "get_time", "parameters": {{"tz": "CET"}}}}]',
        "",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "phi4_mini_json",
            "Phi-4-mini functools[…] array of two calls.",
            "Get the weather in Paris and the time in Berlin.",
            f'"{OPEN}" {WEATHER} ", " {TIME} "]"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_phi4_mini_json.msgpack",
            bug="format-phi4-mini-json",
            note="Dialect phi4_mini_json: the whole message is functools[…] with one call.",
            model="phi4_mini",
            ask="Weather in Paris?",
            text=f"{OPEN}{_PARIS}]",
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
        ),
        RegressionCase(
            file="phi4_mini_json_list_argument.msgpack",
            bug="phi4-mini-json-list-argument",
            note=(
                "Dialect phi4_mini_json: an argument holding a list; the array ends at its "
                "balancing ], not at the first ] (vLLM's functools\\[(.*?)\\] regex)."
            ),
            model="phi4_mini",
            ask="Top 3 orders by tag?",
            text=f'{OPEN}{{"name": "run_sql", "arguments": {{"query": "SELECT * FROM t '
            f'WHERE tag IN (\'a\', \'b\')", "limit": 3, "order": ["total", "id"]}}}}]',
            tools=("run_sql",),
            calls=(
                Call(
                    "run_sql",
                    {
                        "query": "SELECT * FROM t WHERE tag IN ('a', 'b')",
                        "limit": 3,
                        "order": ["total", "id"],
                    },
                ),
            ),
        ),
        RegressionCase(
            file="phi4_mini_json_word_in_prose.msgpack",
            bug="phi4-mini-json-word-in-prose",
            note=(
                "Dialect phi4_mini_json: the word functools in prose (import functools, "
                "functools.cache, a [1] citation) is text; only functools[ opens a call."
            ),
            model="phi4_mini",
            ask="How do I memoise a function?",
            text="Use functools: `import functools` then `@functools.cache` [1].",
            tools=("get_weather",),
            shown="Use functools: `import functools` then `@functools.cache` [1].",
        ),
    ),
    engines=Engines(vllm=("phi4_mini_json",), llamacpp=("FIREFUNCTION_V2",)),
    keep=1,
    first_lexer=BodyLexer.BALANCED,
    model_seeds=("phi-4-mini*",),
    markup=(OPEN,),
)
