"""The reproduction scoreboard: every claim of every chapter, from ``results/*.json``.

A default execution writes each chapter's claims (:class:`analysis.core.claims.Claim`,
glued by :func:`analysis.book.report.glue_claims`) to ``results/<chapter>.json``
under ``"claims"``. :func:`claims_table` reads them all into one table and
:func:`scoreboard_markdown` renders what a referee reads:

1. per source, its headline claims (:data:`HEADLINES`) with their statuses;
2. per chapter, the counts of its source claims per status, then two tables: the
   source's claims and the book's extensions, each row with its unit and number of
   units, its null (kind and value), its negative control, the by-design and
   mechanical marks, the status and its reason, and a link to the section.

:func:`counts_sentence` words a chapter's (or the book's) counts of source claims
per status, for the introduction and the chapter summaries. The book's
``{scoreboard}``, ``{claim-counts}`` and ``{by-design}`` directives
(``book/_ext/book_tables.py``) put them on the pages when the site is built.
"""

from __future__ import annotations

import fnmatch
import json
import math
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from analysis.core import claim_text
from analysis.core.claim_text import STATUS_WORDS
from analysis.core.claims import EXTENSION_STATUSES, SOURCE, SOURCE_STATUSES, STATUSES, Claim
from analysis.core.paths import RESULTS_DIR

CHAPTER_ORDER = ("phrases", "lab", "size", "entropy", "predicting", "distributional")
COLUMNS = ["chapter", "id", "kind", "statement", "source_value", "value", "interval", "n", "n_units",
           "unit", "p", "p_adjusted", "family", "null_kind", "null_value", "control_value", "control_reason",
           "status", "by_design", "by_design_reason", "mechanical", "reason", "comparison", "section"]
#: each source's headline claims (claim-id patterns), the ones a referee reads first
HEADLINES = {
    "phrases": ("Chinese state-coordinated media phrases (Qiu et al.)", ("state_media_gap_*",)),
    "size": ("model size from popular-text memorization", ("gap_*", "lab_law", "lab_loo_band")),
    "entropy": ("set-level entropy and dataset inference", ("em_linearity", "di_lab", "pooling")),
    "predicting": ("which injected sequences are memorized", ("e1_three", "e2_recency", "e3_three_full")),
    "distributional": ("task-gram against ∞-gram memorization",
                       ("mem3_significant", "mem3_above_infgram_knowledge", "mem3_reasoning_none")),
}


def claims_table(results_dir: Path = RESULTS_DIR) -> pd.DataFrame:
    """One row per claim of every ``results/<chapter>.json``, chapters in book
    order; an empty table (with :data:`COLUMNS`) when no chapter has claims."""
    rows = []
    files = sorted(Path(results_dir).glob("*.json"),
                   key=lambda p: (CHAPTER_ORDER.index(p.stem) if p.stem in CHAPTER_ORDER else 99, p.stem))
    for path in files:
        for data in json.loads(path.read_text()).get("claims", []):
            claim = Claim.from_dict(data)
            rows.append({c: getattr(claim, c) for c in COLUMNS})
    table = pd.DataFrame(rows, columns=COLUMNS).astype(object)
    return table.where(table.notna(), None)  # a missing field stays None, not NaN


def status_counts(table: pd.DataFrame, kind: str | None = None) -> dict[str, int]:
    """How many claims (of ``kind``, or all) have each status, every status of that
    kind present, zeros included."""
    if kind is not None and len(table):
        table = table[table["kind"] == kind]
    statuses = STATUSES if kind is None else (SOURCE_STATUSES if kind == SOURCE else EXTENSION_STATUSES)
    counts = table["status"].value_counts() if len(table) else pd.Series(dtype=int)
    return {s: int(counts.get(s, 0)) for s in statuses}


def counts_sentence(table: pd.DataFrame, chapter: str | None = None) -> str:
    """The counts of source claims per status in words, of one chapter or of the
    book (:func:`analysis.core.claim_text.counts_sentence` on the table's rows)."""
    if chapter is not None and len(table):
        table = table[table["chapter"] == chapter]
    rows = [SimpleNamespace(**r) for r in table.to_dict("records")]
    return claim_text.counts_sentence(rows, "this chapter's" if chapter else "the book's")


def _number(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    x = float(x)
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.1e}"


def _present(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def this_run(row) -> str:
    """This run's value as the scoreboard prints it: value [lo, hi]; p (Holm-adjusted p)."""
    if not _present(row["value"]):
        return "—"
    text = _number(row["value"])
    if row["interval"]:
        lo, hi = row["interval"]
        text += f" [{_number(lo)}, {_number(hi)}]"
    if _present(row["p"]):
        text += f"; p = {_number(row['p'])}"
    if _present(row.get("p_adjusted")):
        text += f" (Holm {_number(row['p_adjusted'])})"
    return text


def units(row) -> str:
    """``n_units unit`` and, where the rows differ, ``(n rows)``."""
    if not _present(row["n_units"]):
        return f"— {row['unit']}"
    text = f"{int(row['n_units']):,} {row['unit']}"
    if _present(row["n"]) and int(row["n"]) != int(row["n_units"]):
        text += f" ({int(row['n']):,} rows)"
    return text


def null(row) -> str:
    if row["null_kind"] == "none":
        return "—"
    words = {"permutation": "permutation", "analytic": "exact", "target": "target"}[row["null_kind"]]
    return words + (f" {_number(row['null_value'])}" if _present(row["null_value"]) else "")


#: the longest reason a control cell shows (the whole reason is in results/<chapter>.json)
CONTROL_CHARS = 60


def control(row) -> str:
    if _present(row["control_value"]):
        return _number(row["control_value"])
    why = str(row["control_reason"])
    return "none: " + (why if len(why) <= CONTROL_CHARS else why[: CONTROL_CHARS - 1].rstrip() + "…")


def status_cell(row) -> str:
    text = f"**{STATUS_WORDS[row['status']].lower()}**"
    if row["mechanical"]:
        text += " (mechanical)"
    if row["by_design"]:
        text += f" (by design: {row['by_design_reason']})"
    if row["family"]:
        text += f" [Holm: {row['family']}]"
    return text


def _cell(value) -> str:
    text = "" if value is None else str(value)
    for char in "\\|<>*_`":
        text = text.replace(char, "\\" + char)
    return text.replace("\n", " ")


def _link(row) -> str:
    return f"{{ref}}`section <{row['section']}>`" if row["section"] else "—"


def headline_markdown(table: pd.DataFrame) -> list[str]:
    """Per source, its headline claims with their statuses (a list of lines)."""
    parts = ["| source | headline claim | this run | status |", "|---|---|---|---|"]
    any_row = False
    for chapter, (title, patterns) in HEADLINES.items():
        group = table[table["chapter"] == chapter]
        for _, row in group.iterrows():
            if any(fnmatch.fnmatch(row["id"], p) for p in patterns):
                any_row = True
                parts.append("| " + " | ".join([_cell(f"{chapter.capitalize()}: {title}"),
                                                f"{_cell(row['statement'])} (`{row['id']}`)",
                                                _cell(this_run(row)), status_cell(row)]) + " |")
    return parts if any_row else []


def chapter_markdown(group: pd.DataFrame) -> list[str]:
    """One chapter's counts and its two tables (source claims, then extensions)."""
    chapter = group["chapter"].iloc[0]
    parts = [f"### {chapter.capitalize()}", "", counts_sentence(group, chapter), ""]
    head = ("| claim | {src} | this run | units; null | control | status | reason | section |",
            "|---|---|---|---|---|---|---|---|")
    for kind, title, src in ((SOURCE, "The source's claims", "source"),
                             ("extension", "The book's extensions", "kind")):
        rows = group[group["kind"] == kind]
        if not len(rows):
            continue
        parts += [f"**{title}**", "", head[0].format(src=src), head[1]]
        for _, row in rows.iterrows():
            first = _cell(row["source_value"] or "—") if kind == SOURCE else "extension"
            parts.append("| " + " | ".join([f"{_cell(row['statement'])} (`{row['id']}`)", first,
                                            _cell(this_run(row)), _cell(f"{units(row)}; null {null(row)}"),
                                            _cell(control(row)), status_cell(row), _cell(row["reason"]),
                                            _link(row)]) + " |")
        parts.append("")
    return parts


def scoreboard_markdown(table: pd.DataFrame) -> str:
    """The headline table, the book's counts, then each chapter's counts and tables."""
    if table.empty:
        return "*No chapter has recorded claims in `results/` yet.*"
    parts = [f"**{counts_sentence(table)}**", ""]
    headline = headline_markdown(table)
    if headline:
        parts += ["### Each source's headline claims", "", *headline, ""]
    for _, group in table.groupby("chapter", sort=False):
        parts += chapter_markdown(group)
    return "\n".join(parts)


def by_design_markdown(table: pd.DataFrame) -> str:
    """The claims marked by design, per chapter, each with its rule's reason (the
    lab page's list, generated from the flags)."""
    rows = table[table["by_design"].astype(bool)] if len(table) else table
    if not len(rows):
        return "*No claim of the last default execution is marked by design.*"
    parts = []
    for chapter, group in rows.groupby("chapter", sort=False):
        parts.append(f"- **{chapter.capitalize()}**:")
        for _, row in group.iterrows():
            parts.append(f"  - {_cell(row['statement'])} (`{row['id']}`, "
                         f"{STATUS_WORDS[row['status']].lower()}): {_cell(row['by_design_reason'])}")
    return "\n".join(parts)


__all__ = ["CHAPTER_ORDER", "COLUMNS", "HEADLINES", "by_design_markdown", "claims_table",
           "counts_sentence", "scoreboard_markdown", "status_counts", "this_run"]
