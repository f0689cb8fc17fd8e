"""xLAM (Salesforce): the message starts with a JSON array of ``{"name", "arguments"}`` calls.

vLLM calls its parser ``xlam`` (``vllm/entrypoints/openai/tool_parsers/xlam_tool_parser.py``).
Its ``preprocess_model_output`` takes the calls from, in order: JSON after ``</think>``;
a ```` ``` ````/```` ```json ```` fence; ``[TOOL_CALLS]`` up to the line's end;
``<tool_call>…</tool_call>``; else an output whose stripped text starts with ``[``. This
record is the last form, the new one: a fenced array is ``xlam_fenced``'s, the
``[TOOL_CALLS]`` array ``mistral``'s and a single fenced call object ``fenced_json``'s.
Each item needs ``name`` and ``arguments``; vLLM skips an item without them and keeps
the others, the reference refuses the whole array (as for the other strict arrays,
``tcr.dialects._arrays``).

``[`` is shared with ``pythonic``: a body whose first item is ``{`` is xLAM's. A
``[`` that cannot begin ``[{`` (a list of numbers, a citation) is released as text at
once (``Head``, policy 8); a JSON array that is not calls is shown verbatim.
``[TOOL_CALLS]`` at message start is Mistral's: its ``[`` waits until the marker is
certain either way.
"""

from __future__ import annotations

import json
import re

from tcr.dialects._arrays import strict_array, strict_calls
from tcr.dialects._grammars import TIME, WEATHER, around, expectation
from tcr.dialects._pythonic import AT_START_BRACKET, MARKUP
from tcr.dialects._record import (
    Call,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    Head,
    Model,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import BodyText, json_text

__all__ = ["DIALECT"]

XLAM = Model("vllm", "Salesforce/Llama-xLAM-2-8b-fc-r", ms_per_chunk=16.0)
_OWNS_RE = re.compile(r"\s*\[\s*\{")
_PARIS = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
_TIME = '{"name": "get_time", "arguments": {"tz": "CET"}}'


def _owns(body: str) -> bool:
    return _OWNS_RE.match(body) is not None


def _render(draws: Draws, tools: Tools) -> Rendered:
    objects, found, accepted = strict_calls(draws, tools)
    body = BodyText()
    body.add(json_text(objects, draws.style()), fragile=True)
    calls = tuple(Call(c.name, c.arguments, DIALECT.id) for c in found)
    return Rendered(
        DIALECT.id, "array", "", body.text, "", "", calls, accepted, tuple(body.fragile)
    )


def _expect(content: str) -> dict[str, object]:
    m = around(r"(\[.*\])(.*)", content)
    return expectation(m[2], json.loads(m[1]))


DIALECT = Dialect(
    id="xlam",
    summary="xLAM: a JSON array of calls that is the start of the message",
    parse=strict_array,
    render=_render,
    example=Example(
        "",
        f"[{_PARIS}, {_TIME}]",
        "",
        (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
    ),
    grammars=(
        Grammar(
            "xlam",
            "xLAM JSON array of two calls as the whole message start.",
            "Get the weather in Paris and the time in Berlin.",
            f'"[" {WEATHER} ", " {TIME} "]" ("\\n" sentence)?',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_xlam.msgpack",
            bug="format-xlam",
            note="Dialect xlam: xLAM-2 writes two calls as a JSON array, the whole message.",
            model=XLAM,
            ask="Weather in Paris and the time in Berlin?",
            text=f"[{_PARIS}, {_TIME}]",
            tools=("get_weather", "get_time"),
            calls=(Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"})),
        ),
        RegressionCase(
            file="xlam_json_answer_array.msgpack",
            bug="xlam-json-answer-array",
            note=(
                "Dialect xlam: a JSON array answer of objects with a name but no arguments "
                "is content, shown verbatim (vLLM's xlam skips such items and says no call)."
            ),
            model=XLAM,
            ask="List two products as JSON.",
            text='[{"name": "Widget", "price": 3}, {"name": "Gadget", "price": 5}]',
            tools=("get_weather",),
            shown='[{"name": "Widget", "price": 3}, {"name": "Gadget", "price": 5}]',
        ),
        RegressionCase(
            file="xlam_numbers_are_text.msgpack",
            bug="xlam-numbers-are-text",
            note=(
                "Dialect xlam: an answer that is a JSON list of numbers is released as text "
                "at its first number, not held as a maybe-call (policy 8)."
            ),
            model=XLAM,
            ask="The first primes as JSON?",
            text="[2, 3, 5, 7]\nThose are the first four.",
            tools=("get_weather",),
            shown="[2, 3, 5, 7]\nThose are the first four.",
        ),
    ),
    engines=Engines(vllm=("xlam",)),
    **AT_START_BRACKET,
    owns=_owns,
    head=Head(viable=re.compile(r"\[\s*\{?"), done=re.compile(r"\[\s*\{")),
    model_seeds=("*xlam*",),
    markup=MARKUP,
)
