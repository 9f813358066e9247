"""The distributional chapter's English: a claim rendered to a sentence
(:func:`render`), the paragraphs the chapter glues under its old names (each reads
its decisions from the claims of :mod:`analysis.distributional.claims` and decides
nothing again), and the formatting of its glued numbers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, Claim
from analysis.core.fmt import fmt_p, fmt_pct
from analysis.distributional.method_trends import Trend, above_infgram, trend
from analysis.distributional.params import NOVELTY_N

_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def mem_name(n) -> str:
    """``Mem₃`` for n = 3, ``Mem∞`` for the ∞-gram LM: the measure's name in glued prose."""
    return "Mem∞" if n in ("∞", np.inf) else f"Mem{str(n).translate(_SUB)}"


def fmt_params(n: float) -> str:
    """A parameter count for prose: ``24656 -> '25K'``, ``163840 -> '0.16M'``, ``4.07e6 -> '4.1M'``."""
    n = float(n)
    if n < 1e5:
        return f"{n / 1e3:.0f}K"
    return f"{n / 1e6:.2f}M" if n < 1e6 else f"{n / 1e6:.1f}M"


# ---------------------------------------------------------------------------
# A measure across the ladder, as glued numbers
# ---------------------------------------------------------------------------


def range_text(t: Trend) -> str:
    """``'lo to hi'`` (two decimals), or why there is none."""
    if not t.n_models:
        return "not computed (no co-occurring pair)"
    return f"{t.lo:.2f} to {t.hi:.2f}" if t.defined else "undefined (fewer than 3 pairs)"


def sig_text(t: Trend) -> str:
    """Significant models, ``'k of m'``."""
    return f"{t.n_sig} of {t.n_models}"


def trend_text(t: Trend) -> str:
    """The rank correlation with size, signed with two decimals, or ``'undefined'``."""
    r = t.size_rho
    return f"{r:+.2f}" if np.isfinite(r) else "undefined"


def mem_glue(mem: pd.DataFrame, tasks: Sequence[str], sizes: Sequence[int]) -> dict[str, str]:
    """The Mem section's glued numbers for every task and n: ``{task}_{n}_range``,
    ``_sig`` (significant models, "k of m"), ``_trend`` (Spearman ρ with size),
    ``_above_inf`` (models with Mem_n ≥ Mem_∞), ``_count_range`` and
    ``_count_trend`` (the pair-count variant)."""
    out = {}
    for task in tasks:
        for n in sizes:
            t, c = trend(mem, task, n), trend(mem, task, n, lm="pair count")
            above, total = above_infgram(mem, task, n)
            out |= {f"{task}_{n}_range": range_text(t), f"{task}_{n}_sig": sig_text(t),
                    f"{task}_{n}_trend": trend_text(t), f"{task}_{n}_above_inf": f"{above} of {total}",
                    f"{task}_{n}_count_range": range_text(c), f"{task}_{n}_count_trend": trend_text(c)}
    return out


# ---------------------------------------------------------------------------
# A claim as a sentence
# ---------------------------------------------------------------------------


def _value_text(c: Claim) -> str:
    if c.value is None:
        return ""
    unit = c.extra.get("unit")
    if unit == "share":
        return f"{fmt_pct(c.value)} of {c.n:,}"
    if unit == "difference":
        return f"{100 * c.value:+.1f} percentage points"
    if unit == "median_rho":
        return f"median ρ {c.value:+.2f}"
    if unit == "min_size_rho":
        return f"smallest Spearman ρ with size {c.value:+.2f}"
    return f"Spearman ρ with size {c.value:+.2f}"


def render(claim: Claim) -> str:
    """One claim as a Markdown sentence: the statement, the status in bold (with a
    note when the lab corpus builds the signal in), this run's value and the reason."""
    design = " (by design of the lab corpus)" if claim.by_design else ""
    value = _value_text(claim)
    return f"{claim.statement}: **{claim.status}**{design} ({value + '; ' if value else ''}{claim.reason})."


def _pick(claims: Iterable[Claim], id: str) -> Claim:
    found = {c.id: c for c in claims}
    if id not in found:
        raise KeyError(f"no claim {id!r} among {sorted(found)}")
    return found[id]


def _p(c: Claim) -> str:
    return f", p {fmt_p(c.p)}" if c.p is not None else ""


def untestable_sentence(claims: Iterable[Claim]) -> str:
    """The source's claims the lab cannot test, one rendering each."""
    return " ".join(render(c) for c in claims if c.status == NOT_TESTABLE)


# ---------------------------------------------------------------------------
# The embedding filter
# ---------------------------------------------------------------------------


def _share(k: int, total: int) -> str:
    return fmt_pct(k / total) if total else "—"


def filter_sentence(counts: Mapping[str, int], claims: Iterable[Claim], label: str) -> str:
    """What the two thresholds do to the candidates of one (task, n) (from
    :func:`~analysis.distributional.method_tables.filter_counts`), as the claims
    ``authors_filter`` and ``paper_filter`` decide it, and how many co-occurring
    pairs each leaves."""
    claims = list(claims)
    authors_c, paper_c = _pick(claims, "authors_filter"), _pick(claims, "paper_filter")
    total, authors, paper = counts["total"], counts["authors"], counts["paper"]
    if authors_c.status == REPRODUCED:
        kept = (f"keeps every one of the {total:,} candidates of {label}" if authors == total
                else f"keeps nearly every candidate of {label} ({authors:,} of {total:,})")
        kept += ", a filter in name only"
    else:
        kept = f"keeps {authors:,} of the {total:,} candidates of {label} ({_share(authors, total)})"
    if paper_c.status == REPRODUCED:
        stated = (f"the paper's stated threshold keeps {paper:,} ({_share(paper, total)}): most input and "
                  "output n-grams are not similar in MiniLM's embedding space")
    elif paper_c.status == NOT_REPRODUCED:
        stated = f"the paper's stated threshold keeps most of them, {paper:,} ({_share(paper, total)})"
    else:
        stated = f"the paper's stated threshold keeps {paper:,} ({_share(paper, total)}; {paper_c.reason})"
    return (f"That threshold {kept}; {stated}. Of the pairs that co-occur in the corpus, "
            f"{counts['paper_co']:,} survive the paper's threshold and {counts['none_co']:,} are kept "
            "without a filter.")


def authors_sentence(counts: Mapping[str, int], claims: Iterable[Claim]) -> str:
    """Whether the authors' code, as run, filtered at all (the claim ``authors_filter``)."""
    total, authors = counts["total"], counts["authors"]
    c = _pick(claims, "authors_filter")
    head = f"The authors' effective threshold keeps {authors:,} of {total:,} candidates"
    if c.status == REPRODUCED:
        return head + (": their code ran without an effective filter, and the chapter's main numbers follow "
                       "the code.")
    if c.status == NOT_REPRODUCED:
        return head + (", so their code did filter; the chapter's main numbers use every co-occurring pair "
                       "all the same.")
    return head + f" ({c.reason}); the chapter's main numbers use every co-occurring pair."


# ---------------------------------------------------------------------------
# Performance against counts
# ---------------------------------------------------------------------------


def accuracy_sentence(acc: pd.DataFrame, claims: Iterable[Claim]) -> str:
    """The accuracy paragraph: the largest and the smallest model's knowledge
    accuracy, its trend with size (the claim ``accuracy_size``) and the best
    reasoning accuracy. ``acc`` is the accuracy table, smallest model first."""
    c = _pick(claims, "accuracy_size")
    small, big = acc.iloc[0], acc.iloc[-1]
    stats = f"Spearman ρ with size {c.value:+.2f}{_p(c)}" if c.value is not None else ""
    trend_words = {REPRODUCED: f"knowledge accuracy rises with size ({stats})",
                   NOT_REPRODUCED: f"knowledge accuracy does not rise with size ({stats})",
                   INCONCLUSIVE: f"knowledge accuracy shows no clear trend with size ({stats}; {c.reason})"}
    if c.status in trend_words:
        words = trend_words[c.status]
    elif c.extra.get("constant"):
        words = "knowledge accuracy is the same for every model"
    else:
        words = "knowledge accuracy has no defined trend with size"
    return (f"The largest model, {big['model']}, answers {fmt_pct(big['knowledge accuracy'])} of the facts "
            f"and the smallest, {small['model']}, {fmt_pct(small['knowledge accuracy'])}; across the ladder "
            f"{words}. No model solves more than {fmt_pct(acc['reasoning accuracy'].max())} of the new "
            "arithmetic problems.")


def _families(by_copies: pd.DataFrame, ladder: pd.DataFrame) -> tuple[str, str]:
    """Each family's best recall on the most-copied facts, and the families' token budgets
    when they differ."""
    top = [c for c in by_copies.columns if c != "params"][-1]
    col = by_copies[top].astype(float)
    fam = ladder.set_index("model")["family"]
    fam_best = col.groupby(fam.reindex(col.index).to_numpy()).max()
    by_family = "; ".join(f"{f} family at most {fmt_pct(v)}" for f, v in fam_best.sort_index().items())
    tokens = ladder.groupby("family")["tokens"].first()
    budgets = ""
    if tokens.nunique() > 1:
        budgets = "; the families were trained on " + " and ".join(
            f"{v:,} tokens ({f})" for f, v in tokens.items())
    return by_family, budgets


def copies_sentence(by_copies: pd.DataFrame, ladder: pd.DataFrame, claims: Iterable[Claim]) -> str:
    """The lab's answer to the source's performance-against-count claim (the claims
    ``copies_rise`` and ``copies_size``): the best model's recall on the most- and
    the least-copied facts, each family's best recall on the most-copied facts, and
    whether that recall rises with size across the ladder."""
    claims = list(claims)
    rise, size = _pick(claims, "copies_rise"), _pick(claims, "copies_size")
    if rise.status == NOT_TESTABLE:
        return "No model has a scorable answer on the most-copied facts."
    x = rise.extra
    if x["none_recalled"]:
        return (f"no model recalls any of the facts seen {x['top']} times, and none more than "
                f"{fmt_pct(x['best_any'])} of any bin: the lab shows none of the source's rise of accuracy "
                "with the count.")
    low_words = "once" if x["low"] == "1" else f"{x['low']} times"
    rises = {REPRODUCED: f"as in the source, recall rises with the count (Fisher's exact test{_p(rise)})",
             NOT_REPRODUCED: "unlike the source, recall does not rise with the count"}.get(
        rise.status, f"too little evidence to tell whether recall rises with the count ({rise.reason})")
    stats = f"Spearman ρ {size.value:+.2f}{_p(size)}" if size.value is not None else ""
    order = {REPRODUCED: f"recall on them rises with size across the ladder ({stats})",
             NOT_REPRODUCED: f"recall on them does not rise with size ({stats})",
             INCONCLUSIVE: f"size alone does not order the ladder's recall ({stats})"}.get(
        size.status, "size alone does not order the ladder's recall")
    by_family, budgets = _families(by_copies, ladder)
    return (f"{x['model']} recalls {fmt_pct(x['hi'])} of the facts seen {x['top']} times and "
            f"{fmt_pct(x['lo'])} of those seen {low_words}: {rises}. By family, on the most-copied facts: "
            f"{by_family}; {order}{budgets}.")


# ---------------------------------------------------------------------------
# Distributional memorization across the ladder
# ---------------------------------------------------------------------------


def mem_sentence(t: Trend, task: str, n: int, claims: Iterable[Claim] = ()) -> str:
    """One task's Mem_n across the ladder: its range, how many models are
    significant, and its rank correlation with size, read as the claim
    ``mem{n}_rises`` decides it when there is one for ``task``."""
    name = mem_name(n)
    if not t.defined:
        return f"For the {task} task, {name} is {range_text(t)}."
    c = next((c for c in claims if c.id == f"mem{n}_rises" and c.extra.get("task") == task), None)
    p = f", p {fmt_p(t.size_test.p)}" if np.isfinite(t.size_test.p) else ""
    if t.n_sig == 0:
        return (f"For the {task} task, {name} ranges from {range_text(t)} and is significant for no model "
                f"of {t.n_models}, so there is no memorization trend to read (rank correlation with size "
                f"{trend_text(t)}).")
    head = (f"For the {task} task, {name} ranges from {range_text(t)} and is significant for {sig_text(t)} "
            f"models; its rank correlation with model size is {trend_text(t)}{p}")
    words = {REPRODUCED: ", so it rises with size", NOT_REPRODUCED: ", so it does not rise with size",
             INCONCLUSIVE: f", too little to say it rises with size ({c.reason})" if c else ""}
    return head + (words.get(c.status, "") if c else "") + "."


def undefined_sentence(mem: pd.DataFrame, filt: str = "no filter") -> str:
    """Which (task, n, corpus LM) of the Mem table have no defined correlation for
    any model, and why (the rows' ``note``); the other sentence when every one is defined."""
    g = mem[mem["filter"] == filt]
    undefined = g.groupby(["task", "n", "lm"], sort=False).filter(lambda t: t["rho"].isna().all())
    if undefined.empty:
        return "Every corpus LM gives a defined correlation for every model."
    parts = [f"the {lm} LM on {task} {n}-grams ({t['note'].iloc[0] or 'undefined'})"
             for (task, n, lm), t in undefined.groupby(["task", "n", "lm"], sort=False)]
    return "No model has a defined correlation for " + "; ".join(parts) + "."


def ties_sentence(claim: Claim) -> str:
    """Why (or whether) the task-gram LM leaves Mem_n little to order: the share of
    tied pairs and its decision (the claim ``tied{n}_{task}``)."""
    x, share = claim.extra, claim.value
    task, n = x["task"], x["mem_n"]
    if claim.status == NOT_TESTABLE:
        return f"The {task} task has no {n}-gram test pair."
    head = (f"{fmt_pct(share)} of the {task} task's {n}-gram test pairs have P(s^y | s^x) = 1: their input "
            "n-gram occurs only in documents that also hold the output n-gram, so C(s^x) = C((s^x, s^y)) "
            "whatever the copies.")
    if claim.status == REPRODUCED:
        return head + " Most pairs are not tied, so the conditional can order them."
    if claim.status == INCONCLUSIVE:
        return head + f" Whether most pairs are tied cannot be told ({claim.reason})."
    top = x.get("max_abs_mem")
    tail = " With most pairs tied, the rank correlation has little to order"
    if top is None:
        return head + tail + "."
    return head + tail + (f", and {mem_name(n)} stays near zero (|ρ| ≤ {top:.2f})." if x["near_zero"]
                          else f"; {mem_name(n)} still reaches |ρ| = {top:.2f}.")


def count_sentence(claim: Claim, c: Trend) -> str:
    """The pair-count variant (beyond the paper) across the ladder, as the claim
    ``count{n}_{task}`` decides it."""
    task, n = claim.extra["task"], claim.extra["mem_n"]
    head = ("With the pair count C((s^x, s^y)) in place of the conditional, a variant beyond the paper "
            f"(dotted in the figure), the {task} task's {n}-gram correlation ")
    if not c.defined:
        return head + f"is {range_text(c)}."
    verdict = {REPRODUCED: "the models' probabilities follow the corpus frequency",
               NOT_REPRODUCED: "the models' probabilities run against the corpus frequency"}.get(
        claim.status, f"no consistent relation to the corpus frequency across the ladder ({claim.reason})")
    return head + (f"ranges from {range_text(c)}, significant for {sig_text(c)} models, with a rank "
                   f"correlation with size of {trend_text(c)}: {verdict}.")


_AGREE = {REPRODUCED: "as the source finds", NOT_REPRODUCED: "the reverse of the source's finding",
          INCONCLUSIVE: "too few models, or too even a split, to tell", NOT_TESTABLE: "not measured"}


def lm_sentence(claims: Iterable[Claim], n: int, tasks: Sequence[str] = ("knowledge", "reasoning")) -> str:
    """The source finds Mem_n ≥ Mem_∞ (on TriviaQA and MMLU); per task, for how many
    models the lab agrees and what the sign test over models decides (the claims
    ``mem{n}_above_infgram_{task}``)."""
    claims = list(claims)
    parts = []
    for task in tasks:
        c = _pick(claims, f"mem{n}_above_infgram_{task}")
        parts.append(f"{c.extra['k']} of {c.n} models on {task} {n}-grams ({_AGREE[c.status]}{_p(c)})")
    return ("The task-gram LM correlates at least as strongly as the ∞-gram LM for " + " and ".join(parts)
            + "; the source states it for TriviaQA and MMLU.")


def knowledge_sentence(t: Trend, claims: Iterable[Claim], n: int = 3) -> str:
    """The lab's answer to the source's central claim (TriviaQA ``Mem_3`` significant
    and rising with size), from the claims ``mem{n}_significant`` and ``mem{n}_rises``;
    the corpus's ties are named as the reason when most pairs are tied while the
    pair-count variant follows the counts."""
    claims = list(claims)
    sig, rises = _pick(claims, f"mem{n}_significant"), _pick(claims, f"mem{n}_rises")
    tied, count = _pick(claims, f"tied{n}_knowledge"), _pick(claims, f"count{n}_knowledge")
    name = mem_name(n)
    if not t.defined:
        return f"The lab's knowledge {name} is {range_text(t)}, so the claim cannot be checked here."
    if sig.status == REPRODUCED and rises.status == REPRODUCED:
        return (f"The lab's knowledge {name} ({range_text(t)}) is significant for every model and rises "
                f"with size (Spearman ρ with size {rises.value:+.2f}{_p(rises)}): this part of the paper's "
                "pattern reproduces on the lab.")
    moves = {REPRODUCED: ", and rises with size", NOT_REPRODUCED: ", and does not rise with size"}.get(
        rises.status, ", with no clear trend with size") if t.n_sig else ""
    text = (f"The lab's knowledge {name} ranges from {range_text(t)}, significant for {sig_text(t)} "
            f"models{moves}")
    if NOT_REPRODUCED not in (sig.status, rises.status):
        return text + f": too little evidence to decide this part of the paper's pattern ({sig.reason})."
    text += ": this part of the paper's pattern does not reproduce on the lab"
    if tied.status == NOT_REPRODUCED and count.status == REPRODUCED:
        text += (f", and the reason is the corpus, not the models: {fmt_pct(tied.value)} of the test pairs "
                 f"are tied, while the pair counts correlate significantly for {count.extra['pos']} of "
                 f"{count.n} models")
    return text + "."


def reasoning_sentence(t: Trend, claim: Claim) -> str:
    """The lab's answer to the source's GSM8K claim (no significant Mem_n at any
    size), as the claim ``mem{n}_reasoning_none`` decides it."""
    name = mem_name(claim.extra.get("mem_n", 3))
    if claim.status == NOT_TESTABLE:
        return f"The lab's reasoning {name} is {range_text(t)}, so the claim cannot be checked here."
    if claim.status == REPRODUCED:
        return (f"As in the source, the lab's reasoning {name} is significant for no model (values from "
                f"{range_text(t)}).")
    if claim.status == INCONCLUSIVE:
        return f"The lab's reasoning {name} ({range_text(t)}) cannot decide the claim ({claim.reason})."
    sign = {-1: " (negative: the models' probabilities run against the co-occurrence conditional)",
            1: " (positive: the models' probabilities follow the co-occurrence conditional)"}.get(
        claim.extra["sign"], " (of both signs)")
    return (f"Unlike the source, the lab's reasoning {name} is significant for {sig_text(t)} models, with "
            f"values from {range_text(t)}{sign}.")


def kendall_sentence(claim: Claim, k: Trend) -> str:
    """The source reads a Kendall tau distance that rises with size on GSM8K as
    generalization; whether the lab's reasoning distance does (the claim ``kendall{n}_rises``)."""
    n = claim.extra.get("mem_n", 3)
    if not k.defined:
        return f"The reasoning task's Kendall tau distance is {range_text(k)}."
    stats = f"Spearman ρ {trend_text(k)}{_p(claim)}"
    words = {REPRODUCED: f"rises with size ({stats}), as the source finds for GSM8K",
             NOT_REPRODUCED: f"does not rise with size ({stats}), unlike the source's GSM8K distance, "
                             "which rises with size"}.get(
        claim.status, f"shows no clear trend with size ({stats}; {claim.reason}), so the source's GSM8K rise "
                      "is not confirmed")
    return f"On reasoning {n}-grams the Kendall tau distance ranges from {range_text(k)} and {words}."


def sensitivity_sentence(claim: Claim) -> str:
    """The source finds Mem_n's trend with size the same at every γ; the lab's answer
    (the claim ``sensitivity{n}``), with the rank correlation at each threshold."""
    name = mem_name(claim.extra.get("mem_n", 3))
    rows = claim.extra.get("thresholds", [])
    per = "; ".join(f"{r['gamma']} ({r['pairs']:,} pairs): "
                    + (f"{r['size_rho']:+.2f}" if r["size_rho"] is not None else "undefined") for r in rows)
    if claim.status == REPRODUCED:
        return f"{name} rises significantly with size at every threshold, as the paper finds ({per})."
    if claim.status == NOT_REPRODUCED:
        return (f"{name}'s trend with size is not the same at every threshold, unlike the paper's "
                f"({claim.reason}).")
    if claim.status == NOT_TESTABLE:
        return f"{name} was not computed at any threshold."
    return (f"The threshold check cannot decide whether the paper's stability holds here: {claim.reason}. "
            f"The rank correlations of {name} with size are {per}.")


def kendall_inf_sentence(claim: Claim, k_tg: Trend, k_inf: Trend) -> str:
    """The ∞-gram LM's Kendall tau distance beside the task-gram LM's (the source's
    GSM8K: the larger against the ∞-gram LM), as the claim ``kendall{n}_inf_above`` decides it."""
    task, n = claim.extra.get("task", "reasoning"), claim.extra.get("mem_n", 3)
    if not k_inf.defined:
        return f"The {task} task's Kendall tau distance to the ∞-gram LM is {range_text(k_inf)}."
    return (f"Against the ∞-gram LM the {task} task's {n}-gram Kendall tau distance ranges from "
            f"{range_text(k_inf)}, against the task-gram LM from {range_text(k_tg)}; the ∞-gram distance is "
            f"the larger for {claim.extra['k']} of {claim.n} models ({_AGREE[claim.status]}{_p(claim)}; the "
            f"source: {claim.source_value}).")


_RISES = {REPRODUCED: "it rises with size", NOT_REPRODUCED: "it does not rise with size"}


def novelty_sentence(claims: Iterable[Claim], nov: pd.DataFrame) -> str:
    """How the share of novel generated pairs changes with size per task (the claims
    ``novelty_rises_{task}``), beside the source's WMT novelty."""
    claims = [c for c in claims if c.id.startswith("novelty_rises_")]
    if not claims:
        return "No model generated an n-gram pair to count."
    parts = []
    for c in claims:
        g = nov[nov["task"] == c.extra["task"]].sort_values("params", kind="stable")
        t = Trend(g["params"].to_numpy(float), g["novelty"].to_numpy(float), np.full(len(g), np.nan))
        if not t.defined:
            parts.append(f"on the {c.extra['task']} task it is undefined (no generated pair)")
            continue
        words = _RISES.get(c.status, f"no clear trend with size ({c.reason})" if c.status == INCONCLUSIVE
                           else "its trend with size is undefined")
        stats = (f"Spearman ρ with size {c.value:+.2f}{_p(c)}" if c.value is not None
                 else "no rank correlation")
        spread = (f"is {t.lo:.2f} for every model" if t.lo == t.hi and np.isfinite(t.rho).all()
                  else f"ranges from {range_text(t)}")
        parts.append(f"on the {c.extra['task']} task it {spread} ({stats}): {words}")
    return (f"The share of generated {NOVELTY_N}-gram pairs that never co-occur in the corpus: "
            + "; ".join(parts)
            + f". The source reads a rise with size as generalization ({claims[0].source_value}).")


def mmlu_lab_text(injected: int, families: Sequence[str], ladder_injects: bool) -> str:
    """Where the lab's MMLU text is (:func:`~analysis.distributional.run.mmlu_in_lab`),
    as the reason a split finds no co-occurring pair."""
    if ladder_injects or not injected:
        return ""
    return (f": the lab's {injected} MMLU questions are injected sequences, inserted only into its "
            f"{' and '.join(families)} runs, and no ladder model trains on them")


def mmlu_sentence(claim: Claim, splits: pd.DataFrame, mem: pd.DataFrame, subjects: Sequence[str],
                  lab_text: str = "") -> str:
    """One MMLU split: its candidate and co-occurring pairs, its Mem_n across the ladder
    where there is one, and the claim (``mmlu_mem_falls`` or ``mmlu_reasoning_below``)
    beside the source's value. ``lab_text`` is :func:`mmlu_lab_text`."""
    task, n = claim.extra["task"], claim.extra["mem_n"]
    r = splits[(splits["task"] == task) & (splits["n"] == n)].iloc[0]
    head = (f"The {task} split ({', '.join(subjects)}; {r['questions']:,} questions) has {r['candidates']:,} "
            f"candidate {n}-gram pairs")
    if not r["co-occurring"]:
        body = (f", none of which co-occurs in a document of the lab corpus{lab_text}, so it has no "
                f"{mem_name(n)}.")
    else:
        t = trend(mem, task, n)
        body = (f"; {r['co-occurring']:,} co-occur in the lab corpus (in {r['instances']:,} questions), and "
                f"its {mem_name(n)} over {claim.extra['pairs']:,} of them ranges from {range_text(t)}, "
                f"significant for {sig_text(t)} models, with a rank correlation with size of "
                f"{trend_text(t)}.")
    return f"{head}{body} {render(claim)} The source: {claim.source_value}."


def peak_sentence(perf: pd.DataFrame, task: str) -> str:
    """The best accuracy in any count bin of a performance table
    (:func:`~analysis.distributional.method_tables.performance_table`), with its model,
    bin and number of instances."""
    g = perf.dropna(subset=["accuracy"])
    if g.empty:
        return f"No {task} answer falls in a count bin."
    best = g.loc[g["accuracy"].idxmax()]
    return (f"The best {task} accuracy in any bin is {fmt_pct(best['accuracy'])} ({best['model']}, summed "
            f"pair counts {best['bin']}, {int(best['n'])} instances).")
