"""ByteDance Seed-OSS: ``<function=N><parameter=K>V</parameter></function>`` in its own tags.

vLLM calls its parser ``seed_oss`` (``vllm/tool_parsers/seed_oss_tool_parser.py``,
adapted from Qwen3-Coder's; SGLang's ``seed_oss_detector.py`` is the same code).
Qwen3-Coder's body in other tags: one ``<function=…>`` per call, several per
block for parallel calls, values written inline (the system prompt's example
puts a multi-line one on its own lines). Values are text, typed by the tool's
schema. Its reasoning, ``<seed:think>``, is the ``seed_think`` dialect.
"""

from __future__ import annotations

import re

from tcr.dialects._calls import BodyError, ParsedCall, check_name, text_call, walk
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

__all__ = ["CLOSE", "DIALECT", "OPEN"]

OPEN = "<seed:tool_call>"
CLOSE = "</seed:tool_call>"
FUNCTION = "<function="
PARAMETER = "<parameter="

# The lookaheads make a closing tag count only where the structure may go on, so a
# value that mentions "</parameter>" in passing does not end early.
_FUNCTION = re.compile(r"<function=([^>\n]*)>(.*?)</function>\s*(?=<function=|\Z)", re.S)
_PARAMETER = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>\s*(?=<parameter=|\Z)", re.S)
# A near miss: the parameters written without the <function=…> that names the tool.
_FLAVORS = (*XML_FLAVORS, "bare_parameters")


def _parse(body: str) -> list[ParsedCall]:
    """``<function=N><parameter=K>V</parameter>…</function>``, one or more."""
    functions = walk(_FUNCTION, body.strip(), "a <function=…> block")
    if not functions:
        raise BodyError("malformed", "a <seed:tool_call> block without a <function=…>")
    calls: list[ParsedCall] = []
    for name, inner in functions:
        params = walk(_PARAMETER, inner.strip(), "a <parameter=…> pair")
        calls.append(text_call(check_name(name.strip(), "<function=…>"), params))
    return calls


def _parameters(params: list[tuple[str, str, object]]) -> str:
    return "".join(f"{PARAMETER}{key}>{value}</parameter>\n" for key, value, _ in params)


def _render(draws: Draws, tools: Tools) -> Rendered:
    calls = Calls(draws, tools, most=MAX_CALLS, flavors=_FLAVORS)
    body = BodyText()
    body.add("\n")
    found: list[Call] = []
    for name, flavor in zip(calls.names, calls.flavors(), strict=True):
        params = xml_arguments(draws)
        if flavor == "bare_parameters":
            body.add(_parameters(params) or f"{PARAMETER}x>1</parameter>\n", fragile=True)
            continue
        written = "" if flavor == "missing_name" else name
        body.add(f"{FUNCTION}{written}>\n{_parameters(params)}</function>", fragile=True)
        body.add("\n")
        if flavor == "call":
            found.append(Call(name, {key: meant for key, _, meant in params}))
    return rendered(DIALECT, "function", body, calls.accepted(), tuple(found))


_expect = city_call(
    rf"(.*?){OPEN}\n<function=get_weather>\n<parameter=city>(\w+)</parameter>\n"
    rf"</function>\n{CLOSE}(.*)"
)


DIALECT = Dialect(
    id="seed_oss",
    summary="Seed-OSS <function=N><parameter=K>V</parameter></function> in <seed:tool_call> tags",
    opens=(OPEN,),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=_parse,
    render=_render,
    example=Example(
        "Checking. ",
        f"{OPEN}\n{FUNCTION}get_weather>\n{PARAMETER}city>Paris</parameter>\n"
        f"{PARAMETER}days>3</parameter>\n</function>\n{CLOSE}",
        " ok",
        (Call("get_weather", {"city": "Paris", "days": "3"}),),
    ),
    grammars=(
        Grammar(
            "seed_oss_function",
            "Seed-OSS <function=…><parameter=…> call in <seed:tool_call> tags.",
            "What is the weather in Paris?",
            f'sentence "\\n{OPEN}\\n<function=get_weather>\\n<parameter=city>" word '
            f'"</parameter>\\n</function>\\n{CLOSE}"',
            _expect,
        ),
    ),
    cases=(
        RegressionCase(
            file="format_seed_oss_parallel.msgpack",
            bug="format-seed-oss-parallel",
            note=(
                "Dialect seed_oss: two <function=…> blocks in one <seed:tool_call> are two "
                "calls (the system prompt says several calls may share one), values are text."
            ),
            model="seed_oss",
            ask="Weather in Barcelona and in Madrid, in Celsius?",
            text=f"Checking both cities.\n{OPEN}\n{FUNCTION}get_weather>\n"
            f"{PARAMETER}city>Barcelona</parameter>\n{PARAMETER}unit>celsius"
            f"</parameter>\n</function>\n{FUNCTION}get_weather>\n"
            f"{PARAMETER}city>Madrid</parameter>\n{PARAMETER}unit>celsius"
            f"</parameter>\n</function>\n{CLOSE}",
            tools=("get_weather",),
            shown="Checking both cities.\n",
            calls=(
                Call("get_weather", {"city": "Barcelona", "unit": "celsius"}),
                Call("get_weather", {"city": "Madrid", "unit": "celsius"}),
            ),
        ),
        RegressionCase(
            file="format_seed_oss_multiline_value.msgpack",
            bug="format-seed-oss-multiline-value",
            note=(
                "Dialect seed_oss: a multi-line value on its own lines loses exactly the one "
                "newline at each end, and a </parameter> inside it does not end it."
            ),
            model="seed_oss",
            ask="Write a README for the parser demo.",
            text=f"{OPEN}\n{FUNCTION}write_file>\n{PARAMETER}path>README.md</parameter>\n"
            f"{PARAMETER}content>\n# Demo\n\nCalls look like <parameter=k>v</parameter>.\n\n"
            f"</parameter>\n</function>\n{CLOSE}",
            tools=("write_file",),
            calls=(
                Call(
                    "write_file",
                    {
                        "path": "README.md",
                        "content": "# Demo\n\nCalls look like <parameter=k>v</parameter>.\n",
                    },
                ),
            ),
        ),
    ),
    parser_names=("seed_oss",),
    special_tokens=frozenset({OPEN, CLOSE}),
    schema_typed=True,
    model_seeds=("seed-oss*",),
    tokens=(FUNCTION, "</function>", PARAMETER, "</parameter>"),
    markup=(CLOSE, OPEN),
)
