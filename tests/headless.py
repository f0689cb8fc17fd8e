"""A real headless Chromium for the tests that open a page: the matrix page and the docs site.

Debian's ``chromium`` and ``chromium-driver`` packages drive it (``python
scripts/test_tools.py`` installs them, as the README's test command does); where they
are absent, ``needs_chromium`` skips and says how to get them.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM", "DRIVER", "chromium", "needs_chromium"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="Chromium is not installed: apt-get install -y chromium chromium-driver "
    "(python scripts/test_tools.py)",
)


@contextmanager
def chromium(profile: Path, *, console_log: bool = False) -> Iterator[Any]:
    """A headless Chromium with its profile in ``profile``; ``console_log``: the page's
    console messages can be read (``driver.get_log("browser")``)."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run", "--window-size=1100,700", f"--user-data-dir={profile}",
    ):  # fmt: skip
        options.add_argument(flag)
    if console_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
