"""Regressions for the policies of ARCHITECTURE.md §5.6, one recording per policy, 1 to 13."""

from __future__ import annotations

from ._cases import (
    GEMMA4,
    GEMMA4_TOKENS,
    LLAMA3_TOKENS,
    LLAMA31_8B,
    MLX_LLAMA31,
    OLLAMA_GEMMA3,
    OLLAMA_LLAMA32,
    QWEN3_TOKENS,
    QWEN25,
    QWEN25_CODER,
    QWEN25_NO_TEMPLATE,
    QWEN25_SMALL,
    QWEN_TOKENS,
    R1_DISTILL,
    SGLANG_QWEN3_CODER,
    TIMES,
    TOOLS_IN_PROMPT,
    WEATHER_PARIS,
    Case,
    Expect,
    as_json,
    call,
    hermes,
    tokens,
    tools_in_prompt,
)

BANNER_C = """#include <stdio.h>

/* Prints a banner; the braces in these strings must not end the call. */
int main(void) {
    const char *open = "{";
    const char *close = "}";
    printf("%s hello %s\\n", open, close);
    for (int i = 0; i < 3; i++) {
        printf("}}} %d {{{\\n", i);
    }
    return 0;
}
"""

REPEATED_LINE = "        total += math.sin(i) * 0.5  # accumulate the next step\n"
RUNAWAY_HEAD = (
    "<tool_call>\n<function=write_file>\n<parameter=path>\nsim/loop.py\n</parameter>\n"
    "<parameter=content>\nimport math\n\n\ndef simulate(steps):\n    total = 0.0\n"
    "    for i in range(steps):\n"
)
RUNAWAY_LENGTH = 1_060_000  # past the reference detector's max_block of 1 MiB


def _runaway() -> tuple[str, ...]:
    """A repetition loop inside a call until the context filled: ~1 MiB, never closed."""
    body = RUNAWAY_HEAD + REPEATED_LINE * (RUNAWAY_LENGTH // len(REPEATED_LINE) + 1)
    body = body[:RUNAWAY_LENGTH]
    chunks: list[str] = []
    pos = 0
    index = 0
    while pos < len(body):
        size = 4000 + (index * 37) % 211  # ~1024 tokens per stream interval
        chunks.append(body[pos : pos + size])
        pos += size
        index += 1
    return tuple(chunks)


RUNAWAY = _runaway()


R1_THOUGHT = (
    f"\nThe user asks for 17 {TIMES} 3. That is plain arithmetic, so no tool: no <tool_call>, "
    "no [TOOL_CALLS], no <|python_tag|> and no ```json\n{ block.\n"
)


POLICY_CASES: tuple[Case, ...] = (
    Case(
        file="policy_01_accumulated_match.msgpack",
        bug="policy-1-accumulated-match",
        note=(
            "Policy 1: Ollama streamed <tools> as <, tools, >, so only the accumulated text "
            "shows the marker; matching chunk by chunk leaks it."
        ),
        dialect="tools_tag",
        via=OLLAMA_GEMMA3,
        ask="Weather in Paris and the time in Tokyo, please.",
        chunks=tokens(
            "Let me check both.\n<tools>\n"
            + as_json(
                [
                    {"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_time", "arguments": {"tz": "Asia/Tokyo"}},
                ]
            )
            + "\n</tools>"
        ),
        tools=("get_weather", "get_time"),
        expect=Expect(
            text="Let me check both.\n",
            calls=(WEATHER_PARIS, call("get_time", tz="Asia/Tokyo")),
        ),
    ),
    Case(
        file="policy_02_holdback_bound.msgpack",
        bug="policy-2-holdback-bound",
        note=(
            "Policy 2: code-heavy prose full of <, [ and ``` must be held back at most "
            "'longest opening marker - 1' characters, never buffered until the end."
        ),
        dialect="plain",
        via=QWEN25_CODER,
        ask="Any tips for this loop and template?",
        chunks=tokens(
            "In the loop, compare with `a[i] < b[j]` rather than `a[i] <= b[j]`, and keep the "
            'template as <div class="name">{{ user.name }}</div>. Tags like <thinking> or '
            "<tools-list> are plain HTML to the parser. For the regions a list works:\n"
            '```json\n["eu-west-1", "us-east-2"]\n```\nand a [TODO] marker is fine in comments.',
            *QWEN_TOKENS,
        ),
        tools=None,
        expect=Expect(
            text=(
                "In the loop, compare with `a[i] < b[j]` rather than `a[i] <= b[j]`, and keep "
                'the template as <div class="name">{{ user.name }}</div>. Tags like <thinking> '
                "or <tools-list> are plain HTML to the parser. For the regions a list works:\n"
                '```json\n["eu-west-1", "us-east-2"]\n```\nand a [TODO] marker is fine in '
                "comments."
            )
        ),
    ),
    Case(
        file="policy_03_bare_json_only_at_start.msgpack",
        bug="policy-3-bare-json-only-at-start",
        note=(
            "Policy 3: bare JSON opens a call only at message start (PR #879: 'an unmarked call "
            "object that is the entire message'); a call-shaped object quoted mid-answer is text."
        ),
        dialect="bare_json",
        via=LLAMA31_8B,
        ask="What did the client send to the weather API?",
        chunks=tokens(
            'The request body was {"name": "get_weather", "parameters": {"city": "Paris"}} '
            "and the server answered 200 with the forecast.",
            *LLAMA3_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(
            text=(
                'The request body was {"name": "get_weather", "parameters": {"city": "Paris"}} '
                "and the server answered 200 with the forecast."
            )
        ),
    ),
    Case(
        file="policy_04_braces_in_strings.msgpack",
        bug="policy-4-braces-in-strings",
        note=(
            "Policy 4: a fenced call whose string argument is C code full of { and } must close "
            "on the brace that really balances, found without re-scanning the block per chunk."
        ),
        dialect="fenced_json",
        via=QWEN25_CODER,
        ask="Write banner.c that prints a brace banner.",
        chunks=tokens(
            "Here is the call to create the file:\n```json\n"
            + as_json(
                {"name": "write_file", "arguments": {"path": "banner.c", "content": BANNER_C}}
            )
            + "\n```\nCompile it with `cc banner.c`.",
            *QWEN_TOKENS,
        ),
        tools=("write_file",),
        system=tools_in_prompt("write_file", "path", "content"),
        expect=Expect(
            text="Here is the call to create the file:\n\nCompile it with `cc banner.c`.",
            calls=(call("write_file", path="banner.c", content=BANNER_C),),
        ),
    ),
    Case(
        file="policy_05_unclosed_complete_call.msgpack",
        bug="policy-5-unclosed-complete-call",
        note=(
            "Policy 5 and PR #879: the client's stop string ate </tool_call>, so the block ends "
            "with the message; a body that parses as a complete call is still a call."
        ),
        dialect="hermes",
        via=QWEN25,
        ask="Two-day forecast for Paris?",
        chunks=tokens(
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n',
            *QWEN_TOKENS,
        ),
        tools=("get_weather",),
        extra={"stop": ["</tool_call>"]},
        expect=Expect(calls=(call("get_weather", city="Paris", days=2),)),
    ),
    Case(
        file="policy_06_malformed_block.msgpack",
        bug="policy-6-malformed-block",
        note=(
            "Policy 6: Qwen2.5-0.5B closed the block one brace short; a closed block that "
            "does not parse is Rejected(malformed) and shown without its markers."
        ),
        dialect="hermes",
        via=QWEN25_SMALL,
        ask="What's the weather in Paris?",
        chunks=tokens(
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}\n</tool_call>',
            *QWEN_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(text='\n{"name": "get_weather", "arguments": {"city": "Paris"}\n'),
    ),
    Case(
        file="policy_07_no_tools_rejects_every_call.msgpack",
        bug="policy-7-no-tools-rejects-every-call",
        note=(
            "Policy 7 and PR #879: the request declared no tool, yet Gemma wrote a call; it "
            "must be rejected and shown as text, not leak <|tool_call>."
        ),
        dialect="gemma4",
        via=GEMMA4,
        ask="Just tell me in words: is Paris usually rainy in May?",
        chunks=tokens(
            '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>', *GEMMA4_TOKENS
        ),
        tools=(),
        expect=Expect(text='call:get_weather{city:<|"|>Paris<|"|>}'),
    ),
    Case(
        file="policy_08_json_answer_released_early.msgpack",
        bug="policy-8-json-answer-released-early",
        note=(
            "Policy 8 and PR #2262: a JSON answer at message start is not_a_call as soon as its "
            "first key says so, and is streamed verbatim from then on, not held to the end."
        ),
        dialect="bare_json",
        via=OLLAMA_LLAMA32,
        ask="Give me a two-day Paris forecast as JSON.",
        chunks=tokens(
            '{"forecast": [{"day": "Monday", "high_c": 21, "low_c": 12, "sky": "sun & clouds"}, '
            '{"day": "Tuesday", "high_c": 19, "low_c": 11, "sky": "light rain"}], '
            '"source": "Météo-France"}',
            *LLAMA3_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(
            text=(
                '{"forecast": [{"day": "Monday", "high_c": 21, "low_c": 12, '
                '"sky": "sun & clouds"}, {"day": "Tuesday", "high_c": 19, "low_c": 11, '
                '"sky": "light rain"}], "source": "Météo-France"}'
            )
        ),
    ),
    Case(
        file="policy_09_several_blocks.msgpack",
        bug="policy-9-several-blocks",
        note=(
            "Policy 9: two blocks in one message with text before, between and after them; "
            "both are calls and every piece of text is shown in order."
        ),
        dialect="hermes",
        via=QWEN25,
        ask="Compare the weather in Paris and Lyon.",
        chunks=tokens(
            "I'll look up both cities.\n"
            + hermes("get_weather", city="Paris")
            + "\n"
            + hermes("get_weather", city="Lyon")
            + "\nI'll compare them once both results are in.",
            *QWEN_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(
            text="I'll look up both cities.\n\n\nI'll compare them once both results are in.",
            calls=(WEATHER_PARIS, call("get_weather", city="Lyon")),
        ),
    ),
    Case(
        file="policy_10_markers_in_reasoning.msgpack",
        bug="policy-10-markers-in-reasoning",
        note=(
            "Policy 10: R1's reasoning names <tool_call>, [TOOL_CALLS], <|python_tag|> and a "
            "```json fence, and none of them may open a call."
        ),
        dialect="think",
        via=R1_DISTILL,
        ask=f"What is 17 {TIMES} 3?",
        chunks=tokens(f"<think>{R1_THOUGHT}</think>\n\n17 {TIMES} 3 = 51.", *QWEN3_TOKENS),
        tools=("get_weather",),
        expect=Expect(text=f"\n\n17 {TIMES} 3 = 51.", reasoning=R1_THOUGHT),
    ),
    Case(
        file="policy_11_seeded_format_redetected.msgpack",
        bug="policy-11-seeded-format-redetected",
        note=(
            "Policy 11 and ADR 0018: the model-name seed says tool_call_tag for qwen*, but "
            "without its template Qwen2.5 writes a fenced call; a seeded detector must "
            "re-detect it and emit what a cold one emits."
        ),
        dialect="fenced_json",
        via=QWEN25_NO_TEMPLATE,
        ask="What's the weather in Paris, in Celsius?",
        chunks=tokens(
            "I'll check the forecast.\n```json\n"
            + as_json({"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}})
            + "\n```",
            *QWEN_TOKENS,
        ),
        tools=("get_weather",),
        offered=(),
        system=TOOLS_IN_PROMPT,
        expect=Expect(
            text="I'll check the forecast.\n",
            calls=(call("get_weather", city="Paris", unit="celsius"),),
        ),
    ),
    Case(
        file="policy_12_rejected_content_stripped.msgpack",
        bug="policy-12-rejected-content-stripped",
        note=(
            "Policy 12 and PR #879: the request offered only get_weather, Llama called get_time "
            "anyway, and the rejected call reached the caller with <|python_tag|> in it."
        ),
        dialect="python_tag",
        via=MLX_LLAMA31,
        ask="What time is it in Paris?",
        chunks=tokens(
            '<|python_tag|>{"name": "get_time", "parameters": {"tz": "Europe/Paris"}}',
            *LLAMA3_TOKENS,
        ),
        tools=("get_weather",),
        expect=Expect(text='{"name": "get_time", "parameters": {"tz": "Europe/Paris"}}'),
    ),
    Case(
        file="policy_13_block_too_long.msgpack",
        bug="policy-13-block-too-long",
        note=(
            "Policy 13: Qwen3-Coder looped inside a write_file call until the context filled; "
            "past max_block (1 MiB) the block is Rejected(too_long) and the rest prints as text."
        ),
        dialect="qwen3_coder",
        via=SGLANG_QWEN3_CODER,
        ask="Write sim/loop.py with a simulate(steps) function.",
        chunks=RUNAWAY,
        tools=("write_file",),
        finish="length",
        expect=Expect(text="".join(RUNAWAY)[len("<tool_call>") :]),
    ),
)
