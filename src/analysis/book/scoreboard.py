"""The reproduction scoreboard: every claim of every chapter, from ``results/*.json``.

A default execution writes each chapter's claims (:class:`analysis.core.claims.Claim`,
glued by :func:`analysis.book.report.glue_claims`) to ``results/<chapter>.json``
under ``"claims"``. :func:`claims_table` reads them all into one table and
:func:`scoreboard_markdown` renders it, with a link to the section of each claim;
the book's ``{scoreboard}`` directive (``book/_ext/book_tables.py``) puts it on
the scoreboard page when the site is built.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from analysis.core.claims import STATUSES, Claim
from analysis.core.paths import RESULTS_DIR

CHAPTER_ORDER = ("phrases", "lab", "size", "entropy", "predicting", "distributional")
COLUMNS = ["chapter", "id", "statement", "source_value", "value", "interval", "n", "p", "status",
           "by_design", "reason", "comparison", "section"]


def claims_table(results_dir: Path = RESULTS_DIR) -> pd.DataFrame:
    """One row per claim of every ``results/<chapter>.json``, chapters in book
    order; an empty table (with :data:`COLUMNS`) when no chapter has claims."""
    rows = []
    files = sorted(Path(results_dir).glob("*.json"),
                   key=lambda p: (CHAPTER_ORDER.index(p.stem) if p.stem in CHAPTER_ORDER else 99, p.stem))
    for path in files:
        for data in json.loads(path.read_text()).get("claims", []):
            claim = Claim.from_dict(data)
            row = {c: getattr(claim, c) for c in COLUMNS}
            rows.append(row)
    table = pd.DataFrame(rows, columns=COLUMNS).astype(object)
    return table.where(table.notna(), None)  # a missing field stays None, not NaN


def status_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many claims have each status (every status present, zeros included)."""
    counts = table["status"].value_counts() if len(table) else pd.Series(dtype=int)
    return {s: int(counts.get(s, 0)) for s in STATUSES}


def _number(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    x = float(x)
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.1e}"


def this_run(row) -> str:
    """This run's value as the scoreboard prints it: value [lo, hi], n, p."""
    if row["value"] is None or (isinstance(row["value"], float) and math.isnan(row["value"])):
        return "—"
    text = _number(row["value"])
    if row["interval"]:
        lo, hi = row["interval"]
        text += f" [{_number(lo)}, {_number(hi)}]"
    if row["n"] is not None and not (isinstance(row["n"], float) and math.isnan(row["n"])):
        text += f"; n = {int(row['n'])}"
    if row["p"] is not None and not (isinstance(row["p"], float) and math.isnan(row["p"])):
        text += f"; p = {_number(row['p'])}"
    return text


def _cell(value) -> str:
    text = "" if value is None else str(value)
    for char in "\\|<>*_`":
        text = text.replace(char, "\\" + char)
    return text.replace("\n", " ")


def scoreboard_markdown(table: pd.DataFrame) -> str:
    """The claims as Markdown tables, one per chapter, each claim linked to its
    section with a ``{ref}`` role (a claim with no section gets no link)."""
    if table.empty:
        return "*No chapter has recorded claims in `results/` yet.*"
    counts = status_counts(table)
    parts = ["**" + "; ".join(f"{s}: {n}" for s, n in counts.items()) + f"** (of {len(table)} claims)", ""]
    for chapter, group in table.groupby("chapter", sort=False):
        parts += [f"### {chapter.capitalize()}", "",
                  "| claim | source | this run | status | reason | section |", "|---|---|---|---|---|---|"]
        for _, row in group.iterrows():
            status = f"**{row['status']}**" + (" (by design)" if row["by_design"] else "")
            link = f"{{ref}}`section <{row['section']}>`" if row["section"] else "—"
            claim = f"{_cell(row['statement'])} (`{row['id']}`)"  # the id tells apart one model's claim
            parts.append("| " + " | ".join([claim, _cell(row["source_value"] or "—"),
                                            _cell(this_run(row)), status, _cell(row["reason"]), link]) + " |")
        parts.append("")
    return "\n".join(parts)
