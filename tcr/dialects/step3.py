"""StepFun Step-3: ``<steptml:invoke>`` elements in a DeepSeek-style tool-calls section.

vLLM and SGLang call the parser ``step3`` (vLLM's
vllm/entrypoints/openai/tool_parsers/step3_tool_parser.py, now
vllm/frontend/processing/tool_parsers/step3_tool_parser.py; SGLang's
python/sglang/srt/function_call/step3_detector.py). A turn's calls share one
section, each call written as::

    <｜tool_calls_begin｜>
    <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="N">
    <steptml:parameter name="K">V</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

The markers are DeepSeek's with ASCII underscores where DeepSeek has U+2581
(``tcr.dialects._deepseek``: ``<｜tool▁calls▁begin｜>``), the bars still
full-width U+FF5C: the sources spell them so, and a detector that borrows
DeepSeek's strings never opens a Step-3 section. The call's type word
``function`` and the separator stand in front of a MiniMax-like ``<steptml:invoke>``
element, so one ``XmlCalls`` row (``tcr.dialects._xml``) spells it: the call
element runs from ``<｜tool_call_begin｜>`` to ``<｜tool_call_end｜>``. Values are
text typed by the tool's schema (both engines' ``_cast_arguments`` /
``get_argument_type``). vLLM's special tokens are the four section and call
markers (``SPECIAL_TOKENS``). llama.cpp's common/chat*.cpp has no Step-3
parser of its own, but its template-derived one reads the markup from a template
that renders it (scripts/templates/step3.jinja: the native recordings). Step-3's
reasoning is ``<think>`` (dialect ``think``).
"""

from __future__ import annotations

from tcr.dialects._calls import Trim
from tcr.dialects._grammars import CITY, city_block
from tcr.dialects._record import (
    Call,
    Engines,
    Example,
    Model,
    RegressionCase,
)
from tcr.dialects._xml import XmlCalls

__all__ = ["DIALECT"]

OPEN = "<｜tool_calls_begin｜>"
CLOSE = "<｜tool_calls_end｜>"
BEGIN = "<｜tool_call_begin｜>"
SEP = "<｜tool_sep｜>"
END = "<｜tool_call_end｜>"
INVOKE = f'{BEGIN}function{SEP}<steptml:invoke name="'
INVOKE_CLOSE = f"</steptml:invoke>{END}"
PARAMETER = '<steptml:parameter name="'
PARAMETER_CLOSE = "</steptml:parameter>"

_SHAPE = XmlCalls(
    call=INVOKE.removesuffix('"'),
    call_close=INVOKE_CLOSE,
    parameter=PARAMETER.removesuffix('"'),
    parameter_close=PARAMETER_CLOSE,
    quote='"',
    variant="invoke",
    call_what=f'a {BEGIN}function{SEP}<steptml:invoke name="…"> call',
    parameter_what='a <steptml:parameter name="…"> element',
    name_where="<steptml:invoke name=…>",
    no_call=f"a {OPEN} section without a {BEGIN} call",
    bare_parameters=True,
    # vLLM's Step3ToolParser._parse_steptml_invoke and SGLang's Step3Detector: value.strip()
    trim=Trim.WHITESPACE,
)

_MODEL = Model(
    "vllm", "stepfun-ai/step3", special_tokens=(OPEN, CLOSE, BEGIN, END), ms_per_chunk=28.0
)


def _section(*calls: Call) -> str:
    return OPEN + _SHAPE.body(*calls) + CLOSE


_WEATHER = Call("get_weather", {"city": "Paris"})
_TIME = Call("get_time", {"tz": "Europe/Paris"})
_FOR_DAYS = Call("get_weather", {"city": "Paris", "days": "3"})
_GUARD = Call("write_file", {"path": "check.py", "content": "if n < 0: raise ValueError"})
_INDENTED = Call("write_file", {"path": "fix.py", "content": "    return round(s, 2)"})

DIALECT = _SHAPE.dialect(
    OPEN,
    CLOSE,
    id="step3",
    summary='Step-3 function<｜tool_sep｜><steptml:invoke name="N"><steptml:parameter name="K">V'
    "… calls in a <｜tool_calls_begin｜> section",
    example=Example(
        "Checking both. ",
        _section(_WEATHER, _TIME),
        " ok",
        (_WEATHER, _TIME),
    ),
    grammars=(
        city_block(
            "step3",
            'Step-3 tool-calls section with one <steptml:invoke name="…"> call after a sentence.',
            "What is the weather in Paris?",
            _section(Call("get_weather", {"city": CITY})),
            before="\n",
        ),
    ),
    cases=(
        RegressionCase(
            file="format_step3_parallel.msgpack",
            bug="format-step3-parallel",
            note=(
                "Dialect step3: two calls in one tool-calls section, values typed by the schema "
                "(days is an integer), and the text after the section kept (vLLM's non-streaming "
                "step3 parser strips the text around it)."
            ),
            model=_MODEL,
            ask="Weather in Paris for three days, and the time there?",
            text="I'll look both up.\n" + _section(_FOR_DAYS, _TIME) + "\nBack in a moment.",
            tools=("get_weather", "get_time"),
            shown="I'll look both up.\n\nBack in a moment.",
            calls=(_FOR_DAYS, _TIME),
        ),
        RegressionCase(
            file="step3_angle_bracket_in_value.msgpack",
            bug="step3-angle-bracket-in-value",
            note=(
                "Dialect step3: a value holding '<' (a comparison in code); vLLM's step3 "
                "parameter regex reads values as [^<]*, so the parameter vanishes from the call."
            ),
            model=_MODEL,
            ask="Save the guard clause to check.py.",
            text=_section(_GUARD),
            tools=("write_file",),
            calls=(_GUARD,),
        ),
        RegressionCase(
            file="step3_two_sections.msgpack",
            bug="step3-two-sections",
            note=(
                "Dialect step3: a second tool-calls section later in the message (policy 9); "
                "vLLM's streaming step3 parser treats everything after the first section's end as "
                "content, so the second call leaks as markup."
            ),
            model=_MODEL,
            ask="Weather in Paris, then the time there.",
            text=_section(_WEATHER) + "\nNow the time.\n" + _section(_TIME),
            tools=("get_weather", "get_time"),
            shown="\nNow the time.\n",
            calls=(_WEATHER, _TIME),
        ),
        RegressionCase(
            file="step3_indented_value.msgpack",
            bug="step3-indented-value",
            note=(
                "Dialect step3: both engines strip every value (vLLM's and SGLang's "
                "value.strip()), so an indented line of code loses its indentation: that is "
                "how the dialect reads, not a parser's bug."
            ),
            model=_MODEL,
            ask="Save the fixed last line of total(), indented as in the function, to fix.py.",
            text=_section(_INDENTED),
            tools=("write_file",),
            calls=(Call("write_file", {"path": "fix.py", "content": "return round(s, 2)"}),),
        ),
    ),
    engines=Engines(vllm=("step3",), sglang=("step3",)),
    special_tokens=frozenset({OPEN, CLOSE, BEGIN, END}),
    schema_typed=True,
    model_seeds=("step3*", "step-3*"),
    tokens=(
        BEGIN,
        SEP,
        END,
        "<steptml:invoke name=",
        "</steptml:invoke>",
        PARAMETER,
        PARAMETER_CLOSE,
    ),
    markup=(CLOSE, OPEN, END),
)
