"""Capture from live backends: ``tcr record`` and ``tcr import`` (ARCHITECTURE.md §2, §3, §14).

* :func:`record` / :func:`record_sync` — send one streaming request and record
  the response's body reads as they arrive, with their arrival times;
* :class:`RecordingProxy`, :func:`serve_proxy`, :func:`running_proxy` — a
  transparent reverse proxy that records every streamed response;
* :func:`tee` — record an engine's chunks as they pass through an iterator;
* :func:`import_file` — recordings from ``curl -N`` dumps, JSON lines of
  chunks and HAR files;
* :func:`record_session` — ``tcr record``: the request from its options, the
  recordings' paths, the loop that makes them or the proxy, their summaries;
* :mod:`~tcr.recorder.render` — a recording's summary, as text or JSON;
* :mod:`~tcr.recorder.redact` — what never reaches the disk;
* :mod:`~tcr.recorder.request` — request bodies for the OpenAI, llama.cpp and
  Ollama APIs.

Every recording is written through :class:`tcr.corpus.RecordingWriter`, one
flushed frame per read: a recorder killed mid-stream leaves a readable file
without a trailer, which reads as incomplete. The HTTP client and server are
aiohttp's.
"""

from __future__ import annotations

from tcr.recorder.capture import Recorded, new_recording_path, recording_paths
from tcr.recorder.client import DEFAULT_TIMEOUT, record, record_sync
from tcr.recorder.errors import RecordError
from tcr.recorder.importers import FORMATS, Imported, import_file
from tcr.recorder.proxy import RecordingProxy, running_proxy, serve_proxy
from tcr.recorder.redact import REDACTED, redact_body, redact_headers, redact_url
from tcr.recorder.render import print_summaries, recorded_line, render_summary, summaries_json
from tcr.recorder.request import (
    APIS,
    build_request,
    detect_api,
    load_tools,
    parse_param,
    request_headers,
    tool_names,
    with_params,
)
from tcr.recorder.session import DEFAULT_OUT, RecordOptions, Runner, parse_labels, record_session
from tcr.recorder.summary import Summary, summarize
from tcr.recorder.tee import tee

__all__ = [
    "APIS",
    "DEFAULT_OUT",
    "DEFAULT_TIMEOUT",
    "FORMATS",
    "REDACTED",
    "Imported",
    "RecordError",
    "RecordOptions",
    "Recorded",
    "RecordingProxy",
    "Runner",
    "Summary",
    "build_request",
    "detect_api",
    "import_file",
    "load_tools",
    "new_recording_path",
    "parse_labels",
    "parse_param",
    "print_summaries",
    "record",
    "record_session",
    "record_sync",
    "recorded_line",
    "recording_paths",
    "redact_body",
    "redact_headers",
    "redact_url",
    "render_summary",
    "request_headers",
    "running_proxy",
    "serve_proxy",
    "summaries_json",
    "summarize",
    "tee",
    "tool_names",
    "with_params",
]
