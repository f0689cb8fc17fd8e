"""``tcr matrix --html``: the matrix as one self-contained page.

No network: the style and the script are in the page. A click on a column
heading sorts the rows by it (again: the other way); a failing cell opens to its
findings and their reproducers; printed, every cell is open.
"""

from __future__ import annotations

import html
import time

from tcr.commands.matrix_cells import NOT_CLAIMED, Cell, Matrix, plural

__all__ = ["page"]

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: .3em .6em; vertical-align: top; text-align: left; }
th { background: #eee; cursor: pointer; user-select: none; }
th small { display: block; font-weight: normal; color: #555; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
td.pass { background: #e6f4e6; }
td.fail { background: #fbe3e3; }
td.unclaimed { color: #777; background: #f6f6f6; }
td.count { text-align: right; }
code { font: 12px ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
details ul { margin: .3em 0; padding-left: 1.2em; }
@media print { th { cursor: auto; } body { margin: 0; } }
"""

_SCRIPT = """
document.querySelectorAll("th").forEach((th, column) => {
  th.addEventListener("click", () => {
    const body = th.closest("table").tBodies[0];
    const ascending = th.getAttribute("aria-sort") !== "ascending";
    document.querySelectorAll("th").forEach(other => other.removeAttribute("aria-sort"));
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const key = row => row.cells[column].dataset.sort;
    const rows = Array.from(body.rows).sort((a, b) => {
      const x = key(a), y = key(b);
      const order = isNaN(x) || isNaN(y) ? x.localeCompare(y) : x - y;
      return ascending ? order : -order;
    });
    rows.forEach(row => body.appendChild(row));
  });
});
window.addEventListener("beforeprint", () => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
});
"""


def _cell(cell: Cell) -> str:
    if cell.state == NOT_CLAIMED:
        return '<td class="unclaimed" data-sort="2">not claimed</td>'
    counts = f"{plural(cell.recordings, 'recording')}, {cell.examples:,} generated"
    if not cell.findings:
        return f'<td class="pass" data-sort="0">pass<br><small>{counts}</small></td>'
    items = "".join(
        f"<li><code>{html.escape(f.label)}</code> ({html.escape(f.counts)})"
        f"<br><code>{html.escape(f.reproducer)}</code></li>"
        for f in cell.findings
    )
    return (
        f'<td class="fail" data-sort="1"><details><summary>'
        f"{plural(len(cell.findings), 'finding')}</summary><ul>{items}</ul></details>"
        f"<small>{counts}</small></td>"
    )


def page(matrix: Matrix) -> str:
    """The whole page, as text."""
    heads = "".join(
        f"<th>{html.escape(name)}<small>{html.escape(claim)}</small></th>"
        for name, claim in zip(matrix.columns, matrix.claims, strict=True)
    )
    rows = "".join(
        f'<tr><td data-sort="{html.escape(row)}">{html.escape(row)}</td>'
        f'<td class="count" data-sort="{matrix.recordings.get(row, 0)}">'
        f"{matrix.recordings.get(row, 0)}</td>"
        + "".join(_cell(matrix.cell(row, column)) for column in matrix.columns)
        + "</tr>"
        for row in matrix.rows
    )
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    found = plural(matrix.findings, "finding")
    if matrix.causes != matrix.findings:
        found += f" ({plural(matrix.causes, 'cause')})"
    said = (
        f"{plural(len(matrix.rows), 'dialect')} &times; {plural(len(matrix.columns), 'detector')}"
        f", {found}; fuzz budget {matrix.budget_s:g} s per cell, seed {matrix.seed}; made "
        f"{made} in {matrix.seconds:.0f} s."
    )
    judged = "".join(
        f'<p class="judged">{html.escape(name)}: {html.escape(line)}</p>'
        for name, line in zip(matrix.columns, matrix.judged, strict=False)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>tcr matrix</title>"
        f"<style>{_STYLE}</style></head><body><h1>tcr matrix</h1>{judged}<p>{said}</p>"
        f"<table><thead><tr><th>dialect</th><th>recordings</th>{heads}</tr></thead>"
        f"<tbody>{rows}</tbody></table><script>{_SCRIPT}</script></body></html>\n"
    )
