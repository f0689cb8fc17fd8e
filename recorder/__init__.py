"""Capture from live backends (DESIGN §2 "raw first", §3): ``tcr record`` and ``tcr import``.

* :func:`record` / :func:`record_sync` — send one streaming request and record
  the response's body reads as they arrive, with their arrival times;
* :class:`RecordingProxy`, :func:`serve_proxy`, :func:`running_proxy` — a
  transparent reverse proxy that records every streamed response;
* :func:`tee` — record an engine's chunks as they pass through an iterator;
* :func:`import_file` — recordings from ``curl -N`` dumps, JSON lines of
  chunks and HAR files;
* :mod:`~tcr.recorder.redact` — what never reaches the disk;
* :mod:`~tcr.recorder.request` — request bodies for the OpenAI, llama.cpp and
  Ollama APIs.

Every recording is written through :class:`tcr.corpus.RecordingWriter`, one
flushed frame per read: a recorder killed mid-stream leaves a readable file
without a trailer, which reads as incomplete. The HTTP client and server are
aiohttp's.
"""

from __future__ import annotations

from tcr.recorder.capture import Recorded, new_recording_path
from tcr.recorder.client import DEFAULT_TIMEOUT, record, record_sync
from tcr.recorder.errors import RecordError
from tcr.recorder.importers import FORMATS, Imported, import_file
from tcr.recorder.proxy import RecordingProxy, running_proxy, serve_proxy
from tcr.recorder.redact import REDACTED, redact_body, redact_headers, redact_url
from tcr.recorder.request import (
    APIS,
    build_request,
    detect_api,
    load_tools,
    parse_param,
    tool_names,
    with_params,
)
from tcr.recorder.summary import Summary, summarize
from tcr.recorder.tee import tee

__all__ = [
    "APIS",
    "DEFAULT_TIMEOUT",
    "FORMATS",
    "REDACTED",
    "Imported",
    "RecordError",
    "Recorded",
    "RecordingProxy",
    "Summary",
    "build_request",
    "detect_api",
    "import_file",
    "load_tools",
    "new_recording_path",
    "parse_param",
    "record",
    "record_sync",
    "redact_body",
    "redact_headers",
    "redact_url",
    "running_proxy",
    "serve_proxy",
    "summarize",
    "tee",
    "tool_names",
    "with_params",
]
