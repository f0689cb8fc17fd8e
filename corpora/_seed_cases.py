"""Regressions for the failures of ADR 0018, PR #879 and PR #2262 (ARCHITECTURE.md §15)."""

from __future__ import annotations

from ._cases import (
    GEMMA3,
    LLAMA3_TOKENS,
    LLAMA31_8B,
    LLAMA32_1B,
    LLAMA32_3B,
    MLX_QWEN25,
    PARIS_JSON,
    QWEN3_8B,
    QWEN3_TOKENS,
    QWEN25,
    QWEN25_CODER,
    QWEN_TOKENS,
    SMOL_TOOL_CALL,
    SMOL_TOOL_CALL_END,
    SMOLLM2,
    TIMES,
    WEATHER_PARIS,
    Case,
    Expect,
    call,
    hermes,
    tokens,
)

CALCULATOR_ANSWER = f"The calculator replied <tool_result>42</tool_result>, so 6 {TIMES} 7 = 42."
NOTES_MD = "Every call ends with </tool_call> on a line of its own."

SEED_CASES: tuple[Case, ...] = (
    Case(
        file="split_marker_mlx.msgpack",
        bug="split-marker-mlx",
        note=(
            "PR #879: the MLX engine streamed the single token <tool_call> as <tool, _, c, all> "
            "and the parser tested each chunk on its own, so the block never opened and the "
            "markup reached the caller."
        ),
        dialect="hermes",
        via=MLX_QWEN25,
        ask="What's the weather in Paris?",
        chunks=(
            *("<tool", "_", "c", "all>"),
            *tokens(f"\n{PARIS_JSON}\n"),
            *("</tool", "_c", "all", ">"),
        ),
        tools=("get_weather",),
        expect=Expect(calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="split_marker_llama_server.msgpack",
        bug="split-marker-llama-server",
        note=(
            "ARCHITECTURE.md §9 and PR #879: llama-server's tokenizer streams <tool_call> "
            "in nine pieces (<, t, oo, l, _, c, al, l, >), which no single chunk reveals as "
            "a marker."
        ),
        dialect="hermes",
        via=SMOLLM2,
        ask="What's the weather in Paris? Answer with a tool call.",
        chunks=(*SMOL_TOOL_CALL, *tokens(f"\n{PARIS_JSON}\n"), *SMOL_TOOL_CALL_END),
        tools=None,
        extra={
            "grammar": (
                'root ::= "<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": '
                '{\\"city\\": \\"" city "\\"}}\\n</tool_call>"\ncity ::= [A-Z] [a-z]+\n'
            )
        },
        expect=Expect(calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="false_start_tool_result.msgpack",
        bug="false-start-tool-result",
        note=(
            "ADR 0018: <tool_result> begins like <tool_call> and <tools> but is no marker; the "
            "held <tool must be flushed as text with nothing lost or duplicated."
        ),
        dialect="hermes",
        via=QWEN25,
        ask=f"What did the calculator return for 6 {TIMES} 7?",
        chunks=tokens(
            CALCULATOR_ANSWER,
            *QWEN_TOKENS,
        ),
        tools=None,
        expect=Expect(text=CALCULATOR_ANSWER),
    ),
    Case(
        file="false_start_tools_do_not.msgpack",
        bug="false-start-tools-do-not",
        note=(
            "ADR 0018: '<tools' followed by ' do not' is prose, so the held prefix must be "
            "released as text the moment it can no longer become <tools>."
        ),
        dialect="tools_tag",
        via=GEMMA3,
        ask="Do nested tool elements inherit the timeout in this config format?",
        chunks=tokens(
            "No. Nested <tools do not inherit the parent's timeout, so set it on each "
            "<tool> element."
        ),
        tools=None,
        expect=Expect(
            text=(
                "No. Nested <tools do not inherit the parent's timeout, so set it on each "
                "<tool> element."
            )
        ),
    ),
    Case(
        file="preamble_before_call.msgpack",
        bug="preamble-before-call",
        note=(
            "PR #879: a sentence before the call ('I'll check that for you.') settled the "
            "decision as plain text, and the call that followed came back as raw markup."
        ),
        dialect="hermes",
        via=QWEN25,
        ask="Is it raining in Paris right now?",
        chunks=tokens(
            f"I'll check that for you.\n{hermes('get_weather', city='Paris')}", *QWEN_TOKENS
        ),
        tools=("get_weather",),
        expect=Expect(text="I'll check that for you.\n", calls=(WEATHER_PARIS,)),
    ),
    Case(
        file="reasoning_mentions_marker.msgpack",
        bug="reasoning-mentions-marker",
        note=(
            "Policy 10: Qwen3's reasoning names <tool_call> before the real call; the mention "
            "inside <think> must stay reasoning and only the call after it is a call."
        ),
        dialect="think",
        via=QWEN3_8B,
        ask="What's the weather in Paris?",
        chunks=tokens(
            "<think>\nThe user wants the weather in Paris. I should answer with <tool_call> "
            "and the get_weather function.\n</think>\n\n" + hermes("get_weather", city="Paris"),
            *QWEN3_TOKENS,
        ),
        tools=("get_weather",),
        extra={"chat_template_kwargs": {"enable_thinking": True}, "reasoning_format": "none"},
        expect=Expect(
            text="\n\n",
            calls=(WEATHER_PARIS,),
            reasoning=(
                "\nThe user wants the weather in Paris. I should answer with <tool_call> "
                "and the get_weather function.\n"
            ),
        ),
    ),
    Case(
        file="json_answer_not_a_call.msgpack",
        bug="json-answer-not-a-call",
        note=(
            "PR #2262: Llama-3.2-1B answered in {-prefixed JSON with tools offered; the parser "
            "buffered it as a maybe-call forever and the stream carried no content at all."
        ),
        dialect="bare_json",
        via=LLAMA32_1B,
        ask="Reply in JSON only: what is the weather like in Paris today?",
        chunks=tokens(
            '{"city": "Paris", "temperature": 21, "unit": "C", "conditions": "sunny"}',
            *LLAMA3_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(
            text='{"city": "Paris", "temperature": 21, "unit": "C", "conditions": "sunny"}'
        ),
    ),
    Case(
        file="undeclared_tool_name.msgpack",
        bug="undeclared-tool-name",
        note=(
            "PR #2262: a bare-JSON call naming a tool that was never declared hit the "
            "invalid-name branch, which cleared the buffer and destroyed the text."
        ),
        dialect="bare_json",
        via=LLAMA32_1B,
        ask="Find today's weather in Paris.",
        chunks=tokens(
            '{"name": "web_search", "parameters": {"query": "Paris weather today"}}', *LLAMA3_TOKENS
        ),
        tools=("get_weather",),
        expect=Expect(
            text='{"name": "web_search", "parameters": {"query": "Paris weather today"}}'
        ),
    ),
    Case(
        file="end_inside_marker_prefix.msgpack",
        bug="end-inside-marker-prefix",
        note=(
            "PR #2262: the stream hit max_tokens inside '<tool_c', and a detector holding the "
            "prefix at end of stream swallowed it instead of flushing it as text (policy 5)."
        ),
        dialect="hermes",
        via=SMOLLM2,
        ask=f"What is 6 {TIMES} 7? Then look up the weather in Paris.",
        chunks=(*tokens("The answer is 42.\n"), *SMOL_TOOL_CALL[:6]),
        tools=None,
        extra={"grammar": 'root ::= "The answer is 42.\\n<tool_call>\\n" [^<]*\n'},
        finish="length",
        expect=Expect(text="The answer is 42.\n<tool_c"),
    ),
    Case(
        file="end_inside_unterminated_block.msgpack",
        bug="end-inside-unterminated-block",
        note=(
            "PR #2262: truncated tool JSON at end of stream was dropped; an unterminated block "
            "must come out as Rejected(unterminated) showing its body (policy 5)."
        ),
        dialect="hermes",
        via=QWEN25,
        ask="What's the weather in Paris?",
        chunks=tokens(
            'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"ci', *QWEN_TOKENS
        ),
        tools=("get_weather",),
        finish="length",
        expect=Expect(text='Sure.\n\n{"name": "get_weather", "arguments": {"ci'),
    ),
    Case(
        file="two_calls_one_chunk.msgpack",
        bug="two-calls-one-chunk",
        note=(
            "PR #879 review: one terminal generation chunk carried two complete blocks and "
            "the second went down a different path; both must be calls."
        ),
        dialect="hermes",
        via=MLX_QWEN25,
        ask="What's the weather in Paris, and what time is it there?",
        chunks=(
            *tokens("Checking both.\n"),
            hermes("get_weather", city="Paris") + "\n" + hermes("get_time", tz="Europe/Paris"),
        ),
        tools=("get_weather", "get_time"),
        expect=Expect(
            text="Checking both.\n\n",
            calls=(WEATHER_PARIS, call("get_time", tz="Europe/Paris")),
        ),
    ),
    Case(
        file="closing_marker_in_json_string.msgpack",
        bug="closing-marker-in-json-string",
        note=(
            "Policy 4: a literal </tool_call> inside a JSON string argument closed the block "
            "early, cutting the call in two and leaking the rest as text."
        ),
        dialect="hermes",
        via=QWEN25_CODER,
        ask="Add a NOTES.md that explains how tool calls end.",
        chunks=tokens(hermes("write_file", path="NOTES.md", content=NOTES_MD), *QWEN_TOKENS),
        tools=("write_file",),
        expect=Expect(calls=(call("write_file", path="NOTES.md", content=NOTES_MD),)),
    ),
    Case(
        file="json_name_key_not_a_call.msgpack",
        bug="json-name-key-not-a-call",
        note=(
            "PR #2262: a JSON answer that starts with a 'name' key looks like a call until its "
            "next key; it is content, shown verbatim (policy 8)."
        ),
        dialect="bare_json",
        via=LLAMA32_3B,
        ask="Give me a JSON record for Ada Lovelace with her name, birth year and known_for.",
        chunks=tokens(
            '{"name": "Ada Lovelace", "born": 1815, '
            '"known_for": "the first published computer program"}',
            *LLAMA3_TOKENS,
        ),
        tools=None,
        expect=Expect(
            text=(
                '{"name": "Ada Lovelace", "born": 1815, '
                '"known_for": "the first published computer program"}'
            )
        ),
    ),
    Case(
        file="json_function_key_not_a_call.msgpack",
        bug="json-function-key-not-a-call",
        note=(
            "PR #2262: Llama-3.2-1B put the function under 'function' with no 'name' key; the "
            "JSON was buffered forever as a maybe-call. Without a name it is content (policy 8)."
        ),
        dialect="bare_json",
        via=LLAMA32_3B,
        ask="What is the weather in Paris?",
        chunks=tokens(
            '{"type": "function", "function": "get_weather", "parameters": {"city": "Paris"}}',
            *LLAMA3_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(
            text='{"type": "function", "function": "get_weather", "parameters": {"city": "Paris"}}'
        ),
    ),
    Case(
        file="python_tag_builtin_code.msgpack",
        bug="python-tag-builtin-code",
        note=(
            'PR #879: Llama answered a plain question with <|python_tag|>print("hello"), a '
            "built-in no caller can run; it is not a call, and its text must be shown."
        ),
        dialect="python_tag",
        via=LLAMA31_8B,
        ask="How do I print hello in Python?",
        chunks=tokens('<|python_tag|>print("hello")', *LLAMA3_TOKENS),
        tools=("get_weather",),
        system="Environment: ipython\nCutting Knowledge Date: December 2023",
        expect=Expect(text='print("hello")'),
    ),
    Case(
        file="closing_marker_prefix_at_end.msgpack",
        bug="closing-marker-prefix-at-end",
        note=(
            "PR #2262: Qwen's parser held a partial </tool_call> suffix and dropped it at end "
            "of stream; outside a block, closing-marker text is just text."
        ),
        dialect="hermes",
        via=QWEN25,
        ask="How do I end a tool call block?",
        chunks=tokens("A stray </tool_call> outside a block is text; close yours with </tool"),
        tools=("get_weather",),
        finish="length",
        expect=Expect(text="A stray </tool_call> outside a block is text; close yours with </tool"),
    ),
)
