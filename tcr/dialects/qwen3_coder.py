"""Qwen3-Coder: ``<function=N><parameter=K>V</parameter></function>`` between ``<tool_call>`` tags.

vLLM and SGLang call its parser ``qwen3_coder``. Values are text (JSON only
when they plainly are an object or array); the tool's schema gives their types.
"""

from __future__ import annotations

import re

from tcr.dialects._calls import ParsedCall, check_name, text_call, walk
from tcr.dialects._grammars import city_call
from tcr.dialects._record import (
    Call,
    Closing,
    Dialect,
    Draws,
    Example,
    Grammar,
    RegressionCase,
    Rendered,
    Tools,
)
from tcr.dialects._writing import (
    MAX_CALLS,
    XML_FLAVORS,
    BodyText,
    Calls,
    rendered,
    xml_arguments,
)
from tcr.dialects.hermes import CLOSE, OPEN

__all__ = ["DIALECT"]

FUNCTION = "<function="

# The lookaheads make a closing tag count only where the structure may go on, so a
# value that mentions "</parameter>" in passing does not end early.
_FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)</function>\s*(?=<function=|\Z)", re.S)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>\s*(?=<parameter=|\Z)", re.S)


def _parse(body: str) -> list[ParsedCall]:
    """``<function=N><parameter=K>\\nV\\n</parameter>…</function>``, one or more."""
    calls: list[ParsedCall] = []
    for name, inner in walk(_FUNCTION, body.strip(), "a <function=…> block"):
        params = walk(_PARAMETER, inner.strip(), "a <parameter=…> pair")
        calls.append(text_call(check_name(name.strip(), "<function=…>"), params))
    return calls


def _owns(body: str) -> bool:
    return body.lstrip().startswith(FUNCTION)


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=MAX_CALLS, flavors=XML_FLAVORS)
    body = BodyText()
    body.add("\n")
    found: list[Call] = []
    for name, flavor in zip(calls.names, calls.flavors(), strict=True):
        written = "" if flavor == "missing_name" else name
        params = xml_arguments(draws, wrapped=True)
        function = f"{FUNCTION}{written}>\n" + "".join(
            f"<parameter={key}>{value}</parameter>\n" for key, value, _ in params
        )
        body.add(function + "</function>", fragile=True)
        body.add("\n")
        if flavor == "call":
            found.append(Call(name, {key: meant for key, _, meant in params}))
    return rendered(DIALECT, "xml", body, calls.accepted(), tuple(found))


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
    parser_names=("qwen3_coder",),
    special_tokens=frozenset({OPEN, CLOSE}),
    owns=_owns,
    schema_typed=True,
    tokens=(FUNCTION, "</function>", "<parameter=", "</parameter>"),
)
