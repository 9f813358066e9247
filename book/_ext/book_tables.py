"""Tables the book renders at build time from the repository itself.

``{chapter-parameters} CHAPTER``
    A chapter's parameter declaration (``analysis.params``): every parameter with
    its meaning, allowed values and default on each profile. The how-to page
    shows one per chapter, so it cannot drift from what the chapters accept.

``{execution-status}``
    How each chapter was last executed: the execution this site was built from
    (``book/chapters/_timings.json``, written by ``scripts/execute_chapters.py``)
    and the last ``default`` execution committed to ``results/<chapter>.json``:
    profile, parameters, commit, date, wall time, model calls and cache hits.

``{build-cost}``
    What a whole build of the book costs: the cold and warm runs that
    ``scripts/bench_book.py`` recorded in ``bench/results/book_cold.json`` and
    ``book_warm.json`` (and ``book_warm-jobs2.json``, the warm re-run two chapters at
    a time), minutes per chapter, with the commit, date, cores and the load average
    the run saw.

``{scoreboard}``
    Every claim of every chapter, from the ``"claims"`` of ``results/*.json``
    (:mod:`analysis.book.scoreboard`): each source's headline claims first, then
    per chapter its source claims and its extensions, each with this run's value,
    its unit and number of units, its null, its negative control, the status and
    its reason, and a link to the section.

``{claim-counts} [CHAPTER]``
    How many of the sources' claims (of one chapter, or of the book) are
    reproduced, not reproduced, inconclusive and not testable here.

``{by-design}``
    The claims marked by design, per chapter, with their rule's reason.

Each renders Markdown that MyST parses into the page.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from docutils import nodes
from sphinx.util.docutils import SphinxDirective

CHAPTER_ORDER = ("phrases", "lab", "size", "entropy", "predicting", "distributional")


def markdown_table(frame: pd.DataFrame) -> str:
    """``frame`` as a GitHub-style Markdown table (cells with ``|`` escaped)."""
    def cell(value) -> str:
        text = "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)
        # escaped, so that "<model id>" is text and not an HTML tag
        for char in "\\|<>*_`":
            text = text.replace(char, "\\" + char)
        return text.replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in frame.columns) + " |",
             "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _params_text(params: dict) -> str:
    others = {k: v for k, v in (params or {}).items() if k != "profile"}
    if not others:
        return "profile defaults"
    return ", ".join(f"{k}={', '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in others.items())


def _minutes(seconds) -> str:
    if seconds is None:
        return "—"
    seconds = float(seconds)
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _usage(usage: dict | None) -> str:
    """``calls / hits / errors`` of a usage record."""
    def count(key: str) -> str:
        value = (usage or {}).get(key)
        return "—" if value in (None, "") else f"{int(value):,}"

    return " / ".join(count(k) for k in ("calls", "hits", "errors"))


def _when(stamp: str | None) -> str:
    return stamp.replace("T", " ")[:16] if stamp else "—"


USAGE = "model calls / cache hits / errors"


def status_tables(root: Path) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The two status tables of the book whose root is ``root``: this site's
    executions (from ``book/chapters/_timings.json``) and the last committed
    default executions (from ``results/*.json``); None where the file is missing."""
    def order(name: str) -> tuple[int, str]:
        return (CHAPTER_ORDER.index(name) if name in CHAPTER_ORDER else len(CHAPTER_ORDER), name)

    def row(name: str, record: dict) -> dict:
        return {"chapter": name, "profile": record.get("profile", "—"),
                "parameters": _params_text(record.get("params")),
                "commit": (record.get("commit") or "—")[:10],
                "executed (UTC)": _when(record.get("executed")), "wall time": _minutes(record.get("seconds")),
                USAGE: _usage(record.get("usage"))}

    site = None
    timings = root / "book" / "chapters" / "_timings.json"
    if timings.is_file():
        data = json.loads(timings.read_text())
        site = pd.DataFrame([row(name, t) for name, t in sorted(data.items(), key=lambda kv: order(kv[0]))])
    results = None
    files = sorted((root / "results").glob("*.json"), key=lambda p: order(p.stem))
    if files:
        rows = [row(path.stem, json.loads(path.read_text())) for path in files]
        results = pd.DataFrame(rows).drop(columns="profile")
    return site, results


#: the whole-book runs ``scripts/bench_book.py`` records, in the order the table shows them
COST_RUNS = ("cold", "warm", "warm-jobs2")


def _run_label(kind: str) -> str:
    base, _, jobs = kind.partition("-jobs")
    return f"{base}, {jobs} at a time" if jobs else kind


def cost_table(root: Path) -> tuple[pd.DataFrame | None, list[str]]:
    """Minutes per chapter of the recorded cold and warm whole-book runs
    (``bench/results/book_{cold,warm,warm-jobs2}.json``), with a total row and the
    build's minutes, and one sentence per run saying where and when it ran;
    ``(None, [])`` when no run is recorded. A run of several chapters at a time says
    so: its chapters' minutes overlap, so they add up to more than its total."""
    runs = {}
    for kind in COST_RUNS:
        path = root / "bench" / "results" / f"book_{kind}.json"
        if path.is_file():
            runs[_run_label(kind)] = json.loads(path.read_text())
    if not runs:
        return None, []
    names = sorted({n for r in runs.values() for n in r.get("chapters", {})},
                   key=lambda n: (CHAPTER_ORDER.index(n) if n in CHAPTER_ORDER else len(CHAPTER_ORDER), n))
    rows = []
    for name in [*names, "site build", "total"]:
        row = {"": name}
        for kind, r in runs.items():
            if name == "total":
                minutes = r.get("total_minutes")
            elif name == "site build":
                minutes = r.get("build_minutes")
            else:
                minutes = r.get("chapters", {}).get(name, {}).get("minutes")
            row[f"{kind} (min)"] = "—" if minutes is None else f"{minutes:.1f}"
            chapters = r.get("chapters", {})
            if name in names:
                calls = chapters.get(name, {}).get("calls")
            elif name == "total":
                calls = sum(int(c.get("calls") or 0) for c in chapters.values())
            else:
                calls = None
            row[f"{kind}: model calls"] = "—" if calls in (None, "") else f"{int(calls):,}"
        rows.append(row)
    notes = []
    for kind, r in runs.items():
        load = r.get("load_before"), r.get("load_after")
        threads = r.get("torch_threads", "—")
        ones = [x[0] for x in load if x]
        cores = r.get("cores")
        busy = ("" if not ones or not isinstance(cores, int) else
                " (above the core count, other work shared the machine)" if max(ones) > cores else
                " (within the core count)")
        jobs = r.get("jobs", 1)
        overlap = (f" It executed the lab page alone, then {jobs} chapters at a time "
                   f"(`--jobs {jobs}`), so its chapters' minutes overlap." if jobs > 1 else "")
        notes.append(f"The {kind} run: commit {str(r.get('commit', '—'))[:10]}, {_when(r.get('date'))} UTC, "
                     f"{cores if cores is not None else '—'} cores ({threads} torch threads); load average "
                     f"{load[0][0] if load[0] else '—'} before and {load[1][0] if load[1] else '—'} "
                     f"after{busy}.{overlap}")
    return pd.DataFrame(rows), notes


class _MarkdownDirective(SphinxDirective):
    def render(self, text: str) -> list[nodes.Node]:
        container = nodes.container()
        self.state.nested_parse(self.content.__class__(text.splitlines(), source=self.get_source_info()[0]),
                                self.content_offset, container)
        return container.children

    @property
    def root(self) -> Path:
        return Path(self.env.srcdir)


class ChapterParameters(_MarkdownDirective):
    required_arguments = 1

    def run(self):
        from analysis.book.chapters import CHAPTER_MODULES, declaration

        chapter = self.arguments[0]
        if chapter not in CHAPTER_MODULES:
            raise self.error(f"chapter must be one of {sorted(CHAPTER_MODULES)}, got {chapter!r}")
        return self.render(markdown_table(declaration(chapter).reference()))


class ExecutionStatus(_MarkdownDirective):
    def run(self):
        sources = [self.root / "book" / "chapters" / "_timings.json", *(self.root / "results").glob("*.json")]
        for path in sources:
            self.env.note_dependency(str(path))
        site, results = status_tables(self.root)
        parts = ["**This site** was built from these executions:", ""]
        parts += [markdown_table(site)] if site is not None else [
            "*No execution record (`book/chapters/_timings.json`) was found: the chapters of this build "
            "were not executed by `scripts/execute_chapters.py`.*"]
        parts += ["", "**The last default execution** of each chapter, committed in `results/<chapter>.json` "
                  "with its glued values:", ""]
        parts += [markdown_table(results)] if results is not None else [
            "*No default execution is recorded in `results/` yet.*"]
        return self.render("\n".join(parts))


class BuildCost(_MarkdownDirective):
    def run(self):
        for kind in COST_RUNS:
            self.env.note_dependency(str(self.root / "bench" / "results" / f"book_{kind}.json"))
        table, notes = cost_table(self.root)
        if table is None:
            return self.render("*No whole-book run is recorded yet (`scripts/bench_book.py` writes "
                               "`bench/results/book_cold.json`).*")
        return self.render("\n".join([markdown_table(table), "", *notes]))


class Scoreboard(_MarkdownDirective):
    def run(self):
        from analysis.book.scoreboard import claims_table, scoreboard_markdown

        for path in (self.root / "results").glob("*.json"):
            self.env.note_dependency(str(path))
        return self.render(scoreboard_markdown(claims_table(self.root / "results")))


class _ClaimsDirective(_MarkdownDirective):
    def table(self):
        from analysis.book.scoreboard import claims_table

        for path in (self.root / "results").glob("*.json"):
            self.env.note_dependency(str(path))
        return claims_table(self.root / "results")


class ClaimCounts(_ClaimsDirective):
    optional_arguments = 1

    def run(self):
        from analysis.book.scoreboard import counts_sentence

        table = self.table()
        if table.empty:
            return self.render("*No chapter has recorded claims in `results/` yet.*")
        return self.render(counts_sentence(table, self.arguments[0] if self.arguments else None))


class ByDesign(_ClaimsDirective):
    def run(self):
        from analysis.book.scoreboard import by_design_markdown

        return self.render(by_design_markdown(self.table()))


def setup(app):
    app.add_directive("chapter-parameters", ChapterParameters)
    app.add_directive("execution-status", ExecutionStatus)
    app.add_directive("build-cost", BuildCost)
    app.add_directive("scoreboard", Scoreboard)
    app.add_directive("claim-counts", ClaimCounts)
    app.add_directive("by-design", ByDesign)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
