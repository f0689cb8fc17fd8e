"""Recording format version 1 (ARCHITECTURE.md §3): one msgpack stream per ``*.msgpack`` file.

Objects, in order: a header map; frames ``[t_ns, data]`` or ``[t_ns, data, meta]``;
on close a trailer ``{"end": {...}}``; optionally an expectation ``{"expect": {...}}``.

Frame ``data`` must fit the recording's kind: ``bytes`` for ``sse`` and ``ndjson``
(raw body bytes, exactly as read), ``str`` for ``chunks`` (engine text chunks).
Anything else is refused on write and on read, so consumers never guess.

The writer flushes after every object, so a killed recorder leaves a readable
file that reads as incomplete. The reader streams: memory is one object, not
the file. A truncated final object is the end of an interrupted recording; every
other defect raises ``CorpusError`` naming the file and the byte offset of the
object at fault.

Modules, all private; the public API is re-exported here:

* ``_model`` — the format's constants, ``Frame``, ``Recording`` and the checks
  of each object that reader and writer share (``nests_too_deep`` is public, so
  code that builds a header from outside input can refuse it first);
* ``_reader`` — ``RecordingReader``, ``read_recording``, ``iter_recordings``,
  ``find_recordings``;
* ``_writer`` — ``new_header``, ``RecordingWriter``, ``write_recording``,
  ``write_expectation``;
* ``_msgpack`` — bounded msgpack objects from a file, each with its offset.
"""

from __future__ import annotations

from tcr.corpus._model import (
    FORMAT_VERSION,
    KINDS,
    MAX_NESTING,
    MAX_T_NS,
    ORIGINS,
    Frame,
    Recording,
    nests_too_deep,
)
from tcr.corpus._msgpack import MAX_BLOB, MAX_ITEMS
from tcr.corpus._reader import (
    RecordingReader,
    find_recordings,
    iter_recordings,
    read_recording,
)
from tcr.corpus._writer import RecordingWriter, new_header, write_expectation, write_recording

__all__ = [
    "FORMAT_VERSION",
    "KINDS",
    "MAX_BLOB",
    "MAX_ITEMS",
    "MAX_NESTING",
    "MAX_T_NS",
    "ORIGINS",
    "Frame",
    "Recording",
    "RecordingReader",
    "RecordingWriter",
    "find_recordings",
    "iter_recordings",
    "nests_too_deep",
    "new_header",
    "read_recording",
    "write_expectation",
    "write_recording",
]
