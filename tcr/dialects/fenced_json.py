"""A JSON call in a Markdown code fence (Qwen2.5 without a template).

The fence also opens ordinary JSON answers, so a call needs its arguments; the
block closes on the balancing ``}``, then an optional fence.
"""

from __future__ import annotations

import json

from tcr.dialects._calls import unmarked_json_call
from tcr.dialects._grammars import WEATHER, around, expectation
from tcr.dialects._record import (
    FENCE,
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
from tcr.dialects._writing import FLAVORS, BodyText, Calls, json_calls, json_text

__all__ = ["DIALECT"]

OPENERS = (f"{FENCE}json\n", f"{FENCE}xml\n")  # each followed by the call's "{"

_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
# Run without a tool template, a model is told in prose how to call (and so fences the call).
_ASK_FOR_A_FENCE = (
    "You can call one tool, get_weather(city). To call it, reply with "
    '{"name": "get_weather", "arguments": {"city": "..."}} in a ```json code block.'
)


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=1, flavors=FLAVORS)
    (obj,), found = json_calls(draws, calls, optional=False)
    opener = draws.option(0, OPENERS)
    space = draws.option(1, ("\n", "", " \n"))
    fence = draws.option(2, (space + FENCE, ""))  # the fence is optional
    body = BodyText()
    body.add(json_text(obj, draws.style()), fragile=True)
    return Rendered(
        DIALECT.id,
        opener[len(FENCE) : -1],
        opener,
        body.text,
        fence,
        space if fence else "",
        found,
        calls.accepted(optional=False),
        tuple(body.fragile),
    )


def _expect(content: str) -> dict[str, object]:
    m = around(rf"(.*?){FENCE}json\n(\{{.*\}})\n{FENCE}(.*)", content)
    return expectation(m[1] + m[3], [json.loads(m[2])])


DIALECT = Dialect(
    id="fenced_json",
    summary="JSON call in a code fence; closes on the balancing }, then an optional ```",
    opens=tuple(opener + "{" for opener in OPENERS),
    closes=(FENCE,),
    closing=Closing.FENCED,
    parse=unmarked_json_call,
    render=_render,
    example=Example(
        "Sure:\n",
        f'{FENCE}json\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}\n{FENCE}',
        "\nLet me know.",
        (Call("get_weather", {"city": "Paris"}),),
    ),
    grammars=(
        Grammar(
            "fenced_json",
            "Qwen2.5 without a template: a JSON call in a ```json fence.",
            "What is the weather in Paris?",
            f'sentence "\\n{FENCE}json\\n" {WEATHER} "\\n{FENCE}" ("\\n" sentence)?',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_fenced_json.msgpack",
            bug="format-fenced-json",
            note=(
                "Dialect fenced_json: Qwen2.5 without a tool template writes the call in a "
                "```json fence, with text on both sides."
            ),
            model="qwen25_coder",
            ask="Weather in Paris?",
            text=f"Sure:\n{FENCE}json\n{_PARIS}\n{FENCE}\nLet me know if you need other days.",
            tools=("get_weather",),
            shown="Sure:\n\nLet me know if you need other days.",
            calls=(Call("get_weather", {"city": "Paris"}),),
            system=_ASK_FOR_A_FENCE,
            offered=(),
        ),
        RegressionCase(
            file="format_fenced_xml.msgpack",
            bug="format-fenced-xml",
            note="Dialect fenced_json, its other opener: a JSON call in a ```xml fence.",
            model="qwen25_coder",
            ask="Weather in Paris?",
            text=f"{FENCE}xml\n{_PARIS}\n{FENCE}",
            tools=("get_weather",),
            calls=(Call("get_weather", {"city": "Paris"}),),
            system=_ASK_FOR_A_FENCE,
            offered=(),
        ),
    ),
    keep=1,
    first_lexer=BodyLexer.BALANCED,
    markup=(FENCE, f"{FENCE}json\n{{"),
    # llama.cpp's Hermes 2 Pro parser reads it; vLLM and SGLang have none.
    engines=Engines(llamacpp=("HERMES_2_PRO",)),
)
