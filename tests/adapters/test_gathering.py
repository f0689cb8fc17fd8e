"""tcr.adapters: the gathering rules, one by one, on scripted parser results."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from tcr.adapters import CallFragment, Increment, IncrementalCallDetector, read_increment
from tcr.detector.events import Event, Rejected, Text, ToolCall
from tcr.errors import TcrError
from tcr.trace import run_trace


def scripted(*results: object, end: object = None) -> IncrementalCallDetector:
    """A detector whose parser returns ``results`` one per chunk, then ``end``."""
    answers: Iterator[object] = iter(results)
    return IncrementalCallDetector(lambda chunk: next(answers), lambda: end, format="hermes")


def run(detector: IncrementalCallDetector, steps: int) -> list[list[Event]]:
    return [detector.feed("x") for _ in range(steps)] + [detector.finish()]


def delta(content: str | None = None, *calls: dict[str, object]) -> dict[str, object]:
    return {"content": content, "tool_calls": list(calls)}


def call(index: int, name: str | None = None, arguments: str | None = None) -> dict[str, object]:
    return {"index": index, "function": {"name": name, "arguments": arguments}}


def test_normal_text_is_text_at_the_step_that_returns_it() -> None:
    assert run(scripted(delta("Hi "), None, delta("there")), 3) == [
        [Text("Hi ")],
        [],
        [Text("there")],
        [],
    ]


def test_call_is_presented_at_finish_after_text_even_when_the_next_index_started() -> None:
    steps = run(
        scripted(
            delta("A", call(0, "f", '{"a"')),
            delta("B", call(0, None, ": 1}"), call(1, "g", "{}")),
            delta("C"),
        ),
        3,
    )
    assert steps == [
        [Text("A")],
        [Text("B")],
        [Text("C")],
        [ToolCall("f", '{"a": 1}', None, "hermes"), ToolCall("g", "{}", None, "hermes")],
    ]


def test_calls_are_presented_in_index_order_not_arrival_order() -> None:
    detector = scripted(delta(None, call(1, "second", "{}"), call(0, "first", "{}")))
    events = run(detector, 1)[-1]
    assert [event.name for event in events if isinstance(event, ToolCall)] == ["first", "second"]


def test_name_and_argument_fragments_concatenate_in_arrival_order() -> None:
    detector = scripted(
        delta(None, call(0, "get_", '{"city"')),
        delta(None, call(0, "weather", ': "Paris"}')),
    )
    assert run(detector, 2)[-1] == [ToolCall("get_weather", '{"city": "Paris"}', None, "hermes")]


def test_arguments_are_kept_as_the_parser_wrote_them() -> None:
    detector = scripted(delta(None, call(0, "f", '{ "a" :1 }')))
    assert run(detector, 1)[-1] == [ToolCall("f", '{ "a" :1 }', None, "hermes")]


def test_no_argument_text_is_an_empty_object() -> None:
    assert run(scripted(delta(None, call(0, "f"))), 1)[-1] == [ToolCall("f", "{}", None, "hermes")]


@pytest.mark.parametrize("arguments", ['{"a": 1}{"b": 2}', '{"a": ', "[1, 2]", '"text"'])
def test_arguments_that_are_no_json_object_make_a_malformed_rejection(arguments: str) -> None:
    events = run(scripted(delta(None, call(0, "f", arguments))), 1)[-1]
    assert events == [Rejected(raw=None, content="", format="hermes", reason="malformed")]


def test_a_call_without_a_name_is_malformed() -> None:
    events = run(scripted(delta(None, call(0, None, "{}"))), 1)[-1]
    assert events == [Rejected(raw=None, content="", format="hermes", reason="malformed")]


def test_a_second_call_on_the_same_index_merges_into_a_malformed_one() -> None:
    detector = scripted(
        delta(None, call(0, "get_weather", '{"city": "Paris"}')),
        delta(None, call(0, "get_time", '{"tz": "CET"}')),
    )
    assert [type(event) for event in run(detector, 2)[-1]] == [Rejected]


def test_end_results_come_before_the_calls() -> None:
    detector = scripted(delta("a", call(0, "f", "{}")), end=delta("held", call(0, None, "")))
    assert run(detector, 1)[-1] == [Text("held"), ToolCall("f", "{}", None, "hermes")]


def test_several_results_per_step_are_read_in_order() -> None:
    detector = scripted([delta("a", call(0, "f")), None, delta("b", call(0, None, "{}"))])
    assert run(detector, 1) == [[Text("ab")], [ToolCall("f", "{}", None, "hermes")]]


def test_vllm_objects_read_as_dicts_do() -> None:
    function = SimpleNamespace(name="f", arguments="{}")
    message = SimpleNamespace(
        content="hi",
        reasoning_content="not read",
        tool_calls=[SimpleNamespace(id="call_1", type="function", index=0, function=function)],
    )
    assert read_increment(message) == Increment("hi", (CallFragment(0, "f", "{}"),))


def test_sglang_results_as_objects_and_dicts() -> None:
    item = SimpleNamespace(tool_index=2, name="f", parameters='{"a"')
    as_object = SimpleNamespace(normal_text="hi", calls=[item])
    as_dict = {"normal_text": "hi", "calls": [{"tool_index": 2, "name": "f", "parameters": '{"a"'}]}
    expected = Increment("hi", (CallFragment(2, "f", '{"a"'),))
    assert read_increment(as_object) == read_increment(as_dict) == expected


def test_empty_results_give_nothing() -> None:
    for empty in (
        None,
        {},
        {"content": None, "tool_calls": None},
        {"normal_text": "", "calls": []},
    ):
        assert read_increment(empty) == Increment()


@pytest.mark.parametrize(
    ("result", "says"),
    [
        (42, "expected a delta"),
        ({"content": 3}, "'text' is a int"),
        ({"tool_calls": {"index": 0}}, "'tool_calls' is a dict"),
        ({"tool_calls": [{"function": {"name": "f"}}]}, "'index' is None"),
        ({"calls": [{"tool_index": True, "parameters": ""}]}, "'tool_index' is True"),
        ({"calls": [{"tool_index": 0, "name": 7}]}, "'name' is a int"),
    ],
)
def test_a_result_of_no_known_shape_raises_tcr_error(result: object, says: str) -> None:
    with pytest.raises(TcrError, match=says):
        read_increment(result)


def test_a_parser_that_raises_is_a_crash_of_the_detector() -> None:
    def step(chunk: str) -> object:
        raise RuntimeError("parser broke")

    trace = run_trace(IncrementalCallDetector(step), ["a"])
    assert trace.crash is not None and trace.crash.error == "RuntimeError: parser broke"


def test_a_run_with_a_call_carries_no_raw_and_a_text_only_run_does() -> None:
    with_call = run_trace(scripted(delta("a", call(0, "f", "{}"))), ["x"])
    text_only = run_trace(scripted(delta("a")), ["x"])
    assert (with_call.has_raw, text_only.has_raw) == (False, True)


def test_a_fragment_with_neither_name_nor_arguments_makes_no_call() -> None:
    detector = scripted(delta(None, call(0, "f", "{}"), call(1), call(2, "", "")))
    assert run(detector, 1)[-1] == [ToolCall("f", "{}", None, "hermes")]
