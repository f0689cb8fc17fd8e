"""The ``tcr matrix --html`` page in a real headless Chromium: cells, sorting, expanding,
printing, and a screenshot.

Debian's ``chromium`` and ``chromium-driver`` packages drive it (``python
scripts/test_tools.py`` installs them, as the README's test command does).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headless import chromium, needs_chromium

from tcr.commands.matrix import build
from tcr.commands.matrix_page import page
from tcr.corpora import ROOT
from tcr.detector.loader import DetectorSpec

pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
pytestmark = needs_chromium

SPLITS_MARKERS = "tcr.detector.broken:per_chunk_markers"
HERMES_ONLY = "parsers.shapes:correct_hermes"
PATHS = [
    ROOT / "regressions" / "format_tool_call_tag_json.msgpack",
    ROOT / "regressions" / "format_tool_call_tag_qwen3_coder.msgpack",
]


@pytest.fixture(scope="module")
def matrix_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("matrix")
    specs = [DetectorSpec.load(SPLITS_MARKERS), DetectorSpec.load(HERMES_ONLY)]
    built = build(specs, PATHS, rows=["hermes", "qwen3_coder"], budget_s=1, save=folder)
    path = folder / "matrix.html"
    path.write_text(page(built), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def _rows(driver: Any) -> list[str]:
    return [row.find_element("css selector", "td").text for row in _body_rows(driver)]


def _body_rows(driver: Any) -> list[Any]:
    return driver.find_elements("css selector", "tbody tr")


def test_the_page_shows_every_cell(browser: Any, matrix_page: Path) -> None:
    browser.get(matrix_page.as_uri())
    heads = [th.text for th in browser.find_elements("css selector", "thead th")]
    assert heads[0] == "dialect" and heads[1] == "recordings"
    assert heads[2].startswith(SPLITS_MARKERS) and heads[3].startswith(HERMES_ONLY)
    assert _rows(browser) == ["hermes", "qwen3_coder"]  # the registry's order
    classes = [
        [td.get_attribute("class") for td in row.find_elements("css selector", "td")[2:]]
        for row in _body_rows(browser)
    ]
    assert classes == [["fail", "pass"], ["fail", "unclaimed"]]


def test_a_heading_sorts_the_rows_and_again_the_other_way(browser: Any, matrix_page: Path) -> None:
    browser.get(matrix_page.as_uri())
    dialect, *_, hermes_only = browser.find_elements("css selector", "thead th")
    dialect.click()
    assert _rows(browser) == ["hermes", "qwen3_coder"]
    assert dialect.get_attribute("aria-sort") == "ascending"
    dialect.click()
    assert _rows(browser) == ["qwen3_coder", "hermes"]
    assert dialect.get_attribute("aria-sort") == "descending"
    hermes_only.click()  # pass, then fail, then not claimed
    assert _rows(browser) == ["hermes", "qwen3_coder"]
    assert dialect.get_attribute("aria-sort") is None


def test_a_failing_cell_opens_to_its_reproducers(browser: Any, matrix_page: Path) -> None:
    browser.get(matrix_page.as_uri())
    details = browser.find_element("css selector", "td.fail details")
    reproducer = details.find_element("css selector", "li code:last-of-type")
    assert details.get_attribute("open") is None and not reproducer.is_displayed()
    details.find_element("css selector", "summary").click()
    assert details.get_attribute("open") is not None and reproducer.is_displayed()
    assert reproducer.text.startswith("tcr replay ")


def test_printed_every_cell_is_open(browser: Any, matrix_page: Path) -> None:
    browser.get(matrix_page.as_uri())
    browser.execute_script("window.dispatchEvent(new Event('beforeprint'))")
    opened = browser.execute_script(
        "return Array.from(document.querySelectorAll('details')).map(d => d.open)"
    )
    assert opened and all(opened)


def test_a_screenshot_of_the_page(browser: Any, matrix_page: Path) -> None:
    browser.get(matrix_page.as_uri())
    shot = matrix_page.with_name("matrix.png")
    assert browser.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000  # a drawn page, not a blank one
