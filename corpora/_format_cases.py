"""One realistic message per format row of DESIGN §5 (and per body variant of a row)."""

from __future__ import annotations

from ._cases import (
    GEMMA4,
    GEMMA4_TOKENS,
    GLM45_AIR,
    GLM_TOKENS,
    HERMES3,
    LLAMA3_TOKENS,
    LLAMA32_3B,
    LLAMA_CPP_PYTHON,
    MISTRAL_SMALL,
    MISTRAL_TOKENS,
    MISTRAL_V03,
    MLX_QWEN3_CODER,
    PARIS_JSON,
    QWEN3_8B,
    QWEN3_TOKENS,
    QWEN25_CODER,
    QWEN_TOKENS,
    TOOLS_IN_PROMPT,
    WEATHER_PARIS,
    Case,
    Expect,
    as_json,
    call,
    tokens,
)

FORMAT_CASES: tuple[Case, ...] = (
    Case(
        file="format_gemma_special.msgpack",
        bug="format-gemma-special",
        note=(
            'Format row gemma_special: Gemma 4 writes call:NAME{key:<|"|>v<|"|>,…} between its '
            "special tokens, after a sentence of preamble."
        ),
        dialect="gemma_special",
        via=GEMMA4,
        ask="Three-day forecast for Paris, France?",
        chunks=tokens(
            'I\'ll look that up. <|tool_call>call:get_weather{city:<|"|>Paris, FR<|"|>,days:3}'
            "<tool_call|>",
            *GEMMA4_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(
            text="I'll look that up. ", calls=(call("get_weather", city="Paris, FR", days=3),)
        ),
    ),
    Case(
        file="format_tool_call_tag_json.msgpack",
        bug="format-tool-call-tag-json",
        note=(
            "Format row tool_call_tag (JSON): Hermes 3 writes arguments before name, as its "
            "system prompt's schema lists them."
        ),
        dialect="tool_call_tag",
        via=HERMES3,
        ask="Weather in Paris in Celsius?",
        chunks=tokens(
            "Let me check the weather.\n<tool_call>\n"
            + as_json({"arguments": {"city": "Paris", "unit": "celsius"}, "name": "get_weather"})
            + "\n</tool_call>",
            *QWEN_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(
            text="Let me check the weather.\n",
            calls=(call("get_weather", city="Paris", unit="celsius"),),
        ),
    ),
    Case(
        file="format_tool_call_tag_qwen3_coder.msgpack",
        bug="format-tool-call-tag-qwen3-coder",
        note=(
            "Format row tool_call_tag (Qwen3-Coder): <function=N><parameter=K> values on their "
            "own lines, read as text, not JSON."
        ),
        dialect="tool_call_tag",
        via=MLX_QWEN3_CODER,
        ask="Show the ten biggest open orders.",
        chunks=tokens(
            "Running it:\n<tool_call>\n<function=run_sql>\n<parameter=query>\n"
            "SELECT name, total FROM orders WHERE status = 'open' ORDER BY total DESC\n"
            "</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n</tool_call>",
            *QWEN_TOKENS,
        ),
        tools=("run_sql",),
        expect=Expect(
            text="Running it:\n",
            calls=(
                call(
                    "run_sql",
                    query="SELECT name, total FROM orders WHERE status = 'open' "
                    "ORDER BY total DESC",
                    limit="10",
                ),
            ),
        ),
    ),
    Case(
        file="format_tool_call_tag_glm.msgpack",
        bug="format-tool-call-tag-glm",
        note="Format row tool_call_tag (GLM-4.5): NAME then <arg_key>/<arg_value> pairs.",
        dialect="tool_call_tag",
        via=GLM45_AIR,
        ask="Three-day forecast for Paris?",
        chunks=tokens(
            "Checking.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
            "<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
            "</tool_call>",
            *GLM_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(text="Checking.\n", calls=(call("get_weather", city="Paris", days="3"),)),
    ),
    Case(
        file="format_tools_tag.msgpack",
        bug="format-tools-tag",
        note="Format row tools_tag: Gemma's fallback, one JSON call object inside <tools>.",
        dialect="tools_tag",
        via=GEMMA4,
        ask="Weather in Paris?",
        chunks=tokens(f"One lookup: <tools>{PARIS_JSON}</tools>", *GEMMA4_TOKENS),
        tools=("get_weather",),
        expect=Expect(text="One lookup: ", calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="format_fenced_json.msgpack",
        bug="format-fenced-json",
        note=(
            "Format row fenced_json: Qwen2.5 without a tool template writes the call in a "
            "```json fence, with text on both sides."
        ),
        dialect="fenced_json",
        via=QWEN25_CODER,
        ask="Weather in Paris?",
        chunks=tokens(
            f"Sure:\n```json\n{PARIS_JSON}\n```\nLet me know if you need other days.", *QWEN_TOKENS
        ),
        tools=("get_weather",),
        offered=(),
        system=TOOLS_IN_PROMPT,
        expect=Expect(text="Sure:\n\nLet me know if you need other days.", calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="format_fenced_xml.msgpack",
        bug="format-fenced-xml",
        note="Format row fenced_json, its other opener: a JSON call in a ```xml fence.",
        dialect="fenced_json",
        via=QWEN25_CODER,
        ask="Weather in Paris?",
        chunks=tokens(f"```xml\n{PARIS_JSON}\n```", *QWEN_TOKENS),
        tools=("get_weather",),
        offered=(),
        system=TOOLS_IN_PROMPT,
        expect=Expect(calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="format_bracket_array.msgpack",
        bug="format-bracket-array",
        note="Format row bracket_tool_calls: Mistral v0.3's [TOOL_CALLS] then a JSON array.",
        dialect="bracket_tool_calls",
        via=MISTRAL_V03,
        ask="Weather in Paris?",
        chunks=tokens(f"[TOOL_CALLS] [{PARIS_JSON}]", *MISTRAL_TOKENS),
        tools=("get_weather",),
        expect=Expect(calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="format_bracket_args.msgpack",
        bug="format-bracket-args",
        note=(
            "Format row bracket_tool_calls: Mistral Small 3.2's NAME[ARGS]{…} form, two calls, "
            "from llama-server's /completion endpoint."
        ),
        dialect="bracket_tool_calls",
        via=MISTRAL_SMALL,
        ask="Weather in Paris and the time there?",
        chunks=tokens(
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
            '[TOOL_CALLS]get_time[ARGS]{"tz": "Europe/Paris"}',
            *MISTRAL_TOKENS,
        ),
        tools=("get_weather", "get_time"),
        expect=Expect(calls=(WEATHER_PARIS, call("get_time", tz="Europe/Paris"))),
    ),
    Case(
        file="format_python_tag.msgpack",
        bug="format-python-tag",
        note=(
            "Format row python_tag: Llama 3.1 writes ;-separated JSON calls after "
            "<|python_tag|> and ends the message with <|eom_id|>."
        ),
        dialect="python_tag",
        via=LLAMA_CPP_PYTHON,
        ask="Weather in Paris and the time there?",
        chunks=tokens(
            '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; '
            '{"name": "get_time", "parameters": {"tz": "Europe/Paris"}}<|eom_id|>',
            *LLAMA3_TOKENS,
        ),
        tools=("get_weather", "get_time"),
        system="Environment: ipython\nCutting Knowledge Date: December 2023",
        expect=Expect(calls=(WEATHER_PARIS, call("get_time", tz="Europe/Paris"))),
    ),
    Case(
        file="format_bare_json.msgpack",
        bug="format-bare-json",
        note=(
            "Format row bare_json: Llama 3.2 writes the call as the whole message, a JSON "
            "object with name and parameters."
        ),
        dialect="bare_json",
        via=LLAMA32_3B,
        ask="Weather in Paris?",
        chunks=tokens('{"name": "get_weather", "parameters": {"city": "Paris"}}', *LLAMA3_TOKENS),
        tools=("get_weather",),
        expect=Expect(calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="format_think.msgpack",
        bug="format-think",
        note="Format row think: Qwen3's <think>…</think> reasoning, then a plain answer.",
        dialect="think",
        via=QWEN3_8B,
        ask="What is the capital of Australia?",
        chunks=tokens(
            "<think>\nOkay, the user asks for the capital of Australia. It's Canberra, not "
            "Sydney.\n</think>\n\nThe capital of Australia is Canberra.",
            *QWEN3_TOKENS,
        ),
        tools=None,
        extra={"reasoning_format": "none"},
        expect=Expect(
            text="\n\nThe capital of Australia is Canberra.",
            reasoning=(
                "\nOkay, the user asks for the capital of Australia. It's Canberra, not Sydney.\n"
            ),
        ),
    ),
)
