"""Pythonic tool calls: the message starts with a Python list of calls, ``[f(x=1), g()]``.

vLLM and SGLang call the parser ``pythonic`` (``vllm/tool_parsers/pythonic_tool_parser.py``;
``python/sglang/srt/function_call/pythonic_detector.py``); Llama 3.2 and ToolACE write
it. vLLM's streaming path opens only when the output starts with ``[``
(``current_text.startswith("[")``), and SGLang's ``detect_and_parse`` only when the
stripped output starts with ``[`` and ends with ``]``, so the list opens at message start
only (policy 3); white space before it is allowed, as for ``bare_json``. SGLang's
streaming path instead cuts from the first ``[`` anywhere to the first ``]`` after it:
a ``]`` inside a string ends the list there (``pythonic_bracket_in_string`` pins it).
``[`` also starts prose (a citation ``[1]``, a Markdown link) and JSON answers: the
block is released as text as soon as its head can no longer be ``[name(`` (``Head``,
policy 8), and a list that does not parse is shown verbatim. Text after the list is
content (policy 9); vLLM's non-streaming path would turn the whole output into content.

The body is read with ``ast`` (``tcr.dialects._pythonic``). ``[`` is shared with
``xlam`` (a JSON array of call objects): the first item decides whose a body is.
"""

from __future__ import annotations

from tcr.dialects._grammars import around, call_map, expectation
from tcr.dialects._pythonic import (
    AT_START_BRACKET,
    HEAD,
    MARKUP,
    call_list,
    call_text,
    owns_call_list,
    write_call_list,
)
from tcr.dialects._record import (
    Call,
    Dialect,
    Draws,
    Engines,
    Example,
    Grammar,
    RegressionCase,
    Rendered,
    Tools,
    Variant,
)

__all__ = ["DIALECT"]

LLAMA32 = "llama32_3b"
_TWO = call_text([("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})])
_TWO_CALLS = (Call("get_weather", {"city": "Paris"}), Call("get_time", {"tz": "CET"}))


def _render(draws: Draws, tools: Tools) -> Rendered:
    body, found, accepted = write_call_list(draws, tools)
    return Rendered(DIALECT.id, "list", "", body.text, "", "", found, accepted, tuple(body.fragile))


def _expect(content: str) -> dict[str, object]:
    m = around(r'\[get_weather\(city="(\w+)"\), get_time\(tz=\'CET\'\)\](.*)', content)
    calls = [call_map("get_weather", {"city": m[1]}), call_map("get_time", {"tz": "CET"})]
    return expectation(m[2], calls)


DIALECT = Dialect(
    id="pythonic",
    summary="a Python list of calls that is the start of the message",
    parse=call_list,
    render=_render,
    example=Example("", _TWO, "\nBoth are on their way.", _TWO_CALLS),
    grammars=(
        Grammar(
            "pythonic",
            "A pythonic call list of two calls at message start, then a sentence.",
            "Get the weather in Paris and the time in Berlin.",
            '"[get_weather(city=" city "), get_time(tz=\'CET\')]" ("\\n" sentence)?',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_pythonic.msgpack",
            bug="format-pythonic",
            note=(
                "Dialect pythonic: Llama 3.2 writes two calls as a Python list, the whole message."
            ),
            model=LLAMA32,
            ask="Weather in Paris and the time in Berlin?",
            text=call_text(
                [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Berlin"})]
            ),
            tools=("get_weather", "get_time"),
            calls=(
                Call("get_weather", {"city": "Paris"}),
                Call("get_time", {"tz": "Europe/Berlin"}),
            ),
        ),
        RegressionCase(
            file="pythonic_bracket_in_string.msgpack",
            bug="pythonic-bracket-in-string",
            note=(
                "Dialect pythonic: a ')]' and an escaped quote inside single-quoted strings do "
                "not end the list (a lexer that knows only JSON's double quotes ends it there)."
            ),
            model=LLAMA32,
            ask="Write the smiley ')] into notes.txt.",
            text="[write_file(path='notes.txt', content='it\\'s \")] here', append=False)]",
            tools=("write_file",),
            calls=(
                Call(
                    "write_file",
                    {"path": "notes.txt", "content": "it's \")] here", "append": False},
                ),
            ),
        ),
        RegressionCase(
            file="pythonic_citation_is_text.msgpack",
            bug="pythonic-citation-is-text",
            note=(
                "Dialect pythonic: an answer that starts with a citation [1] is text at once, "
                "not a call list held until the end (policy 8)."
            ),
            model=LLAMA32,
            ask="Who wrote it?",
            text="[1] Knuth wrote it; see [2] for the rest (and it's long).",
            tools=("get_weather",),
            shown="[1] Knuth wrote it; see [2] for the rest (and it's long).",
        ),
        RegressionCase(
            file="pythonic_variable_argument.msgpack",
            bug="pythonic-variable-argument",
            note=(
                "Dialect pythonic: an argument that is a variable, not a literal, makes the "
                "list no call list; it is shown verbatim, no call."
            ),
            model=LLAMA32,
            ask="Weather where I am?",
            text="[get_weather(city=my_city)]",
            tools=("get_weather",),
            shown="[get_weather(city=my_city)]",
        ),
    ),
    engines=Engines(vllm=("pythonic", "olmo3"), sglang=("pythonic",)),
    variants=(
        Variant(
            "leading_space",
            "the list after white space at the start of the message",
            lambda raw, before: before != "",
            ' [get_weather(city="Paris")]',
            reads=(("SGLang pythonic", "sglang/srt/function_call/pythonic_detector.py"),),
            skips=(
                ("vLLM pythonic", "vllm/tool_parsers/pythonic_tool_parser.py: startswith('[')"),
            ),
        ),
        Variant(
            "multiline",
            "white space right after the list's '[' (a list on several lines)",
            lambda raw, before: raw[1:2].isspace(),
            '[\n  get_weather(city="Paris")\n]',
            reads=(("vLLM pythonic (streaming)", "vllm/tool_parsers/pythonic_tool_parser.py"),),
            skips=(
                (
                    "SGLang pythonic",
                    "sglang/srt/function_call/pythonic_detector.py: TOOL_CALL_REGEX",
                ),
            ),
        ),
    ),
    **AT_START_BRACKET,
    owns=owns_call_list,
    head=HEAD,
    markup=MARKUP,
)
