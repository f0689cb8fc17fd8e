"""``tcr show``: one recording and everything tcr derives from it, for a person or a machine.

:func:`summarize` is the library half: it reads, decodes, rechunks, runs the
detector and the oracles, and returns plain JSON-serialisable data (no
printing). :func:`render` prints such a summary with rich. A detector that
raises is a finding and lands in the summary; bad input (a corrupt or missing
file, a bad strategy, a detector that cannot be loaded) raises ``TcrError``.
A body that cannot be decoded is bad input too, but the frames that were read
are still worth seeing: it is reported in ``decoded.error`` and the detector is
not run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any, Final

from tcr.corpus import Recording, read_recording
from tcr.detector.loader import REFERENCE, Factory, load_factory, make_detector
from tcr.errors import DecodeError, TcrError
from tcr.oracle import CHECKS, Verdict, Violation, check_trace, warm_cold_verdict
from tcr.rechunk import Strategy, parse_strategy
from tcr.stream import Decoded, Delta, StreamDecoder, decode_bytes
from tcr.trace import Placed, Trace, describe_error, place_events, run_trace

from .show_render import clip as _clip
from .show_render import render, visible

__all__ = ["exit_code", "render", "summarize", "visible"]

PREVIEW: Final = 120  # characters of a frame's data kept in the summary

# --- summarize -------------------------------------------------------------------


def summarize(
    path: str | Path,
    *,
    detector: str | None = None,
    tools: list[str] | None = None,
    rechunk: str = "original",
    seed: int = 0,
) -> dict[str, Any]:
    """Everything about one recording as plain data; see the module docstring.

    ``tools`` overrides the recording's declared tools (``[]`` declares none);
    ``rechunk`` must name one chunking (``random`` uses run 0 of ``seed``).
    """
    strategy = parse_strategy(rechunk)  # input errors first, before any work
    factory = load_factory(detector)
    recording = read_recording(path)
    declared = tools if tools is not None else recording.tools
    decoded, error = _decode(recording)
    summary: dict[str, Any] = {
        "path": str(path),
        "header": _jsonable(recording.header),
        "complete": recording.complete,
        "incomplete_reason": recording.incomplete_reason,
        "trailer": _jsonable(recording.end),
        "frames": _frames(recording),
        "decoded": _decoded(decoded, error),
        "content": None,
        "detector": None,
        "verdict": None,
        "expect": _jsonable(recording.expect),
    }
    if error is not None:
        return summary
    label, chunks = _chunking(strategy, recording, decoded, seed)
    summary["content"] = {
        "text": decoded.text,
        "rechunk": strategy.spec,
        "label": label,
        "recorded_chunks": len(decoded.content),
        "chunks": _offsets(chunks),
    }
    run, verdict = _judge(factory, declared, chunks, recording.expect)
    summary["detector"] = {"spec": detector or REFERENCE, "tools": declared, **run}
    summary["verdict"] = verdict
    return summary


def exit_code(summary: Mapping[str, Any]) -> int:
    """0 all checks pass, 1 a violation was found, 2 the body could not be decoded or
    the detector crashed (the same codes as ``tcr replay``)."""
    if summary["decoded"]["error"] is not None:
        return 2
    if any(v["check"] == "crash" for v in summary["verdict"]["violations"]):
        return 2
    return 0 if summary["verdict"]["ok"] else 1


def _decode(recording: Recording) -> tuple[Decoded, str | None]:
    # tcr.stream.decode() stops at the first error; here what was decoded up to it
    # is kept, because seeing the deltas before a bad frame is the point of show.
    decoder = StreamDecoder(recording.kind)
    where = "end of stream"
    try:
        for index, frame in enumerate(recording.frames):
            where = f"frame {index}"
            decoder.feed(frame.data)
        where = "end of stream"
        decoder.finish()
    except DecodeError as exc:
        return decoder.result(), f"{recording.path}, {where}: {exc}"
    return decoder.result(), None


def _chunking(
    strategy: Strategy, recording: Recording, decoded: Decoded, seed: int
) -> tuple[str, tuple[str, ...]]:
    if strategy.transport:  # re-split the raw body, then decode it again
        body = b"".join(_as_bytes(frame.data) for frame in recording.frames)
        chunking = _one(strategy, strategy.chunkings(body, runs=1, seed=seed))
        return chunking.label, tuple(decode_bytes(recording.kind, chunking.chunks).content)
    chunkings = strategy.chunkings(decoded.text, original=decoded.content, runs=1, seed=seed)
    chunking = _one(strategy, chunkings)
    return chunking.label, chunking.chunks


def _one(strategy: Strategy, chunkings: Iterable[Any]) -> Any:
    found = list(zip(range(2), chunkings, strict=False))
    if len(found) != 1:
        raise TcrError(
            f"rechunk strategy {strategy.spec!r} makes {'no' if not found else 'many'} "
            "chunkings and show displays one: name it with splits:A,B,... "
            "(tcr replay runs them all)"
        )
    return found[0][1]


def _judge(
    factory: Factory,
    tools: Sequence[str] | None,
    chunks: tuple[str, ...],
    expectation: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    text = "".join(chunks)
    try:
        trace = run_trace(make_detector(factory, tools), chunks)
        whole = run_trace(make_detector(factory, tools), [text] if text else [])
    except Exception as error:  # the factory itself raised: a finding about the detector
        message = f"the detector factory raised {describe_error(error)}"
        crash = {"chunk": None, "offset": None, "error": message}
        found = Verdict((Violation("crash", message, None, None, ""),), ("crash",))
        return {"events": [], "shown": "", "crash": crash}, _verdict(found, Verdict((), ()))
    verdict = check_trace(trace, whole=whole, expectation=expectation)
    return _run(trace), _verdict(verdict, _warm_cold(factory, tools, chunks))


def _warm_cold(factory: Factory, tools: Sequence[str] | None, chunks: Sequence[str]) -> Verdict:
    try:
        return warm_cold_verdict(factory, chunks, tools=tools)
    except Exception as error:  # a seeded or reused detector that fails is a finding too
        message = str(error) if isinstance(error, TcrError) else describe_error(error)
        return Verdict((Violation("warm_cold", message, None, None, ""),), ("warm_cold",))


def _verdict(trace_verdict: Verdict, warm_cold: Verdict) -> dict[str, Any]:
    violations = [*trace_verdict.violations, *warm_cold.violations]
    ran = set(trace_verdict.ran) | set(warm_cold.ran)
    return {
        "ok": not violations,
        "violations": [dataclasses.asdict(v) for v in violations],
        "ran": [check for check in CHECKS if check in ran],
        "skipped": {**trace_verdict.skipped, **warm_cold.skipped},
    }


def _run(trace: Trace) -> dict[str, Any]:
    crash = trace.crash
    return {
        "events": [
            _event(index, placed, trace) for index, placed in enumerate(place_events(trace))
        ],
        "shown": trace.shown,
        "crash": crash and {"chunk": crash.index, "offset": crash.offset, "error": crash.error},
    }


def _event(index: int, placed: Placed, trace: Trace) -> dict[str, Any]:
    raw, start = placed.event.raw, placed.start
    return {
        "index": index,
        "chunk": placed.step,  # len(chunks) is the finish() step
        "finish": placed.step == len(trace.chunks),
        "type": type(placed.event).__name__,
        "start": start,
        "end": None if start is None or raw is None else start + len(raw),
        "fields": dataclasses.asdict(placed.event),
    }


def _offsets(chunks: Sequence[str]) -> list[dict[str, Any]]:
    starts = accumulate(map(len, chunks), initial=0)  # one more than there are chunks
    pairs = enumerate(zip(starts, chunks, strict=False))
    return [{"index": index, "offset": offset, "text": text} for index, (offset, text) in pairs]


def _as_bytes(data: bytes | str) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8")


def _frames(recording: Recording) -> list[dict[str, Any]]:
    rows, previous = [], 0
    for index, frame in enumerate(recording.frames):
        data = frame.data
        text = data.decode("utf-8", "backslashreplace") if isinstance(data, bytes) else data
        row = {
            "index": index,
            "t_ms": round(frame.t_ns / 1e6, 3),
            "delta_ms": round((frame.t_ns - previous) / 1e6, 3),
            "bytes": len(_as_bytes(data)),
            "preview": _clip(visible(text), PREVIEW),
        }
        if frame.meta is not None:
            row["meta"] = _jsonable(frame.meta)
        rows.append(row)
        previous = frame.t_ns
    return rows


def _decoded(decoded: Decoded, error: str | None) -> dict[str, Any]:
    return {
        "framing": decoded.framing,
        "done": decoded.done,
        "finish_reason": decoded.finish_reason,
        "deltas": [_delta(index, delta) for index, delta in enumerate(decoded.deltas)],
        "calls": [dataclasses.asdict(call) for call in decoded.calls],
        "reasoning": decoded.reasoning_text,
        "errors": list(decoded.errors),
        "unfinished": decoded.unfinished,
        "error": error,
    }


def _delta(index: int, delta: Delta) -> dict[str, Any]:
    """The fields a delta carried (``None``, ``""``, ``False`` and ``()`` left out)."""
    out: dict[str, Any] = {"index": index}
    for name in ("role", "content", "reasoning", "finish_reason", "done", "error"):
        value = getattr(delta, name)
        if value not in (None, "", False):
            out[name] = value
    if delta.tool_calls:
        out["tool_calls"] = [dataclasses.asdict(fragment) for fragment in delta.tool_calls]
    return out


def _jsonable(value: object) -> Any:
    """msgpack data as JSON data: bytes become text, anything exotic its ``str``."""
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
