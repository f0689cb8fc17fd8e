"""The system under test: events, the dialect table and the reference ``StreamDetector``."""

from __future__ import annotations

from tcr.detector.core import StreamDetector
from tcr.detector.events import Detector, Event, Reasoning, Rejected, Text, ToolCall
from tcr.detector.formats import FORMATS, HOLDBACK_BOUND, Format, format_for_model

__all__ = [
    "FORMATS",
    "HOLDBACK_BOUND",
    "Detector",
    "Event",
    "Format",
    "Reasoning",
    "Rejected",
    "StreamDetector",
    "Text",
    "ToolCall",
    "format_for_model",
]
