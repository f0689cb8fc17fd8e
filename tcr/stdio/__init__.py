"""Detectors in other processes: a JSON-lines protocol over stdin and stdout (ARCHITECTURE.md §10).

One JSON object per line each way; every request gets exactly one answer line,
and answers come in the order of the requests.

Requests: ``{"op": "new", "tools": [..] | null}`` (a fresh detector for a new
message; it may also carry ``"dialects"``, ``"empty_tools"`` and ``"special_tokens"``,
the claim asked for by ``--dialect``/``--empty-tools``/``--special-tokens``, which a
harness may use or ignore),
``{"op": "feed", "chunk": "..."}``, ``{"op": "finish"}``,
``{"op": "reset"}``, ``{"op": "state"}`` (optional).
Responses: ``{"events": [ev, ...]}`` for feed/finish, ``{"ok": true}`` for
new/reset (new's may add ``"claim": {"dialects": [..] | null, "empty_tools"}``, and
``"special_tokens": "whole"`` for an engine-side parser that sees token ids,
what the harness's detector parses; a harness that says nothing claims every
dialect), ``{"state": {...}}`` for state, ``{"error": "..."}`` for a failure
(``"unsupported"`` for an op the harness does not implement).
An event is ``{"type": "text", "text"}``, ``{"type": "tool_call", "name",
"arguments", "raw", "format"}``, ``{"type": "reasoning", "text", "raw",
"format"}`` or ``{"type": "rejected", "raw", "content", "format", "reason"}``;
``raw`` may be ``null``.

The client pipelines: when it knows a message's chunks up front (a replay) it
sends ``feed`` requests ahead of their answers, up to ``IN_FLIGHT`` (64) of
them and about 64 KiB, so a chunk does not cost a pipe round trip. A harness
needs nothing for that but to answer each line in turn and to flush its answers
before it waits for more input (flushing each one is simplest).

Timing: the client waits ``timeout`` seconds for each answer (from when it
starts waiting for it), so a harness that holds its answers until it would wait
for input has ``timeout`` for the 64 requests it may have in hand. The first
answer a process gives (to the first ``new``) may take ``START_UP`` (30)
seconds, or ``timeout`` if that is longer: an interpreter starting and
importing a parser on a busy machine is not a hang, and the per-answer timeout
can stay short. The whole message has ``timeout`` too, plus ``PER_REQUEST`` (2 ms)
for each request it sent: a harness that answers slowly costs one timeout a
message, not one an answer. Over either, ``DetectorTimeout`` is raised: a crash
found at that chunk and not shrunk, as an in-process detector over ``--timeout``.

``python -m tcr.stdio package.module:factory`` serves any in-process
detector this way (the reference side; it writes answers in batches and
flushes before it reads on). ``command_factory(cmd)`` is the client: one
process, started lazily, one ``new`` per detector; its detectors' ``feed_many``
is the pipelined path, which ``tcr.trace.run_trace`` takes when it is offered.
A process that exits, hangs past the timeout or prints a line that is not the
expected JSON makes ``feed``/``finish`` raise ``DetectorProcessError`` (in
``feed_many``: at that chunk's result), which a replay reports as a crash with
the chunk index; the process is killed and restarted on the next ``new``. When
it exited or hung with several requests outstanding, the chunk that did it is
not known (a harness may hold answers back until it would wait for input): the
message so far is replayed on a fresh process and the outstanding chunks are
fed one at a time, so the one named is the one that fails alone.

A harness may be buggy or hostile; what it costs tcr stays bounded. Answers to
one message longer in all than ``LINE_LIMIT`` (16 MiB) plus 8 bytes per byte of
the requests sent since its ``new`` are garbage (a crash at its chunk): reading
stops there and the process is killed. Its events are bounded as an in-process
detector's are (``tcr.time_limit.event_limit``). Only the last ``STDERR_TAIL`` (64 KiB)
of its stderr is kept, for the last line a crash report quotes. It runs in a
session (process group) of its own, and the group is killed when the process
is closed, hangs or crashes, so processes it started end with it.

Modules: :mod:`~tcr.stdio.server` (the reference side), :mod:`~tcr.stdio.client`,
``_pipe`` (the non-blocking pipes, timeouts) and ``_wire`` (the JSON lines). All
of it is I/O, so it lives outside the pure ``tcr.detector`` (pyproject.toml's
import contracts say so).
"""

from tcr.stdio._pipe import (
    IN_FLIGHT,
    LINE_LIMIT,
    PER_REQUEST,
    START_UP,
    STDERR_TAIL,
    DetectorProcessError,
    DetectorTimeout,
)
from tcr.stdio._wire import event_from_json, event_to_json
from tcr.stdio.client import CommandFactory, ProcessDetector, command_factory
from tcr.stdio.server import main, serve

__all__ = [
    "IN_FLIGHT",
    "LINE_LIMIT",
    "PER_REQUEST",
    "START_UP",
    "STDERR_TAIL",
    "CommandFactory",
    "DetectorProcessError",
    "DetectorTimeout",
    "ProcessDetector",
    "command_factory",
    "event_from_json",
    "event_to_json",
    "main",
    "serve",
]
