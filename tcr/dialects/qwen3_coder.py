"""Qwen3-Coder: ``<function=N><parameter=K>V</parameter></function>`` between ``<tool_call>`` tags.

vLLM calls its parser ``qwen3_coder`` (also ``qwen3_xml``), SGLang ``qwen3_coder``,
llama.cpp's format was ``COMMON_CHAT_FORMAT_QWEN3_CODER_XML``. Values are text (JSON
only when they plainly are an object or array), one newline trimmed at each end (the
template writes them on their own lines: vLLM's ``_trim_wrapping_newlines``); the
tool's schema gives their types. A message that ends inside ``</tool_call>`` still
holds its calls: vLLM's ``tool_call_regex`` ``<tool_call>(.*?)</tool_call>|<tool_call>
(.*?)$`` reads an unclosed block, SGLang's ``Qwen3CoderDetector`` has the call at
``</function>``.
"""

from __future__ import annotations

from tcr.dialects._calls import ParsedCall
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
from tcr.dialects.hermes import CLOSE, OPEN

__all__ = ["DIALECT"]

FUNCTION = "<function="

# Values are always written on their own lines, as the chat template does.
_SHAPE = XmlCalls(
    call=FUNCTION,
    call_close="</function>",
    parameter="<parameter=",
    quote="",
    variant="xml",
    call_what="a <function=…> block",
    parameter_what="a <parameter=…> pair",
    name_where="<function=…>",
    wrapped=True,
)


def _parse(body: str) -> list[ParsedCall]:
    """The calls of ``body``, less a closing tag the end of the message cut (``</tool_``)."""
    return _SHAPE.parse(without_cut_closer(body, CLOSE))


def _owns(body: str) -> bool:
    return body.lstrip().startswith(FUNCTION)


def _render(draws: Draws, tools: Tools) -> Rendered:
    return _SHAPE.render(DIALECT, draws, tools)


_expect = city_call(
    rf"(.*?){OPEN}\n<function=get_weather>\n<parameter=city>\n(\w+)\n"
    rf"</parameter>\n</function>\n{CLOSE}(.*)"
)


DIALECT = Dialect(
    id="qwen3_coder",
    summary="Qwen3-Coder <function=N><parameter=K>V</parameter></function> in <tool_call> tags",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "Running it: ",
        f"{OPEN}\n{FUNCTION}run_sql>\n<parameter=query>\nSELECT * FROM t WHERE a = 'x'\n"
        f"</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n{CLOSE}",
        " done",
        (Call("run_sql", {"query": "SELECT * FROM t WHERE a = 'x'", "limit": "10"}),),
    ),
    grammars=(
        Grammar(
            "tool_call_tag_qwen3_coder",
            "Qwen3-Coder <function=…><parameter=…> call.",
            "What is the weather in Paris?",
            f'sentence "\\n{OPEN}\\n<function=get_weather>\\n<parameter=city>\\n" word '
            f'"\\n</parameter>\\n</function>\\n{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_tool_call_tag_qwen3_coder.msgpack",
            bug="format-tool-call-tag-qwen3-coder",
            note=(
                "Dialect qwen3_coder: <function=N><parameter=K> values on their own lines, read "
                "as text, not JSON."
            ),
            model="qwen3_coder_mlx",
            ask="Show the ten biggest open orders.",
            text=f"Running it:\n{OPEN}\n{FUNCTION}run_sql>\n<parameter=query>\n"
            "SELECT name, total FROM orders WHERE status = 'open' ORDER BY total DESC\n"
            f"</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n{CLOSE}",
            tools=("run_sql",),
            shown="Running it:\n",
            calls=(
                Call(
                    "run_sql",
                    {
                        "query": "SELECT name, total FROM orders WHERE status = 'open' "
                        "ORDER BY total DESC",
                        "limit": "10",
                    },
                ),
            ),
        ),
    ),
    engines=Engines(
        vllm=("qwen3_coder", "qwen3_xml", "step3p5"),
        sglang=("qwen3_coder", "step3p5", "nanbeige", "mimo"),  # MiMoDetector(Qwen3CoderDetector)
        llamacpp=("QWEN3_CODER_XML",),
    ),
    special_tokens=frozenset({OPEN, CLOSE}),
    owns=_owns,
    reads_cut_closer=True,
    schema_typed=True,
    tokens=_SHAPE.tokens,
)
