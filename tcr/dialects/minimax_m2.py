"""MiniMax M2: ``<invoke name="N"><parameter name="K">V</parameter></invoke>`` in its own tags.

vLLM calls its parser ``minimax_m2``, SGLang ``minimax-m2``
(``vllm/tool_parsers/minimax_m2_tool_parser.py``,
``python/sglang/srt/function_call/minimax_m2.py``). One
``<minimax:tool_call>`` block holds one ``<invoke>`` per call, so parallel calls
share a block. Values are text, written inline and read as written: vLLM 0.34's
vllm/parser/minimax_m2.py ``_minimax_m2_parse_args`` ("surrounding whitespace is
data") and SGLang's streaming ``_parse_and_stream_parameters`` keep them whole
(SGLang's non-streaming ``_parse_block`` strips newlines at both ends, older vLLM all
white space: a policy). The tool's schema gives their types. Both engines require
the two block tags to be single tokens; llama.cpp's format was
``COMMON_CHAT_FORMAT_MINIMAX_M2``.
"""

from __future__ import annotations

from tcr.dialects._calls import ParsedCall, Trim
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
from tcr.dialects._xml import XmlCalls, without_cut_closer

__all__ = ["DIALECT"]

OPEN = "<minimax:tool_call>"
CLOSE = "</minimax:tool_call>"
INVOKE = "<invoke name="
PARAMETER = "<parameter name="

_SHAPE = XmlCalls(
    call=INVOKE,
    call_close="</invoke>",
    parameter=PARAMETER,
    quote='"',
    variant="invoke",
    call_what='an <invoke name="…"> element',
    parameter_what='a <parameter name="…"> element',
    name_where="<invoke name=…>",
    no_call="a <minimax:tool_call> block without an <invoke>",
    trim=Trim.NOTHING,
    # vLLM 0.34 vllm/parser/minimax_m2.py: _PARAM_RE ends a value at the first
    # </parameter>, the INVOKE_END terminal a call at the first </invoke>, and text between
    # them has no content event; SGLang: (.*?)</parameter> found with finditer and
    # _buf.find("</invoke>").
    scanned=True,
)


def _parse(body: str) -> list[ParsedCall]:
    """The calls of ``body``, less a closing tag the end of the message cut: vLLM's parser
    engine completes the call at the end, SGLang's has it at ``</invoke>``."""
    return _SHAPE.parse(without_cut_closer(body, CLOSE))


def _render(draws: Draws, tools: Tools) -> Rendered:
    return _SHAPE.render(DIALECT, draws, tools)


_TAG_IN_VALUE = (
    f'\n{INVOKE}"write_file">\n{PARAMETER}"path">NOTES.md</parameter>\n'
    f'{PARAMETER}"content">Each value ends with </parameter> and each call '
    "with </invoke>.\n</parameter>\n</invoke>\n"
)

_expect = city_call(
    rf'(.*?){OPEN}\n<invoke name="get_weather">\n<parameter name="city">(\w+)</parameter>\n'
    rf"</invoke>\n{CLOSE}(.*)"
)


DIALECT = Dialect(
    id="minimax_m2",
    summary='MiniMax M2 <invoke name="N"><parameter name="K">V</parameter></invoke> '
    "in <minimax:tool_call> tags",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "Checking both. ",
        f'{OPEN}\n{INVOKE}"get_weather">\n{PARAMETER}"city">Paris</parameter>\n</invoke>\n'
        f'{INVOKE}"get_time">\n{PARAMETER}"tz">Europe/Paris</parameter>\n</invoke>\n{CLOSE}',
        " ok",
        (
            Call("get_weather", {"city": "Paris"}),
            Call("get_time", {"tz": "Europe/Paris"}),
        ),
    ),
    grammars=(
        Grammar(
            "minimax_m2_invoke",
            'MiniMax M2 <invoke name="…"><parameter name="…"> call.',
            "What is the weather in Paris?",
            f'sentence "\\n{OPEN}\\n<invoke name=\\"get_weather\\">\\n'
            f'<parameter name=\\"city\\">" word "</parameter>\\n</invoke>\\n{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_minimax_m2_parallel.msgpack",
            bug="format-minimax-m2-parallel",
            note=(
                "Dialect minimax_m2: two <invoke> elements in one block are two calls, values "
                "are text, and the text after the block is kept (vLLM's non-streaming parser "
                "keeps only the text before it)."
            ),
            model="minimax_m2",
            ask="Weather in Paris for three days, and the time there?",
            text=f'I\'ll look both up.\n{OPEN}\n{INVOKE}"get_weather">\n'
            f'{PARAMETER}"city">Paris</parameter>\n{PARAMETER}"days">3</parameter>\n'
            f'</invoke>\n{INVOKE}"get_time">\n{PARAMETER}"tz">Europe/Paris</parameter>\n'
            f"</invoke>\n{CLOSE}\nBack in a moment.",
            tools=("get_weather", "get_time"),
            shown="I'll look both up.\n\nBack in a moment.",
            calls=(
                Call("get_weather", {"city": "Paris", "days": "3"}),
                Call("get_time", {"tz": "Europe/Paris"}),
            ),
        ),
        RegressionCase(
            file="format_minimax_m2_indented_value.msgpack",
            bug="format-minimax-m2-indented-value",
            note=(
                "Dialect minimax_m2: a value keeps its own leading spaces (an indented line of "
                "code), as vLLM's and SGLang's streaming parsers read it; older vLLM stripped "
                "all white space around a value."
            ),
            model="minimax_m2",
            ask="Save the fixed last line of total(), indented as in the function, to fix.py.",
            text=f'{OPEN}\n{INVOKE}"write_file">\n{PARAMETER}"path">fix.py</parameter>\n'
            f'{PARAMETER}"content">    return round(s, 2)</parameter>\n</invoke>\n{CLOSE}',
            tools=("write_file",),
            calls=(Call("write_file", {"path": "fix.py", "content": "    return round(s, 2)"}),),
        ),
        RegressionCase(
            file="format_minimax_m2_tag_in_value.msgpack",
            bug="format-minimax-m2-tag-in-value",
            note=(
                "Dialect minimax_m2: a value cannot hold </parameter>: vLLM's and SGLang's "
                "parsers end it at the first one, and the call at the first </invoke>, and "
                "skip the stray text after, so the value is cut there."
            ),
            model="minimax_m2",
            ask="Add a note to NOTES.md on how MiniMax writes a call.",
            text=f"{OPEN}{_TAG_IN_VALUE}{CLOSE}",
            tools=("write_file",),
            calls=(Call("write_file", {"path": "NOTES.md", "content": "Each value ends with "}),),
        ),
    ),
    engines=Engines(vllm=("minimax_m2",), sglang=("minimax-m2",), llamacpp=("MINIMAX_M2",)),
    special_tokens=frozenset({OPEN, CLOSE}),
    reads_cut_closer=True,
    schema_typed=True,
    model_seeds=("minimax-m2*",),
    tokens=_SHAPE.tokens,
    markup=(CLOSE, OPEN),
)
