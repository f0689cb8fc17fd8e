"""ByteDance Seed-OSS: ``<function=N><parameter=K>V</parameter></function>`` in its own tags.

vLLM calls its parser ``seed_oss`` (``vllm/tool_parsers/seed_oss_tool_parser.py``,
adapted from Qwen3-Coder's; SGLang's ``seed_oss_detector.py`` is the same code).
Qwen3-Coder's body in other tags: one ``<function=…>`` per call, several per
block for parallel calls, values written inline (the system prompt's example
puts a multi-line one on its own lines). Values are text, typed by the tool's
schema. Its reasoning, ``<seed:think>``, is the ``seed_think`` dialect.
"""

from __future__ import annotations

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
from tcr.dialects._xml import XmlCalls

__all__ = ["CLOSE", "DIALECT", "OPEN"]

OPEN = "<seed:tool_call>"
CLOSE = "</seed:tool_call>"
FUNCTION = "<function="
PARAMETER = "<parameter="

_SHAPE = XmlCalls(
    call=FUNCTION,
    call_close="</function>",
    parameter=PARAMETER,
    quote="",
    variant="function",
    call_what="a <function=…> block",
    parameter_what="a <parameter=…> pair",
    name_where="<function=…>",
    no_call="a <seed:tool_call> block without a <function=…>",
    bare_parameters=True,
)


def _render(draws: Draws, tools: Tools) -> Rendered:
    return _SHAPE.render(DIALECT, draws, tools)


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
    parse=_SHAPE.parse,
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
    engines=Engines(vllm=("seed_oss",), llamacpp=("SEED_OSS",)),
    special_tokens=frozenset({OPEN, CLOSE}),
    schema_typed=True,
    model_seeds=("seed-oss*",),
    tokens=_SHAPE.tokens,
    markup=(CLOSE, OPEN),
)
