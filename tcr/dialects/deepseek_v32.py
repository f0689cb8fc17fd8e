"""DeepSeek V3.2: DSML ``<｜DSML｜invoke>`` elements whose parameters say their own type.

vLLM calls its parser ``deepseek_v32`` (vllm/tool_parsers/deepseekv32_tool_parser.py),
SGLang ``deepseekv32`` (python/sglang/srt/function_call/deepseekv32_detector.py);
llama.cpp parses it natively when a template defines ``dsml_token``
(common/chat.cpp, "DeepSeek V3.2/V4"; common_chat_params_init_deepseek_v3_2). A
turn's calls share one block::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="N">
    <｜DSML｜parameter name="K" string="true">text</｜DSML｜parameter>
    <｜DSML｜parameter name="D" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

``string="true"`` marks a value written verbatim as text; ``string="false"`` one
written as JSON (vLLM's ``parameter_complete_regex`` takes exactly ``true|false``;
llama.cpp writes ``true`` where the schema allows a string and JSON otherwise), so
the values carry their types and no schema is needed. A string value is kept as
written: vLLM keeps it raw, and the template writes it inline. ``｜DSML｜`` (the bars
full-width U+FF5C) is one token but the tags are not special tokens (vLLM's
``adjust_request``; llama.cpp's ``preserved_tokens``), so they arrive in pieces.
SGLang also reads the tags without ``｜DSML｜`` and a JSON object instead of
parameters; those are its fallbacks, not what the model writes, and stay text
here. V3.2's thinking mode writes ``<think>`` reasoning first (dialect ``think``).
"""

from __future__ import annotations

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

DSML = "｜DSML｜"
OPEN = f"<{DSML}function_calls>"
CLOSE = f"</{DSML}function_calls>"
INVOKE = f'<{DSML}invoke name="'
INVOKE_CLOSE = f"</{DSML}invoke>"
PARAMETER = f'<{DSML}parameter name="'
PARAMETER_CLOSE = f"</{DSML}parameter>"

_SHAPE = XmlCalls(
    call=INVOKE.removesuffix('"'),
    call_close=INVOKE_CLOSE,
    parameter=PARAMETER.removesuffix('"'),
    parameter_close=PARAMETER_CLOSE,
    quote='"',
    variant="invoke",
    call_what=f'an <{DSML}invoke name="…"> element',
    parameter_what=f'a <{DSML}parameter name="…" string="true|false"> element',
    name_where=f"<{DSML}invoke name=…>",
    no_call=f"a {OPEN} block without an <{DSML}invoke>",
    bare_parameters=True,
    wrapped=False,
    typed_by="string",
)

_MODEL = Model(
    "vllm",
    "deepseek-ai/DeepSeek-V3.2",
    special_tokens=(DSML, "<think>", "</think>"),
    ms_per_chunk=34.0,
)


def _block(*calls: Call) -> str:
    """The block as the V3.2 template writes it: each element on its own line."""
    return OPEN + _SHAPE.body(*calls) + CLOSE


_PARIS = Call("get_weather", {"city": "Paris"})
_BERLIN = Call("get_time", {"tz": "Europe/Berlin"})
_FOR_DAYS = Call("get_weather", {"city": "Paris", "days": 3})
_NOTE = Call(
    "write_file", {"path": "NOTES.md", "content": f"Each value ends with {PARAMETER_CLOSE}."}
)
_INDENTED = Call("write_file", {"path": "fix.py", "content": "    return round(s, 2)"})

DIALECT = _SHAPE.dialect(
    OPEN,
    CLOSE,
    id="deepseek_v32",
    summary=f'DeepSeek V3.2 DSML <{DSML}invoke name="N"><{DSML}parameter name="K" '
    'string="true|false">V… in a <｜DSML｜function_calls> block',
    example=Example("I'll check both.\n\n", _block(_PARIS, _BERLIN), "", (_PARIS, _BERLIN)),
    grammars=(
        city_block(
            "deepseek_v32",
            "DeepSeek V3.2 DSML block with one string parameter after a sentence.",
            "What is the weather in Paris?",
            _block(Call("get_weather", {"city": CITY})),
            before="\n\n",
        ),
    ),
    cases=(
        RegressionCase(
            file="format_deepseek_v32.msgpack",
            bug="format-deepseek-v32",
            note=(
                'Dialect deepseek_v32: two invokes in one DSML block, a string="false" value '
                "read as JSON (days is the number 3) and the text after the block kept (vLLM's "
                "non-streaming deepseek_v32 parser keeps only the text before it)."
            ),
            model=_MODEL,
            ask="Weather in Paris for three days, and the time in Berlin?",
            text="I'll check both.\n\n" + _block(_FOR_DAYS, _BERLIN) + "\n\nBack shortly.",
            tools=("get_weather", "get_time"),
            shown="I'll check both.\n\n\n\nBack shortly.",
            calls=(_FOR_DAYS, _BERLIN),
        ),
        RegressionCase(
            file="deepseek_v32_invoke_in_text.msgpack",
            bug="deepseek-v32-invoke-in-text",
            note=(
                "Dialect deepseek_v32: an answer that shows an <invoke name=…> element in a code "
                "sample, no DSML block; SGLang's streaming DeepSeekV32Detector starts a call on a "
                "bare <invoke and the sample is swallowed instead of shown."
            ),
            model=_MODEL,
            ask="How does an XML tool call look?",
            text='Like this:\n<invoke name="get_weather">\n<parameter name="city">Paris'
            "</parameter>\n</invoke>\nThat is all.",
            tools=("get_weather",),
            shown='Like this:\n<invoke name="get_weather">\n<parameter name="city">Paris'
            "</parameter>\n</invoke>\nThat is all.",
        ),
        RegressionCase(
            file="deepseek_v32_tag_in_value.msgpack",
            bug="deepseek-v32-tag-in-value",
            note=(
                f"Dialect deepseek_v32: a string value that mentions {PARAMETER_CLOSE} (notes "
                "on the format) is read whole; vLLM's and SGLang's non-greedy (.*?) parameter "
                "regex ends the value there."
            ),
            model=_MODEL,
            ask="Add a note to NOTES.md on how DSML ends a parameter.",
            text=_block(_NOTE),
            tools=("write_file",),
            calls=(_NOTE,),
        ),
        RegressionCase(
            file="deepseek_v32_after_thinking.msgpack",
            bug="deepseek-v32-after-thinking",
            note=(
                "Dialect deepseek_v32: thinking mode, the block after </think>; the reasoning "
                f"names {OPEN}, which opens no call there (policy 10), and the indented string "
                "value keeps its spaces (SGLang strips every value)."
            ),
            model=_MODEL,
            ask="Save the fixed last line of total(), indented as in the function, to fix.py.",
            text=f"<think>I will write {OPEN} with the line.</think>" + _block(_INDENTED),
            tools=("write_file",),
            reasoning=f"I will write {OPEN} with the line.",
            calls=(_INDENTED,),
        ),
    ),
    engines=Engines(vllm=("deepseek_v32",), sglang=("deepseekv32",)),
    model_seeds=("deepseek-v3.2*",),
    tokens=(DSML, INVOKE, INVOKE_CLOSE, PARAMETER, PARAMETER_CLOSE, ' string="'),
    markup=(CLOSE, OPEN, INVOKE_CLOSE),
)
