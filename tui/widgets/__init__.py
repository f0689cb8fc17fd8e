"""The debugger's widgets, one module per area of the screen."""

from __future__ import annotations

from .detail import DetailPane, DetailView
from .status import StatusBar
from .steps import StepsTable
from .stream import StreamView

__all__ = ["DetailPane", "DetailView", "StatusBar", "StepsTable", "StreamView"]
