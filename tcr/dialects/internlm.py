"""InternLM2 and Intern-S1: a JSON ``{name, parameters}`` call in a ``<|plugin|>`` action.

vLLM calls its parser ``internlm``, SGLang ``interns1``. The opening marker is two
special tokens, ``<|action_start|>`` and ``<|plugin|>``: vLLM matches them
adjacent, SGLang (after lmdeploy) with the space its detokenizer puts between
them, so both spellings open. ``<|action_start|><|interpreter|>`` is a code
action, not a tool call, and stays text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from tcr.dialects._calls import json_call
from tcr.dialects._grammars import call_map, calls_between
from tcr.dialects._record import (
    BodyLexer,
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
    Variant,
)
from tcr.dialects._writing import FLAVORS, BodyText, Calls, json_text

__all__ = ["DIALECT"]

ACTION = "<|action_start|>"
PLUGIN = "<|plugin|>"
OPEN = ACTION + PLUGIN
OPEN_SPACED = f"{ACTION} {PLUGIN}"
CLOSE = "<|action_end|>"
INTERPRETER = "<|interpreter|>"

# The keys InternLM's template writes the arguments under; both engines read either.
_KEYS = ("parameters", "parameters", "arguments")


def _render(draws: Draws, tools: Tools) -> Rendered:
    spaced = draws.variant(("adjacent", "spaced")) == "spaced"
    calls = Calls(draws, tools, most=1, flavors=FLAVORS)
    (name,) = calls.names
    key = draws.option(0, _KEYS)
    args = draws.arguments()
    obj: dict[str, object] = {"name": name, key: args}
    found: tuple[Call, ...] = (Call(name, args, "internlm"),)
    if calls.flavor == "missing_name":
        obj = {key: args}
    elif calls.flavor == "name_only":  # both engines read missing arguments as {}
        obj, found = {"name": name}, (Call(name, {}, "internlm"),)
    elif calls.flavor == "not_a_call":
        obj = {"answer": args}
    body = BodyText()
    body.add(draws.option(1, ("\n", "\n", "")))
    body.add(json_text(obj, draws.style()), fragile=True)
    body.add(draws.option(2, ("", "", "\n")))
    return Rendered(
        "internlm",
        "spaced" if spaced else "adjacent",
        OPEN_SPACED if spaced else OPEN,
        body.text,
        CLOSE,
        "",
        found if calls.flavor in ("call", "name_only") else (),
        calls.accepted(),
        tuple(body.fragile),
    )


_CALL_RE = rf"{re.escape(OPEN)}\n(\{{.*?\}}){re.escape(CLOSE)}"


def _named(groups: Sequence[str]) -> dict[str, object]:
    obj = json.loads(groups[0])
    return call_map(obj["name"], obj["parameters"])


def _action(text: str, name: str, arguments: dict[str, object], key: str = "parameters") -> str:
    body = json.dumps({"name": name, key: arguments}, ensure_ascii=False)
    return f"{text}{OPEN}\n{body}{CLOSE}"


_PARIS = Call("get_weather", {"city": "Paris"})


DIALECT = Dialect(
    id="internlm",
    summary="InternLM2: JSON {name, parameters} between <|action_start|><|plugin|> and "
    "<|action_end|>",
    opens=(OPEN, OPEN_SPACED),
    closes=(CLOSE,),
    closing=Closing.MARKER,
    parse=json_call,
    render=_render,
    example=Example(
        "Let me look it up.",
        _action("", "get_weather", {"city": "Paris"}),
        "\n",
        (_PARIS,),
    ),
    grammars=(
        Grammar(
            "internlm",
            "InternLM2 <|plugin|> action holding a JSON {name, parameters} call, after a sentence.",
            "What is the weather in Paris?",
            f'sentence "{OPEN}\\n{{\\"name\\": \\"get_weather\\", \\"parameters\\": '
            f'{{\\"city\\": " city "}}}}{CLOSE}"',
            calls_between(_CALL_RE, 1, read=_named),
        ),
    ),
    cases=(
        RegressionCase(
            file="format_internlm.msgpack",
            bug="format-internlm",
            note=(
                "Dialect internlm: InternLM2.5 writes a <|plugin|> action after a sentence, its "
                'JSON call\'s arguments under "parameters".'
            ),
            model="internlm2",
            ask="Weather in Paris in Celsius?",
            text=_action("I will check.", "get_weather", {"city": "Paris", "unit": "celsius"}),
            tools=("get_weather",),
            shown="I will check.",
            calls=(Call("get_weather", {"city": "Paris", "unit": "celsius"}),),
        ),
        RegressionCase(
            file="internlm_spaced_opener.msgpack",
            bug="internlm-spaced-opener",
            note=(
                "Dialect internlm: <|action_start|> <|plugin|> with the space lmdeploy and SGLang "
                "decode between the two special tokens; vLLM's internlm parser matches only the "
                "adjacent pair and shows the call as text."
            ),
            model="intern_s1",
            ask="Weather in Paris?",
            text=_action("", "get_weather", {"city": "Paris"}).replace(OPEN, OPEN_SPACED),
            tools=("get_weather",),
            calls=(_PARIS,),
        ),
        RegressionCase(
            file="internlm_two_actions.msgpack",
            bug="internlm-two-actions",
            note=(
                "Dialect internlm: two <|plugin|> actions in one message; vLLM's internlm "
                "parser unpacks text.split(<|action_start|><|plugin|>) into two names and "
                "raises on the second."
            ),
            model="internlm2",
            ask="Weather in Paris and the time in Berlin?",
            text=_action("Two lookups.", "get_weather", {"city": "Paris"})
            + _action("\n", "get_time", {"tz": "Europe/Berlin"}),
            tools=("get_weather", "get_time"),
            shown="Two lookups.\n",
            calls=(_PARIS, Call("get_time", {"tz": "Europe/Berlin"})),
        ),
        RegressionCase(
            file="internlm_arguments_key.msgpack",
            bug="internlm-arguments-key",
            note=(
                'Dialect internlm: the call\'s arguments under "arguments", not "parameters"; '
                'older vLLM internlm parsers streamed only "parameters" and lost them.'
            ),
            model="internlm2",
            ask="What time is it in Tokyo?",
            text=_action("", "get_time", {"tz": "Asia/Tokyo"}, key="arguments"),
            tools=("get_time",),
            calls=(Call("get_time", {"tz": "Asia/Tokyo"}),),
        ),
        RegressionCase(
            file="internlm_interpreter_action.msgpack",
            bug="internlm-interpreter-action",
            note=(
                "Dialect internlm: an <|interpreter|> code action is no tool call and stays text; "
                "vLLM's internlm parser stops streaming content once <|action_start|> appears "
                "and never releases it."
            ),
            model="internlm2",
            ask="What is 2 to the 10th?",
            text=f"Computing it.{ACTION}{INTERPRETER}\n```python\nprint(2 ** 10)\n```{CLOSE}",
            tools=("get_weather",),
            shown=f"Computing it.{ACTION}{INTERPRETER}\n```python\nprint(2 ** 10)\n```{CLOSE}",
        ),
    ),
    engines=Engines(vllm=("internlm",), sglang=("interns1",)),
    variants=(
        Variant(
            "spaced",
            f"the opener written with a space, {OPEN_SPACED!r}",
            lambda raw, before: raw.startswith(OPEN_SPACED),
            f'Sure. {OPEN_SPACED}\n{{"name": "get_weather", "parameters": {{"city": "Paris"}}}}'
            f"{CLOSE} ok",
            reads=(("SGLang interns1", "sglang/srt/function_call/internlm_detector.py"),),
            skips=(("vLLM internlm", "vllm/tool_parsers/internlm2_tool_parser.py"),),
        ),
    ),
    # Each marker token is one special token of InternLM2's vocabulary (vLLM's internlm
    # parser turns skip_special_tokens off to see them); the opener is two of them, so a
    # chunk boundary may fall between them, never inside one.
    special_tokens=frozenset({ACTION, PLUGIN, CLOSE}),
    lexer_by_first=(("{[", BodyLexer.JSON),),
    model_seeds=("internlm*", "intern-s1*", "interns1*"),
    tokens=(ACTION, PLUGIN),
    markup=(CLOSE, OPEN),
)
