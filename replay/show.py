"""``tcr show``: one recording and everything tcr derives from it, for a person or a machine.

:func:`summarize` is the library half: it reads, decodes, rechunks, runs the
detector and the oracles, and returns a :class:`ShowSummary` (no printing; its
``to_json()`` is ``tcr show --json``). :func:`render` prints it with rich. A detector that
raises is a finding and lands in the summary; bad input (a corrupt or missing
file, a bad strategy, a detector that cannot be loaded) raises ``TcrError``.
A body that cannot be decoded is bad input too, but the frames that were read
are still worth seeing: it is reported in ``decoded.error`` and the detector is
not run.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from itertools import accumulate
from pathlib import Path
from typing import Any, Final

from tcr._runtime.loading import load_detector
from tcr._runtime.names import safe_text
from tcr.claims import Claim
from tcr.corpus import Frame, Recording, read_recording
from tcr.detector.events import Detector
from tcr.detector.loader import REFERENCE
from tcr.errors import DecodeError, FactoryError, TcrError
from tcr.judge import Judge
from tcr.oracle import TRACE_CHECKS, Check, Verdict, Violation
from tcr.probes import read_spec
from tcr.rechunk import Strategy, parse_strategy
from tcr.stream import Decoded, Delta, StreamDecoder, decode_bytes
from tcr.time_limit import check_timeout
from tcr.trace import Placed, Trace

from .show_render import BOUNDARY, printable, render, visible
from .show_render import clip as _clip
from .show_summary import Rows, ShowSummary

__all__ = ["BOUNDARY", "ShowSummary", "printable", "render", "summarize", "visible"]

PREVIEW: Final = 120  # characters of a frame's data kept in the summary

# --- summarize -------------------------------------------------------------------


def summarize(
    path: str | Path,
    *,
    detector: str | None = None,
    tools: list[str] | None = None,
    rechunk: str = "original",
    seed: int = 0,
    timeout: float | None = None,
    dialects: Sequence[str] | None = None,
    empty_tools: str | None = None,
    special_tokens: str | None = None,
    policies: Mapping[str, str] | None = None,
) -> ShowSummary:
    """Everything about one recording; see the module docstring.

    ``dialects``/``empty_tools``/``special_tokens``/``policies``: the claim to judge
    against, over the detector's own; the choices not pinned are read from the probes.
    ``tools`` overrides the recording's declared tools (``[]`` declares none);
    ``rechunk`` must name one chunking (``random`` uses run 0 of ``seed``).
    ``timeout``: seconds each run of the message may take (None: no limit).
    """
    strategy = parse_strategy(rechunk)  # input errors first, before any work
    timeout = check_timeout(timeout)
    chosen = load_detector(
        detector,
        dialects=dialects,
        empty_tools=empty_tools,
        special_tokens=special_tokens,
        policies=policies,
    )
    chosen, _ = read_spec(chosen, timeout=timeout)
    recording = read_recording(path)
    declared = tools if tools is not None else recording.tools
    decoded, error = _decode(recording)
    summary = ShowSummary(
        path=safe_text(str(path)),  # a name that is not UTF-8 as \xNN, printable anywhere
        header=_jsonable(recording.header),
        complete=recording.complete,
        incomplete_reason=recording.incomplete_reason,
        trailer=_jsonable(recording.end),
        frames=Rows(len(recording.frames), partial(_frame_row, recording.frames)),
        decoded=_decoded(decoded, error),
        expect=_jsonable(recording.expect),
        body_bytes=sum(len(_as_bytes(frame.data)) for frame in recording.frames),
    )
    if error is not None:
        return summary
    label, chunks = _chunking(strategy, recording, decoded, seed, chosen.claim)
    content = {
        "text": decoded.text,
        "rechunk": strategy.spec,
        "label": label,
        "recorded_chunks": len(decoded.content),
        "chunks": _chunk_rows(chunks),
    }
    text = "".join(chunks)
    judge = Judge(
        chosen.factory,
        text,
        tools=declared,
        expectation=recording.expect,
        timeout=timeout,
        claim=chosen.claim,
        tool_specs=recording.tool_specs,  # the request's tools, for a factory that takes them
    )
    run, verdict = _judge(judge, chunks)
    return dataclasses.replace(
        summary,
        content=content,
        detector={
            "spec": detector or REFERENCE,
            "tools": declared,
            "claim": chosen.claim.to_map(),
            "judged_against": chosen.claim.judged_line,
            "not_judged": dict(judge.not_judged),
            **run,
        },
        verdict=verdict,
    )


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
        return decoder.result(), f"{safe_text(str(recording.path))}, {where}: {exc}"
    return decoder.result(), None


def _chunking(
    strategy: Strategy, recording: Recording, decoded: Decoded, seed: int, claim: Claim
) -> tuple[str, tuple[str, ...]]:
    if strategy.transport:  # re-split the raw body, then decode it again
        body = b"".join(_as_bytes(frame.data) for frame in recording.frames)
        chunking = _one(strategy, strategy.chunkings(body, runs=1, seed=seed))
        return chunking.label, tuple(decode_bytes(recording.kind, chunking.chunks).content)
    chunkings = strategy.chunkings(
        decoded.text, original=decoded.content, runs=1, seed=seed, claim=claim
    )
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


def _judge(judge: Judge, chunks: tuple[str, ...]) -> tuple[dict[str, Any], Verdict]:
    try:
        run = judge.run(chunks)  # no state per step: show displays none, as replay
        trace = run[1]
        verdict = judge.judge_trace(trace, checks=TRACE_CHECKS)
    except FactoryError as error:  # the factory itself failed: a finding about the detector
        message = str(error)
        crash = {"chunk": None, "offset": None, "error": message}
        found = Verdict((Violation(Check.CRASH, message, None, None, ""),), (Check.CRASH,))
        return {"events": [], "shown": "", "crash": crash}, found
    return _run(trace), verdict + _warm_cold(judge, run)


def _warm_cold(judge: Judge, run: tuple[Detector, Trace]) -> Verdict:
    try:
        return judge.warm_cold(run[1].chunks, fresh_run=run)
    except TcrError as error:  # a seeded or reused detector that fails is a finding too
        return Verdict(
            (Violation(Check.WARM_COLD, str(error), None, None, ""),), (Check.WARM_COLD,)
        )


def _run(trace: Trace) -> dict[str, Any]:
    crash, placed = trace.crash, trace.placed()
    return {
        "events": Rows(len(placed), partial(_event_row, placed, len(trace.chunks))),
        "shown": trace.shown,
        "crash": crash and {"chunk": crash.index, "offset": crash.offset, "error": crash.error},
    }


def _event_row(events: Sequence[Placed], finish_step: int, index: int) -> dict[str, Any]:
    placed = events[index]
    raw, start = placed.event.raw, placed.start
    return {
        "index": index,
        "chunk": placed.step,  # len(chunks) is the finish() step
        "finish": placed.step == finish_step,
        "type": type(placed.event).__name__,
        "start": start,
        "end": None if start is None or raw is None else start + len(raw),
        "fields": dataclasses.asdict(placed.event),
    }


def _chunk_rows(chunks: Sequence[str]) -> Rows:
    starts = array("q", accumulate(map(len, chunks), initial=0))
    return Rows(len(chunks), partial(_chunk_row, chunks, starts))


def _chunk_row(chunks: Sequence[str], starts: Sequence[int], index: int) -> dict[str, Any]:
    return {"index": index, "offset": starts[index], "text": chunks[index]}


def _as_bytes(data: bytes | str) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8")


def _frame_row(frames: Sequence[Frame], index: int) -> dict[str, Any]:
    frame = frames[index]
    previous = frames[index - 1].t_ns if index else 0
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
    return row


def _decoded(decoded: Decoded, error: str | None) -> dict[str, Any]:
    return {
        "framing": decoded.framing,
        "done": decoded.done,
        "finish_reason": decoded.finish_reason,
        "deltas": Rows(len(decoded.deltas), partial(_delta_row, decoded.deltas)),
        "calls": [dataclasses.asdict(call) for call in decoded.calls],
        "reasoning": decoded.reasoning_text,
        "errors": list(decoded.errors),
        "unfinished": decoded.unfinished,
        "error": error,
    }


def _delta_row(deltas: Sequence[Delta], index: int) -> dict[str, Any]:
    """The fields a delta carried (``None``, ``""``, ``False`` and ``()`` left out)."""
    delta = deltas[index]
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
