"""xLAM's fenced form: its JSON array of calls in a Markdown code fence, anywhere in the message.

vLLM's ``xlam`` parser (``xlam_tool_parser.py``, ``preprocess_model_output``) takes the
calls from the first fence whose content is JSON, ```` ```(?:json)?\\s*(…)``` ````, wherever
it sits, and shows the text around it; streaming, it watches for ```` ```json ```` and
```` ```\\n[ ````. This record reads those two openers, each followed by the array's ``[``;
the bare array at message start is ``xlam``'s. It is one dialect apart from ``xlam``
because the two read a block differently (the bare ``[`` shares its block with
``pythonic``; this one opens anywhere and closes like ``fenced_json``: on the balancing
``]``, then an optional fence). SGLang registers no xLAM detector.

``fenced_json`` opens on a fenced *object* (```` ```json\\n{ ````): the two never share a
block, and either one claimed alone reads the other's fence as text. A fenced JSON array
that is no call list (a list of numbers, of products) is content, shown verbatim with its
fence, and released at the first character that settles it (policy 8, ``Head``). Items
need ``name`` and ``arguments`` (``tcr.dialects._arrays``).
"""

from __future__ import annotations

import json
import re

from tcr.dialects._arrays import strict_array, strict_calls
from tcr.dialects._grammars import TIME, WEATHER, around, expectation
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
    Head,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import BodyText, json_text
from tcr.dialects.xlam import XLAM

__all__ = ["DIALECT"]

OPENERS = (f"{FENCE}json\n", f"{FENCE}\n")  # each followed by the array's "["

_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
_TIME = '{"name": "get_time", "arguments": {"tz": "CET"}}'


def _render(draws: Draws, tools: Tools) -> Rendered:
    objects, found, accepted = strict_calls(draws, tools)
    opener = draws.option(0, OPENERS)
    closer = draws.option(1, ("\n", "", " \n")) + FENCE  # vLLM reads a fence that closes
    # Shown verbatim when it is no call (policy 8), so the fence is body, not a marker.
    body = BodyText()
    body.add(opener)
    body.add(json_text(objects, draws.style()), fragile=True)
    calls = tuple(Call(c.name, c.arguments, DIALECT.id) for c in found)
    variant = opener[len(FENCE) : -1] or "fence"
    return Rendered(
        DIALECT.id, variant, "", body.text, closer, closer, calls, accepted, tuple(body.fragile)
    )


def _expect(content: str) -> dict[str, object]:
    m = around(rf"(.*?){FENCE}json\n(\[.*\])\n{FENCE}(.*)", content)
    return expectation(m[1] + m[3], json.loads(m[2]))


DIALECT = Dialect(
    id="xlam_fenced",
    summary="xLAM: a JSON array of calls in a Markdown code fence, anywhere in the message",
    opens=tuple(opener + "[" for opener in OPENERS),
    closes=(FENCE,),
    closing=Closing.FENCED,
    parse=strict_array,
    render=_render,
    example=Example(
        "Sure:\n",
        f"{FENCE}json\n[{_PARIS}, {_TIME}]\n{FENCE}",
        "\nBoth are on their way.",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "xlam_fenced",
            "xLAM JSON array of two calls in a ```json fence after a sentence.",
            "Get the weather in Paris and the time in Berlin.",
            f'sentence "\\n{FENCE}json\\n[" {WEATHER} ", " {TIME} "]\\n{FENCE}" ("\\n" sentence)?',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_xlam_fenced.msgpack",
            bug="format-xlam-fenced",
            note=(
                "Dialect xlam_fenced: xLAM-2 writes its two calls as a JSON array in a ```json "
                "fence after a sentence; vLLM's xlam parser reads the fence anywhere."
            ),
            model=XLAM,
            ask="Weather in Paris and the time in Berlin?",
            text=f"Sure:\n{FENCE}json\n[{_PARIS}, {_TIME}]\n{FENCE}\nBoth are on their way.",
            tools=("get_weather", "get_time"),
            shown="Sure:\n\nBoth are on their way.",
            calls=(Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
        ),
        RegressionCase(
            file="xlam_fenced_number_list_is_content.msgpack",
            bug="xlam-fenced-number-list-is-content",
            note=(
                "Dialect xlam_fenced: a ```json fence holding a list of numbers is content, "
                "shown verbatim with its fence and released at its first number (policy 8)."
            ),
            model=XLAM,
            ask="The first primes as JSON?",
            text=f"Here:\n{FENCE}json\n[2, 3, 5, 7]\n{FENCE}",
            tools=("get_weather",),
            shown=f"Here:\n{FENCE}json\n[2, 3, 5, 7]\n{FENCE}",
        ),
    ),
    engines=Engines(vllm=("xlam",)),
    keep=1,
    answer_like=True,  # a fenced JSON array that is no call list is content, verbatim
    # UNDECIDED, not BALANCED, for the first lexer: the message-start key watch of an
    # answer_like BALANCED block reads an object's keys, and a call list is an array.
    lexer_by_first=(("[", BodyLexer.BALANCED),),
    head=Head(viable=re.compile(r"\[\s*\{?"), done=re.compile(r"\[\s*\{")),
    markup=(FENCE, f"{FENCE}json\n["),
)
