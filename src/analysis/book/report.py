"""Glue between the chapter notebooks and the package: glue, tables, formatting.

Parameters are declared and checked in :mod:`analysis.params`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from analysis.core import jsonio
from analysis.core.claims import Claim, to_json
from analysis.core.fmt import fmt_interval, fmt_p, fmt_pct  # noqa: F401  (re-exported for the notebooks)
from analysis.models import usage
from analysis.params import ParameterError  # noqa: F401  (chapters raise it as report.ParameterError)


def glue_text(**values: Any) -> None:
    """Glue each value as text for ``{glue:text}`` (formatted by the caller), hidden."""
    from myst_nb import glue  # the book's extra: only a notebook kernel needs it

    for name, value in values.items():
        glue(name, str(value), display=False)


def glue_md(**values: str) -> None:
    """Glue each value as Markdown for ``{glue:md}``, hidden."""
    # the book's extras: only a notebook kernel needs them
    from IPython.display import Markdown
    from myst_nb import glue

    for name, value in values.items():
        glue(name, Markdown(value), display=False)


def glue_page(values: Mapping[str, Mapping[str, Any]]) -> None:
    """Glue one section's values as a chapter's ``page`` module returns them:
    ``{"text": {name: value}, "md": {name: markdown}}`` (either key may be absent),
    the first through :func:`glue_text`, the second through :func:`glue_md`."""
    unknown = set(values) - {"text", "md"}
    if unknown:
        raise ValueError(f"glue_page takes the keys 'text' and 'md', got {sorted(unknown)}")
    glue_text(**values.get("text", {}))
    glue_md(**values.get("md", {}))


def glue_claims(claims: Iterable[Claim], render: Callable[[Claim], str] | None = None) -> list[Claim]:
    """Glue a chapter's claims: all of them as JSON under ``claims`` (which
    ``execute_chapters.py`` writes to ``results/<chapter>.json`` under
    ``"claims"``, for the scoreboard page), and, with ``render`` (the chapter's
    ``text.render``), each one's sentence as Markdown under ``claim_<id>``."""
    claims = list(claims)
    # as Markdown: its text is stored as is, where a text value is stored as its repr
    glue_md(claims=to_json(claims))
    if render is not None:
        glue_md(**{f"claim_{c.id}": render(c) for c in claims})
    return claims


def glue_usage() -> pd.DataFrame:
    """Glue what the models of this execution were asked: ``run_queries``,
    ``run_calls`` (sent to a model), ``run_hits`` (from the query cache) and
    ``run_errors``, read by ``execute_chapters.py`` for its summary and
    ``results/<chapter>.json``, and the same counts per model as JSON under
    ``run_models``, from which it fails a run in which every query to a model
    failed. Strict JSON: a model with no error has ``"last_error": null`` (pandas
    holds it as NaN in a column of texts). Returns the per-model table."""
    table = usage()
    glue_text(run_queries=int(table["queries"].sum()), run_calls=int(table["calls"].sum()),
              run_hits=int(table["hits"].sum()), run_errors=int(table["errors"].sum()))
    glue_md(run_models=jsonio.dumps(table.to_dict(orient="records")))
    return table


def rate_table(rates: pd.DataFrame, type_labels: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A readable rates table: model, type, matched/total, rate and 95% interval."""
    labels = dict(type_labels or {})
    return pd.DataFrame(
        {
            "model": rates["model"],
            "type": rates["type"].map(lambda t: labels.get(t, t)),
            "matched / total": [f"{m} / {t}" for m, t in zip(rates["matched"], rates["total"])],
            "rate": rates["rate"].map(fmt_pct),
            "95% Wilson interval": [fmt_interval(a, b) for a, b in zip(rates["ci_lo"], rates["ci_hi"])],
        }
    )


_EXPLORER_JS = r"""
(function(){
  const root = document.getElementById("%(id)s");
  const data = JSON.parse(root.querySelector("script[type='application/json']").textContent);
  const pick = root.querySelector(".pe-phrase"), mpick = root.querySelector(".pe-model");
  const out = root.querySelector(".pe-out");
  const esc = s => (s || "").replace(/[&<>"]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
  data.phrases.forEach((p, i) => { const o = document.createElement("option"); o.value = i;
    o.textContent = p.label; pick.appendChild(o); });
  data.models.forEach(m => { const o = document.createElement("option"); o.value = m;
    o.textContent = m; mpick.appendChild(o); });
  function show(){
    const p = data.phrases[pick.value], r = p.results[mpick.value];
    if (!r) { out.innerHTML = "<p>No completion of this phrase by this model.</p>"; return; }
    let comp = esc(r.cleaned);
    if (r.match_start !== null) comp = esc(r.cleaned.slice(0, r.match_start)) + "<mark>" +
      esc(r.cleaned.slice(r.match_start, r.match_end)) + "</mark>" + esc(r.cleaned.slice(r.match_end));
    const verdict = r.error ? "API error (excluded)" : r.refused ? "refusal (excluded)" :
      r.empty ? "empty (excluded)" : (r.matched ? "memorized" : "not memorized");
    out.innerHTML = `<p><b>Prompt</b><br><code>${esc(r.prompt)}</code></p>
      <p><b>Expected ending</b><br>${esc(p.end)}</p>
      <p><b>Completion</b> (cleaned, echo stripped; best window highlighted)<br>
         ${comp || "<i>(empty)</i>"}</p>
      <p><b>Raw completion</b><br><code style="white-space:pre-wrap">${esc(r.raw)}</code></p>
      <p><b>Normalized edit distance</b> ${r.distance === null ? "–" : r.distance.toFixed(3)}
         (threshold &lt; ${data.threshold}) · <b>${verdict}</b></p>`;
  }
  pick.onchange = show; mpick.onchange = show; show();
})();
"""


def explorer_html(scored: pd.DataFrame, phrases: pd.DataFrame, threshold: float, element_id: str) -> str:
    """A self-contained HTML explorer of scored completions (works in static HTML).

    Pick a phrase and a model; see the prompt, the expected ending, the cleaned
    completion with the best-matching window highlighted, and the distance.
    """
    table = phrases.set_index("id")
    by_phrase: dict[str, dict] = {}
    for row in scored.itertuples(index=False):
        entry = by_phrase.setdefault(
            row.phrase_id,
            {
                "label": f"[{row.type}] {table.at[row.phrase_id, 'start']}…",
                "end": table.at[row.phrase_id, "end"],
                "results": {},
                "n_matched": 0,
            },
        )
        matched = bool(row.matched) if pd.notna(row.matched) else False
        entry["n_matched"] += matched
        entry["results"][row.model] = {
            "prompt": row.prompt,
            "raw": row.completion or "",
            "cleaned": row.cleaned or "",
            "matched": matched,
            "distance": None if pd.isna(row.distance) else float(row.distance),
            "match_start": None if pd.isna(row.match_start) else int(row.match_start),
            "match_end": None if pd.isna(row.match_end) else int(row.match_end),
            "refused": bool(row.refused),
            "empty": bool(row.empty),
            "error": bool(row.error),
        }
    # phrases some model memorized come first, as on the source's page
    ordered = sorted(by_phrase.values(), key=lambda e: (-e["n_matched"], e["label"]))
    payload = {"phrases": ordered, "models": sorted(scored["model"].unique()), "threshold": threshold}
    blob = jsonio.dumps(payload, ensure_ascii=False).replace("</", "<\\/")
    return (
        f'<div id="{html.escape(element_id)}" class="phrase-explorer" '
        'style="border:1px solid #ddd;padding:0.8em;border-radius:6px">'
        '<label>Phrase <select class="pe-phrase" style="max-width:100%"></select></label><br>'
        '<label>Model <select class="pe-model"></select></label>'
        '<div class="pe-out" style="margin-top:0.8em"></div>'
        f'<script type="application/json">{blob}</script>'
        f"<script>{_EXPLORER_JS % {'id': element_id}}</script></div>"
    )


def explorer_widget(scored: pd.DataFrame, phrases: pd.DataFrame, threshold: float):
    """The same explorer as ipywidgets, for a live kernel."""
    import ipywidgets as w  # the book's extra: only a live kernel shows the widget

    table = phrases.set_index("id")
    ids = list(dict.fromkeys(scored["phrase_id"]))
    phrase = w.Dropdown(options=[(f"{i}: {table.at[i, 'start']}", i) for i in ids], description="Phrase")
    model = w.Dropdown(options=sorted(scored["model"].unique()), description="Model")
    out = w.HTML()

    def show(*_):
        row = scored[(scored["phrase_id"] == phrase.value) & (scored["model"] == model.value)]
        if row.empty:
            out.value = "<p>No completion.</p>"
            return
        r = row.iloc[0]
        text = html.escape(r.cleaned or "")
        if pd.notna(r.match_start):
            a, b = int(r.match_start), int(r.match_end)
            c = r.cleaned
            text = f"{html.escape(c[:a])}<mark>{html.escape(c[a:b])}</mark>{html.escape(c[b:])}"
        dist = "–" if pd.isna(r.distance) else f"{r.distance:.3f}"
        out.value = (
            f"<p><b>Prompt</b> <code>{html.escape(r.prompt)}</code></p>"
            f"<p><b>Expected</b> {html.escape(table.at[phrase.value, 'end'])}</p>"
            f"<p><b>Completion</b> {text}</p><p>distance {dist} (threshold &lt; {threshold})</p>"
        )

    phrase.observe(show, "value")
    model.observe(show, "value")
    show()
    return w.VBox([phrase, model, out])


from analysis.core.paths import DATA_DIR  # noqa: E402


def data_table(name: str):
    """Path of a small table transcribed from a source, under the repo's ``data/``."""
    path = DATA_DIR / name
    if not path.exists():
        raise FileNotFoundError(f"no table {name!r} in {DATA_DIR}")
    return path
