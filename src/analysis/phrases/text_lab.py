"""The Phrases chapter's words on the lab's ladder, where the copies of each phrase are
known: the phrase design, the method's rates set beside that truth (from
:func:`.claims.lab_claims`), the summary sentence and the rates table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis.core.claim_text import verdict
from analysis.core.claims import Claim
from analysis.core.fmt import fmt_pct
from analysis.lab.corpus import PHRASE_PROBE_WORDS
from analysis.phrases.claims import by_kind
from analysis.phrases.method_rates import SEPARATION_ALPHA
from analysis.phrases.text import _copies, _count


def lab_design(phrases: pd.DataFrame) -> str:
    """The lab's phrase design in a sentence, from :func:`.run.lab_phrases`:
    how many phrases, how many at each trained copy level and how many never
    trained, and the words they add to the training stream (copies counted)."""
    if phrases.empty:
        return ("The lab of this run has no phrase documents (its corpus configuration sets "
                "`phrases_per_level` to zero), so this section has nothing to score; a lab profile with "
                "phrase documents fills it.")
    trained = phrases[phrases["copies"] > 0]
    per = phrases.groupby("copies").size()
    levels = ", ".join(f"{per[c]} trained {c} {'time' if c == 1 else 'times'}"
                       for c in sorted(set(trained["copies"])))
    controls = f" and {per[0]} never trained (the controls)" if 0 in per.index else ""
    words = int((trained["phrase"].str.split().str.len() * trained["copies"]).sum())
    return (f"Its corpus holds {len(phrases):,} of the English counterpart's popular-text phrases, each a "
            f"document of its own: {levels}{controls}. They add {words:,} words to the training stream, "
            f"copies counted, and no other document of the corpus repeats a run of {PHRASE_PROBE_WORDS} of "
            "their words, so a phrase's copies are exactly what the models saw of it.")


def _fmt_count(n: float) -> str:
    n = float(n)
    if n < 1e5:
        return f"{n / 1e3:.0f}K"
    return f"{n / 1e6:.2f}M" if n < 1e6 else f"{n / 1e6:.1f}M"


def _model_sentence(name: str, rows: pd.DataFrame, level: int | None) -> str:
    """One model's rates at every trained level, and ``level``, the first that
    separates from the controls (the ``lab_separated`` claim's)."""
    size = f"{name} ({_fmt_count(rows['params'].iloc[0])} parameters)"
    trained = rows[(rows["copies"] > 0) & (rows["total"] > 0)].sort_values("copies", ascending=False)
    if trained.empty:
        return f"{size} has no scorable completion of a trained phrase."
    if not trained["matched"].any():
        n = int(trained["total"].sum())
        return f"{size} reproduces none of the {n} trained phrases it was scored on, at any copy level."
    parts = [f"{fmt_pct(r.rate)} ({r.matched} of {r.total}) at {_copies(r.copies)}"
             for r in trained.itertuples()]
    where = (f"its rate first lies above the controls' at {_copies(level)}"
             if level is not None else "at no copy level does its rate lie above the controls'")
    where += f" (one-sided Fisher exact test, p < {SEPARATION_ALPHA:g})"
    return f"{size} reproduces {'; '.join(parts)}: {where}."


def _controls_sentence(c: Claim) -> str:
    e = c.extra
    if e["matched"] == 0 and e["matched_all"] == 0:
        return ("No completion counts as memorized, of the never-trained control phrases "
                f"(0 of {e['total']:,} scorable, all models together) or of the trained ones: the method "
                "finds nothing here, and nothing false.")
    if e["matched"] == 0:
        return (f"No completion of a never-trained control phrase counts as memorized (0 of {e['total']:,} "
                f"scorable completions of {_count(c.n_units, 'phrase', 'phrases')}, all models together).")
    return (f"{e['matched']} of {e['total']:,} completions of never-trained control phrases count as "
            f"memorized ({e['models_matched']} of {e['n_models']} models): the threshold admits endings a "
            "model can guess without having seen the phrase.")


def _top_sentence(top: Mapping) -> str:
    order = {"above": "above", "below": "below", "equal": "equal to"}[top["order"]]
    overlap = "overlap" if top["overlap"] else "do not overlap"
    return (f"At {top['copies']} copies the largest model's rate ({fmt_pct(top['rate_large'])}) is {order} "
            f"the smallest's ({fmt_pct(top['rate_small'])}); their 95% intervals {overlap}.")


def lab_verdict(table: pd.DataFrame, claims: Sequence[Claim]) -> str:
    """What the method finds on the lab's ladder, set against the truth, in words.

    From :func:`.method_rates.rates_by_copies` and its :func:`.claims.lab_claims`:
    the false positives on the never-trained
    controls; for the smallest and the largest model, the rate at every trained
    level and the first level whose rate exceeds the controls'; how many models
    separate and how many rise with copies; and the largest model against the
    smallest at the top level; each claim's verdict after its numbers.
    """
    if table.empty:
        return ("This lab has no phrase documents (its corpus sets `phrases_per_level` to zero), so there is "
                "no truth to set the method's rates beside.")
    kinds = ("lab_controls", "lab_separated", "lab_rises", "lab_size")
    (controls,), (separated,), (rising,), (size,) = (by_kind(claims, k) for k in kinds)
    models = list(dict.fromkeys(table["model"]))
    levels = separated.extra["first_level"]
    out = ([_controls_sentence(controls), verdict(controls)] if controls.extra.get("has_controls") else [])
    ends = [models[0]] if len(models) == 1 else [models[0], models[-1]]
    out += [_model_sentence(m, table[table["model"] == m], levels[m]) for m in ends]
    out.append(f"Over the whole ladder, {separated.extra['count']} of {len(models)} models separate some "
               f"trained level from the controls, and the rate rises with copies for {rising.extra['count']} "
               "of them.")
    out += [f"That every model separates: {verdict(separated)}",
            f"That every model's rate rises with copies: {verdict(rising)}"]
    if size.extra.get("top"):
        out.append(_top_sentence(size.extra["top"]))
    return " ".join(out)


def lab_summary(table: pd.DataFrame, claims: Sequence[Claim]) -> str:
    """One sentence for the chapter's summary: how many ladder models the method
    separates from the never-trained controls, and its false positives on them."""
    if table.empty:
        return ("The lab in this run has no phrase documents, so the method is not checked against a known "
                "truth.")
    (controls,), (separated,) = by_kind(claims, "lab_controls"), by_kind(claims, "lab_separated")
    found = [lvl for lvl in separated.extra["first_level"].values() if lvl is not None]
    e = controls.extra
    fp = (f"; {e['matched']} of {e['total']:,} control completions are false matches"
          if e.get("has_controls") else "")
    if not found:
        return (f"On the lab's ladder, where the copies are known, no model's rate at any trained level lies "
                f"above the never-trained controls'{fp}.")
    return (f"On the lab's ladder, where the copies are known, {len(found)} of "
            f"{separated.extra['n_models']} models reproduce trained phrases above the controls' rate, from "
            f"{_copies(min(found))} at best{fp}.")


def lab_rate_table(table: pd.DataFrame) -> pd.DataFrame:
    """Matched / scorable and the rate per model (rows, smallest first) and copy
    level (columns; "never trained" = the controls), for display."""
    if table.empty:
        return pd.DataFrame()
    cell = [f"{m} / {t} ({fmt_pct(r)})" if t else "—" for m, t, r in
            zip(table["matched"], table["total"], table["rate"])]
    level = table["copies"].map(lambda c: "never trained" if c == 0 else f"{c}×")
    frame = table.assign(cell=cell, level=level, size=table["params"].map(_fmt_count))
    wide = frame.pivot_table(index=["model", "size"], columns="level", values="cell", aggfunc="first",
                             sort=False)
    order = list(dict.fromkeys(frame.sort_values("copies")["level"]))
    return wide[order].rename_axis(columns="copies in training")
