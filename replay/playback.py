"""What ``tcr serve`` sends for one request: a recording as timed writes (sans-I/O).

A :class:`Playback` is the response a recording makes on an endpoint: a status,
a content type and the body as ``Write(t_ns, data)`` values (each one HTTP
chunk, sent ``t_ns`` after the request at speed 1). :func:`playing` gives the
same response with its writes made one at a time as they are taken, which is how
``tcr serve`` sends it: per character, a 1 MB recording is a million writes, and a
response held whole took hundreds of megabytes per client. Three levels of
fidelity:

* **exact** — the recorded reads, byte for byte, when the recording was made on
  the endpoint asked for (``--rechunk original``);
* **content** — the stream decoded to deltas and encoded again for the endpoint,
  each text channel (content, reasoning, each call's arguments) re-split by a
  content strategy: the same text in different deltas, in the same order
  relative to the other channels;
* **transport** — either body re-split into different writes by a ``bytes``
  strategy: the same bytes, so an SSE line, a CRLF or a UTF-8 character can be
  cut in two.

A recording that ended without its trailer (interrupted) plays back as
interrupted: ``complete`` is false and the server cuts the connection after
the last write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import accumulate, groupby
from typing import Any, Final, ParamSpec

from tcr.corpus import Recording
from tcr.errors import DecodeError, TcrError
from tcr.rechunk import Strategy
from tcr.stream import Delta, StreamDecoder
from tcr.stream.encode import SSE_DONE, chat_chunk, compact_json, completion_chunk, sse_event

__all__ = ["ENDPOINTS", "Playback", "Playing", "Write", "playback", "playing"]

#: The endpoints served, and the framing each one speaks.
ENDPOINTS = {"chat": "openai", "completion": "llamacpp"}

_CONTENT_TYPES = {"sse": "text/event-stream", "ndjson": "application/x-ndjson"}

_P = ParamSpec("_P")


@dataclass(frozen=True, slots=True)
class Write:
    """One write of the response body: ``data`` sent ``t_ns`` after the request."""

    t_ns: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Playback:
    status: int
    content_type: str
    writes: tuple[Write, ...]
    complete: bool = True  # False: cut the connection after the last write
    chunking: str = "original"  # which chunking this is, e.g. "random:8#3"

    @property
    def body(self) -> bytes:
        return b"".join(w.data for w in self.writes)


@dataclass(frozen=True, slots=True)
class Playing:
    """A :class:`Playback` whose writes are made as they are taken (once): everything
    the response's head says is known, and the body is not made yet."""

    status: int
    content_type: str
    writes: Iterator[Write]
    complete: bool = True
    chunking: str = "original"


def playing(
    recording: Recording,
    endpoint: str,
    *,
    strategy: Strategy | None = None,
    stream: bool = True,
    turn: int = 0,
    seed: int = 0,
) -> Playing:
    """The response ``recording`` makes on ``endpoint`` ("chat" or "completion").

    ``strategy`` re-splits it (``None`` or ``original``: as recorded); ``turn``
    picks which of the strategy's chunkings (the n-th request gets the n-th,
    e.g. ``random:8#n``), ``seed`` seeds the random ones. ``stream=False``
    answers with one JSON object, as the endpoint does without streaming.
    Raises ``TcrError`` naming the recording when it cannot be decoded; that is
    found before it returns, so taking the writes raises nothing.

    What is held while the writes are taken: the decoded deltas and each text
    channel's text (for a transport strategy, the body before it is re-split),
    never the writes made so far nor a chunking: its chunks are cut as they are
    sent (``Strategy.nth``).
    """
    transport = strategy is not None and strategy.transport
    content = None if strategy is None or transport or strategy.kind == "original" else strategy
    exact = content is None and recording.kind == "sse"
    # A stream that cannot be decoded is sent as recorded: it is what the server said.
    exact = exact and _framing(recording) in (ENDPOINTS[endpoint], None)
    if stream and exact:
        played = _exact(recording)
    else:
        if not stream:
            return _whole(recording, endpoint)
        # Decoded once here (what cannot be decoded raises now) for each channel's text,
        # and again as the writes are taken: a client holds no delta of the recording.
        texts, last = _channel_texts(_items(_decode(recording)), keep=content is not None)
        items = partial(_items_of, recording, last)
        label = "original"
        pieces: Iterable[_Text | _Mark] = items()
        if content is not None:
            pieces, label = _rechunked(items(), texts, content, turn, seed)
        writes = _encoded(pieces, endpoint, recording.id)
        played = Playing(200, _CONTENT_TYPES["sse"], writes, recording.complete, label)
    if strategy is not None and transport:
        played = _retransported(played, strategy, turn, seed)
        if not exact:  # tcr replay --layer transport splits the recorded body, not this one
            return replace(played, chunking=f"{played.chunking} of the re-encoded stream")
    return played


def _every_write_made(playing: Callable[_P, Playing]) -> Callable[_P, Playback]:
    def playback(*args: _P.args, **kwargs: _P.kwargs) -> Playback:
        """The response :func:`playing` gives, every write made (to compare, to join)."""
        played = playing(*args, **kwargs)
        writes = tuple(played.writes)
        return Playback(
            played.status, played.content_type, writes, played.complete, played.chunking
        )

    return playback


playback = _every_write_made(playing)


# --- exact ------------------------------------------------------------------------------


def _framing(recording: Recording) -> str | None:
    """The framing of the first payload, without decoding the whole stream."""
    decoder = StreamDecoder(recording.kind)
    try:
        for frame in recording.frames:
            decoder.feed(frame.data)
            if decoder.framing is not None:
                return decoder.framing
    except DecodeError:
        return None
    return None


def _exact(recording: Recording) -> Playing:
    """The recorded status, content type and reads (an error answer too, as it came)."""
    response = recording.header.get("response")
    response = response if isinstance(response, dict) else {}
    status = response.get("status")
    headers = response.get("headers")
    recorded_types = [
        value
        for name, value in (headers.items() if isinstance(headers, dict) else ())
        if isinstance(name, str) and name.lower() == "content-type" and isinstance(value, str)
    ]
    writes = (Write(f.t_ns, _bytes(f.data)) for f in recording.frames)
    return Playing(
        status if isinstance(status, int) and 100 <= status < 600 else 200,
        recorded_types[0] if recorded_types else _CONTENT_TYPES[recording.kind],
        writes,
        recording.complete,
    )


def _bytes(data: bytes | str) -> bytes:
    return data if isinstance(data, bytes) else data.encode("utf-8")


# --- decoded: deltas as channel items ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Text:
    """A piece of one text channel: "content", "reasoning" or ("args", call index)."""

    t_ns: int
    channel: str | tuple[str, int]
    text: str


@dataclass(frozen=True, slots=True)
class _Mark:
    """Everything else, in its place: role, a call's id and name, finish, error, done."""

    t_ns: int
    what: str
    value: Any = None


def _decode(recording: Recording) -> Iterator[tuple[int, Delta]]:
    """The recording's deltas with their times, decoded as they are taken."""
    # keep_deltas=False: a delta per event was most of what an answer held (issue 36)
    decoder = StreamDecoder(recording.kind, keep_deltas=False)
    where = "start of stream"
    try:
        for index, frame in enumerate(recording.frames):
            where = f"frame {index}"
            for delta in decoder.feed(frame.data):
                yield frame.t_ns, delta
        where = "end of stream"
        last = recording.frames[-1].t_ns if recording.frames else 0
        for delta in decoder.finish():
            yield last, delta
    except DecodeError as error:
        raise TcrError(f"recording {recording.id!r}, {where}: {error}") from None


def _items_of(recording: Recording, last: int) -> Iterator[_Text | _Mark]:
    """The recording's items as they are decoded; engine chunks get the end marks they lack."""
    yield from _items(_decode(recording))
    if recording.kind == "chunks" and recording.complete:  # engine chunks have no end marker
        yield from (_Mark(last, "finish", "stop"), _Mark(last, "done"))


def _channel_texts(
    items: Iterable[_Text | _Mark], *, keep: bool = True
) -> tuple[dict[str | tuple[str, int], str], int]:
    """Each text channel's whole text (``keep``: else none, only a re-chunking needs
    them), and the time of the last item."""
    parts: dict[str | tuple[str, int], list[str]] = {}
    last = 0
    for item in items:
        last = item.t_ns
        if keep and isinstance(item, _Text):
            parts.setdefault(item.channel, []).append(item.text)
    return {channel: "".join(texts) for channel, texts in parts.items()}, last


def _items(timed: Iterable[tuple[int, Delta]]) -> Iterator[_Text | _Mark]:
    next_index = 0
    for t, delta in timed:
        if delta.role:
            yield _Mark(t, "role", delta.role)
        if delta.reasoning:
            yield _Text(t, "reasoning", delta.reasoning)
        if delta.content:
            yield _Text(t, "content", delta.content)
        for fragment in delta.tool_calls:
            index = next_index if fragment.index is None else fragment.index
            next_index = max(next_index, index + 1)
            if fragment.id or fragment.name:
                yield _Mark(t, "call", (index, fragment.id, fragment.name))
            if fragment.arguments:
                yield _Text(t, ("args", index), fragment.arguments)
        if delta.finish_reason is not None:
            yield _Mark(t, "finish", delta.finish_reason)
        if delta.error is not None:
            yield _Mark(t, "error", delta.error)
        if delta.done:
            yield _Mark(t, "done")


def _rechunked(
    items: Iterable[_Text | _Mark],
    texts: Mapping[str | tuple[str, int], str],
    strategy: Strategy,
    turn: int,
    seed: int,
) -> tuple[Iterator[_Text | _Mark], str]:
    """Each channel's text (``texts``) cut where ``strategy`` cuts it, and where another
    item interrupts it; pieces take the time of the recorded piece they start in. The
    label is the content's chunking, as ``tcr replay`` names it."""
    chunkings = {ch: strategy.nth(text, turn, seed=seed) for ch, text in texts.items()}
    # Each chunk's end, as it is cut: per character, the chunks and their splits were
    # a million strings and ints per client. The last end (the text's) is never inside.
    cuts = {ch: _Cuts(accumulate(map(len, chunks))) for ch, (_, chunks) in chunkings.items()}
    if strategy.kind == "splits":  # offsets into the content: a shorter channel keeps its own
        lengths = {ch: len(text) for ch, text in texts.items()}
        cuts = {ch: _Cuts(o for o in strategy.offsets if o < lengths[ch]) for ch in texts}
    label = chunkings["content"][0] if "content" in chunkings else strategy.spec
    return _cut(items, cuts), label


class _Cuts:
    """One channel's cut offsets, taken in order as the runs of that channel go by."""

    def __init__(self, offsets: Iterator[int]) -> None:
        self._offsets = offsets
        self._next = next(offsets, None)

    def inside(self, start: int, end: int) -> Iterator[int]:
        """The cuts strictly between ``start`` and ``end``; those up to ``start`` are dropped
        (a cut where another item interrupted the channel is a cut already)."""
        while self._next is not None and self._next < end:
            if self._next > start:
                yield self._next
            self._next = next(self._offsets, None)


def _cut(
    items: Iterable[_Text | _Mark], cuts: dict[str | tuple[str, int], _Cuts]
) -> Iterator[_Text | _Mark]:
    offset: dict[str | tuple[str, int], int] = {}
    for channel, group in groupby(items, key=_channel):
        if channel is None:
            yield from group
            continue
        start = offset.get(channel, 0)
        run = (piece for piece in group if isinstance(piece, _Text))
        yield from _pieces(run, start, cuts[channel], offset, channel)


def _channel(item: _Text | _Mark) -> str | tuple[str, int] | None:
    return item.channel if isinstance(item, _Text) else None


def _pieces(
    run: Iterable[_Text],
    start: int,
    cuts: _Cuts,
    offset: dict[str | tuple[str, int], int],
    channel: str | tuple[str, int],
) -> Iterator[_Text]:
    """One run of a channel's recorded pieces, cut at ``cuts``, as the pieces go by: each
    piece made takes the time of the recorded piece it starts in (nothing of the run is
    held but the piece being made). ``offset[channel]`` ends at the run's end."""
    pending: list[str] = []  # the piece being made
    t_ns = 0
    position = start
    for recorded in run:
        text, end = recorded.text, position + len(recorded.text)
        begin = 0
        # cuts up to and at this piece's end; one at the run's end makes no empty piece
        for cut in cuts.inside(start, end + 1):
            if not pending:
                t_ns = recorded.t_ns
            pending.append(text[begin : cut - position])
            yield _Text(t_ns, channel, "".join(pending))
            pending.clear()
            begin = cut - position
        if begin < len(text):
            if not pending:
                t_ns = recorded.t_ns
            pending.append(text[begin:])
        position = end
    offset[channel] = position
    if pending:
        yield _Text(t_ns, channel, "".join(pending))


# --- encoding for an endpoint ---------------------------------------------------------------


def _encoded(items: Iterable[_Text | _Mark], endpoint: str, model: str) -> Iterator[Write]:
    event = _chat_event if endpoint == "chat" else _completion_event
    stopped = False
    for item in items:
        if isinstance(item, _Mark) and item.what == "error":
            data: bytes | None = sse_event({"error": {"message": item.value}})
        elif (
            endpoint == "completion" and isinstance(item, _Mark) and item.what in ("finish", "done")
        ):
            # llama.cpp ends a stream with one "stop": true chunk, and no [DONE].
            data = None if stopped else event(item, model)
            stopped = True
        else:
            data = event(item, model)
        if data is not None:
            yield Write(item.t_ns, data)


def _chat_event(item: _Text | _Mark, model: str) -> bytes:
    delta: dict[str, Any] = {}
    finish = None
    if isinstance(item, _Text):
        if item.channel == "content":
            delta["content"] = item.text
        elif item.channel == "reasoning":
            delta["reasoning_content"] = item.text
        else:
            call = {"index": item.channel[1], "function": {"arguments": item.text}}
            delta["tool_calls"] = [call]
    elif item.what == "role":
        delta["role"] = item.value
    elif item.what == "call":
        index, call_id, name = item.value
        call = {"index": index, "type": "function", "function": {"name": name, "arguments": ""}}
        delta["tool_calls"] = [{"id": call_id, **call} if call_id else call]
    elif item.what == "finish":
        finish = item.value
    elif item.what == "done":
        return SSE_DONE
    return sse_event(chat_chunk(delta, finish, chunk_id="chatcmpl-tcr", model=model, created=0))


def _completion_event(item: _Text | _Mark, model: str) -> bytes | None:
    if isinstance(item, _Text):
        # /completion has no reasoning or tool-call fields: only the content goes.
        return sse_event(completion_chunk(item.text)) if item.channel == "content" else None
    if item.what in ("finish", "done"):
        stop_type = item.value if item.what == "finish" else "eos"
        return sse_event(completion_chunk("", stop=True, stop_type=stop_type, model=model))
    return None


# --- without streaming ----------------------------------------------------------------------


def _whole(recording: Recording, endpoint: str) -> Playing:
    said = _Message(_items(_decode(recording)))
    t_ns = said.last
    if said.errors:
        body: dict[str, Any] = {"error": {"message": said.errors[0]}}
        return Playing(500, "application/json", iter([Write(t_ns, compact_json(body).encode())]))
    # The content is sent in pieces (its JSON made a piece at a time): the body whole
    # was the content twice more, as a JSON string and as its bytes.
    if endpoint == "completion":
        body = {"content": _CONTENT, "stop": True, "stop_type": said.finish or "eos"}
    else:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": _CONTENT if said.content else None,
        }
        if said.reasoning:
            message["reasoning_content"] = said.reasoning
        if said.calls:
            message["tool_calls"] = said.calls
        body = {
            "id": "chatcmpl-tcr",
            "object": "chat.completion",
            "created": 0,
            "model": recording.id,
            "choices": [{"index": 0, "message": message, "finish_reason": said.finish or "stop"}],
        }
    made, marker = compact_json(body), compact_json(_CONTENT)
    if made.count(marker) != 1:  # a recording's id or text spells the marker: made whole
        made = made.replace(marker, compact_json(said.content))
    head, _, tail = made.partition(marker)
    return Playing(200, "application/json", _json_around(t_ns, head, said.content, tail))


# Stands for the content in the body made around it, where its JSON form is found.
_CONTENT: Final = "\x00tcr-content\x00"
_PIECE: Final = 1 << 16  # characters of content per write of a body sent in pieces


def _json_around(t_ns: int, head: str, content: str, tail: str) -> Iterator[Write]:
    """``head``, ``content`` as a JSON string (made a piece at a time), ``tail``."""
    if not tail:  # no place for the content (it is null): the body is the head
        yield Write(t_ns, head.encode())
        return
    yield Write(t_ns, (head + '"').encode())
    for start in range(0, len(content), _PIECE):
        yield Write(t_ns, compact_json(content[start : start + _PIECE])[1:-1].encode())
    yield Write(t_ns, ('"' + tail).encode())


class _Message:
    """The decoded items of a stream, summed up as one message as they go by."""

    def __init__(self, items: Iterable[_Text | _Mark]) -> None:
        content: list[str] = []
        reasoning: list[str] = []
        self.errors: list[str] = []
        self.finish: str | None = None
        self.last = 0
        calls: dict[int, dict[str, Any]] = {}
        for item in items:
            self.last = item.t_ns
            if isinstance(item, _Text):
                if item.channel == "content":
                    content.append(item.text)
                elif item.channel == "reasoning":
                    reasoning.append(item.text)
                elif isinstance(item.channel, tuple):
                    call = calls.setdefault(item.channel[1], _no_call())
                    call["arguments"].append(item.text)
            elif item.what == "call":
                index, call_id, name = item.value
                call = calls.setdefault(index, _no_call())
                call["id"] = call["id"] or call_id
                call["name"] = call["name"] or name
            elif item.what == "error":
                self.errors.append(item.value)
            elif item.what == "finish":
                self.finish = item.value
        self.content = "".join(content)
        del content
        self.reasoning = "".join(reasoning)
        self.calls = [
            {
                "id": call["id"] or f"call_{index}",
                "type": "function",
                "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
            }
            for index, call in sorted(calls.items())
        ]


def _no_call() -> dict[str, Any]:
    return {"id": None, "name": None, "arguments": []}


# --- transport ------------------------------------------------------------------------------


def _retransported(played: Playing, strategy: Strategy, turn: int, seed: int) -> Playing:
    """The same body bytes in the writes ``strategy`` makes; each write is sent at
    the time of the recorded write its first byte came from. The chunking needs the
    whole body, so the body is made here; the writes of the chunks are made as taken."""
    times: list[int] = []
    ends: list[int] = []
    parts: list[bytes] = []
    for write in played.writes:
        times.append(write.t_ns)
        ends.append((ends[-1] if ends else 0) + len(write.data))
        parts.append(write.data)
    label, chunks = strategy.nth(b"".join(parts), turn, seed=seed)
    return Playing(
        played.status,
        played.content_type,
        _timed_chunks(chunks, times, ends),
        played.complete,
        label,
    )


def _timed_chunks(
    chunks: Iterable[bytes], times: Sequence[int], ends: Sequence[int]
) -> Iterator[Write]:
    position = recorded = 0
    for chunk in chunks:
        while ends[recorded] <= position:
            recorded += 1
        yield Write(times[recorded], chunk)
        position += len(chunk)
