"""A name as tcr writes it: valid UTF-8 (and valid XML) whatever bytes the file system gave.

A file name is bytes; Python reads one that is no UTF-8 with ``surrogateescape``
(``os.fsdecode(b"bad\\xff.msgpack")`` holds U+DCFF), and such a string cannot be
encoded as UTF-8: written to a report file or a strict terminal it raised
``UnicodeEncodeError`` (SARIF, the matrix page), or came out as an invalid XML
character reference (JUnit). ``safe_text`` is the one form every report writes:
each such byte as ``\\xNN``, as ``bytes.decode(errors="backslashreplace")``
shows it. A command line keeps the name exact instead (``shell_join``: bash's
``$'...'`` quoting), so a reproducer still opens the file.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from typing import IO, Any, Final

__all__ = ["SafeOutput", "safe_data", "safe_text", "shell_join", "xml_text"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# What XML 1.0 forbids besides surrogates (https://www.w3.org/TR/xml/#charsets).
_NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# What a shell word must not hold raw to be pasted back: controls and lone surrogates.
_NOT_SHELL: Final = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte surrogateescape kept: the byte itself
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str) -> str:
    """``text`` with each lone surrogate as an escape (a file name's undecodable byte as
    ``\\xNN``): encodable as UTF-8, unchanged when it already was."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: _escape(m.group()), text)


def xml_text(text: str) -> str:
    """``safe_text`` that is also valid XML 1.0: the control characters XML cannot hold,
    even as a character reference, are escaped the same way."""
    if _NOT_XML.search(text) is None:
        return text
    return _NOT_XML.sub(lambda m: _escape(m.group()), text)


def safe_data(value: Any) -> Any:
    """JSON data (dicts, lists, strings, numbers) with every string ``safe_text``."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_data(v) for v in value]
    return value


def _shell_word(word: str) -> str:
    if _NOT_SHELL.search(word) is None:
        return shlex.quote(word)
    # bash, zsh and ksh read $'\xff' as that byte: the pasted command opens the very file.
    quoted = word.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + _NOT_SHELL.sub(lambda m: _escape(m.group()), quoted) + "'"


def shell_join(argv: Iterable[str]) -> str:
    """``shlex.join``, except that a word holding an undecodable byte or a control character
    is quoted ``$'...'`` with escapes: valid UTF-8, one line, and exact when pasted."""
    return " ".join(_shell_word(word) for word in argv)


class SafeOutput:
    """A text stream (stdout) that writes each string in its ``safe_text`` form: a strict
    UTF-8 terminal is never handed a lone surrogate."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(safe_text(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
