"""Write one benchmark's section into benchmarks/RESULTS.md, leaving the others alone."""

from __future__ import annotations

import platform
import re
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADER = (
    "# Benchmark results\n\n"
    "Each section is written by the script named in it (`python benchmarks/NAME.py`).\n"
    "Targets are ratios against a baseline measured in the same run, so a busy\n"
    "machine slows both sides alike.\n"
)


def write_section(title: str, body: str) -> None:
    """Replace the ``## title`` section of RESULTS.md (or append it)."""
    text = RESULTS.read_text() if RESULTS.exists() else HEADER
    stamp = (
        f"_{time.strftime('%Y-%m-%d', time.gmtime())}, Python {platform.python_version()}, "
        f"{platform.machine()}, {sys.platform}_\n\n"
    )
    section = f"## {title}\n\n{stamp}{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text)
    else:
        text = text.rstrip() + "\n\n" + section
    RESULTS.write_text(text.rstrip() + "\n")
