"""The distributional chapter's English: a claim rendered in the book's one voice
(:func:`render`, through :mod:`analysis.core.claim_text`), the paragraphs the chapter
glues (each sets its numbers beside a claim's :func:`~analysis.core.claim_text.verdict`
and decides nothing again), the count of its source claims per status, and the
formatting of its glued numbers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core import claim_text
from analysis.core.claim_text import verdict
from analysis.core.claims import NOT_TESTABLE, Claim
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
        return f"{fmt_pct(c.value)} of {c.n:,}" if c.n else fmt_pct(c.value)
    if unit == "difference":
        return f"{100 * c.value:+.1f} percentage points"
    if unit == "influence":
        lo, hi = c.interval or (float("nan"), float("nan"))
        return (f"a mean gap of {c.value:+.3g} [{lo:+.3g}, {hi:+.3g}] over {c.n_units} facts ({c.n:,} "
                f"documents; {c.extra['run']}, {c.extra['checkpoints']} checkpoints)")
    if unit == "counterfactual":
        lo, hi = c.interval or (float("nan"), float("nan"))
        return (f"a difference of {c.value:+.2f} nats [{lo:+.2f}, {hi:+.2f}] over {c.n_units} facts "
                f"({c.extra['run']}, {c.extra['removed']} facts removed)")
    if unit == "median_rho":
        return f"median ρ over the models {c.value:+.2f}"
    if unit == "accuracy_gap":
        lo, hi = c.interval or (float("nan"), float("nan"))
        return (f"memorization − generalization prompt {100 * c.value:+.1f} points [{100 * lo:+.1f}, "
                f"{100 * hi:+.1f}] over {c.n_units:,} {c.unit}, the mean of {c.extra['models']} models")
    if unit == "min_size_rho":
        return f"smallest Spearman ρ with size {c.value:+.2f}"
    if c.id.startswith("mem") and c.id.endswith("_significant"):
        return f"the weakest model's ρ {c.value:+.2f}"
    if c.interval:
        return (f"Spearman ρ with size {c.value:+.2f} (95% interval {c.interval[0]:+.2f} to "
                f"{c.interval[1]:+.2f} over resampled facts or problems)")
    return f"Spearman ρ with size {c.value:+.2f}"


def render(claim: Claim) -> str:
    """One claim as Markdown, in the book's one voice (:func:`analysis.core.claim_text.render`),
    with this run's value worded for the chapter."""
    return claim_text.render(claim, _value_text(claim) or None)


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




def units_sentence(tables: Mapping[tuple, pd.DataFrame], n: int, n_facts: int, n_problems: int) -> str:
    """What the Mem_n p-values rest on: the facts and problems behind the pairs."""
    k, r = tables.get(("knowledge", n)), tables.get(("reasoning", n))
    parts = []
    if k is not None:
        parts.append(f"the knowledge task's {len(k):,} {n}-gram pairs come from "
                     f"{k['instance'].nunique():,} of "
                     f"the {n_facts:,} facts")
    if r is not None:
        parts.append(f"the reasoning task's {len(r):,} from {r['instance'].nunique():,} of the "
                     f"{n_problems:,} "
                     "problems")
    return ("; ".join(parts) + ".") if parts else ""


# ---------------------------------------------------------------------------
# The embedding filter
# ---------------------------------------------------------------------------


def _share(k: int, total: int) -> str:
    return fmt_pct(k / total) if total else "—"


def filter_sentence(counts: Mapping[str, int], claims: Iterable[Claim], label: str) -> str:
    """What the two thresholds do to the candidates of one (task, n) (from
    :func:`~analysis.distributional.method_tables.filter_counts`), with the claims
    ``authors_filter`` and ``paper_filter``, and how many co-occurring pairs each leaves."""
    claims = list(claims)
    authors_c, paper_c = _pick(claims, "authors_filter"), _pick(claims, "paper_filter")
    total, authors, paper = counts["total"], counts["authors"], counts["paper"]
    return (f"That threshold keeps {authors:,} of the {total:,} candidates of {label} "
            f"({_share(authors, total)}), which the book reads as a filter in name only: "
            f"{verdict(authors_c)} "
            f"The paper's stated threshold keeps {paper:,} ({_share(paper, total)}): {verdict(paper_c)} "
            "Of the "
            f"pairs that co-occur in the corpus, {counts['paper_co']:,} survive the paper's threshold and "
            f"{counts['none_co']:,} are kept without a filter.")


def authors_sentence(counts: Mapping[str, int], claims: Iterable[Claim]) -> str:
    """The authors' effective threshold in numbers; the main analysis follows their code."""
    total, authors = counts["total"], counts["authors"]
    _pick(claims, "authors_filter")
    return (f"The authors' effective threshold keeps {authors:,} of {total:,} candidates; the chapter's main "
            "numbers use every co-occurring pair, the filter the authors' code effectively ran.")


# ---------------------------------------------------------------------------
# Performance against counts
# ---------------------------------------------------------------------------


def accuracy_sentence(acc: pd.DataFrame, claims: Iterable[Claim]) -> str:
    """The accuracy paragraph: the largest and the smallest model's knowledge
    accuracy, the claim ``accuracy_size`` and the best reasoning accuracy. ``acc`` is
    the accuracy table, smallest model first."""
    c = _pick(claims, "accuracy_size")
    small, big = acc.iloc[0], acc.iloc[-1]
    stats = f" (Spearman ρ with size {c.value:+.2f}{_p(c)})" if c.value is not None else ""
    return (f"The largest model, {big['model']}, answers {fmt_pct(big['knowledge accuracy'])} of the facts "
            f"and the smallest, {small['model']}, {fmt_pct(small['knowledge accuracy'])}. Whether knowledge "
            f"accuracy rises with size{stats}: {verdict(c)} No model solves more than "
            f"{fmt_pct(acc['reasoning accuracy'].max())} of the new arithmetic problems.")


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
    the two verdicts."""
    claims = list(claims)
    rise, size = _pick(claims, "copies_rise"), _pick(claims, "copies_size")
    if rise.value is None:
        return f"No model has a scorable answer on the most-copied facts. {verdict(rise)}"
    x = rise.extra
    if x["none_recalled"]:
        return (f"no model recalls any of the facts seen {x['top']} times, and none more than "
                f"{fmt_pct(x['best_any'])} of any bin. {verdict(rise)} Recall on the most-copied facts "
                "against "
                f"size: {verdict(size)}")
    low_words = "once" if x["low"] == "1" else f"{x['low']} times"
    by_family, budgets = _families(by_copies, ladder)
    stats = f" (Spearman ρ {size.value:+.2f}{_p(size)})" if size.value is not None else ""
    return (f"{x['model']} recalls {fmt_pct(x['hi'])} of the facts seen {x['top']} times and "
            f"{fmt_pct(x['lo'])} of those seen {low_words} (Fisher's exact test{_p(rise)}): {verdict(rise)} "
            f"By family, on the most-copied facts: {by_family}{budgets}. Recall on them against size{stats}: "
            f"{verdict(size)}")


# ---------------------------------------------------------------------------
# Distributional memorization across the ladder
# ---------------------------------------------------------------------------


def mem_sentence(t: Trend, task: str, n: int, claims: Iterable[Claim] = ()) -> str:
    """One task's Mem_n across the ladder: its range, how many models are significant
    (cluster permutation), its rank correlation with size, and the claim
    ``mem{n}_rises`` when there is one for ``task``."""
    name = mem_name(n)
    if not t.defined:
        return f"For the {task} task, {name} is {range_text(t)}."
    c = next((c for c in claims if c.id == f"mem{n}_rises" and c.extra.get("task") == task), None)
    head = (f"For the {task} task, {name} ranges from {range_text(t)} and is significant (cluster "
            "permutation) "
            f"for {sig_text(t)} models; its rank correlation with model size is {trend_text(t)}"
            + (_p(c) if c else ""))
    return head + (f". Whether it rises with size: {verdict(c)}" if c else ".")


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
    """The share of tied pairs (``P(s^y | s^x) = 1``), which the rank correlation cannot
    order, with the claim ``tied{n}_{task}``."""
    x, share = claim.extra, claim.value
    task, n = x["task"], x["mem_n"]
    if share is None:
        return f"The {task} task has no {n}-gram test pair."
    top = x.get("max_abs_mem")
    mem = f"; {mem_name(n)} reaches |ρ| = {top:.2f}" if top is not None else ""
    return (f"{fmt_pct(share)} of the {task} task's {n}-gram test pairs have P(s^y | s^x) = 1: their input "
            "n-gram occurs only in documents that also hold the output n-gram, so C(s^x) = C((s^x, s^y)) "
            f"whatever the copies{mem}. Whether fewer than half are tied: {verdict(claim)}")


def count_sentence(claim: Claim, c: Trend) -> str:
    """The pair-count variant (beyond the paper) across the ladder, with the claim
    ``count{n}_{task}``."""
    task, n = claim.extra["task"], claim.extra["mem_n"]
    head = ("With the pair count C((s^x, s^y)) in place of the conditional, a variant beyond the paper "
            f"(dotted in the figure), the {task} task's {n}-gram correlation ")
    if not c.defined:
        return head + f"is {range_text(c)}."
    return head + (f"ranges from {range_text(c)}, significant (cluster permutation) for {sig_text(c)} "
                   "models, "
                   f"with a rank correlation with size of {trend_text(c)}: {verdict(claim)}")


def lm_sentence(claims: Iterable[Claim], n: int, tasks: Sequence[str] = ("knowledge", "reasoning")) -> str:
    """The source finds Mem_n ≥ Mem_∞ (on TriviaQA and MMLU); per task, for how many
    models the lab agrees, and the claims ``mem{n}_above_infgram_{task}``."""
    claims = list(claims)
    parts = []
    for task in tasks:
        c = _pick(claims, f"mem{n}_above_infgram_{task}")
        parts.append(f"On {task} {n}-grams the task-gram LM correlates at least as strongly as the ∞-gram LM "
                     f"for {c.extra['k']} of {c.n} models{_p(c)}: {verdict(c)}")
    return " ".join(parts) + " The source states it for TriviaQA and MMLU."


def knowledge_sentence(t: Trend, claims: Iterable[Claim], n: int = 3) -> str:
    """The lab's answer to the source's central claim (TriviaQA ``Mem_3`` significant
    and rising with size): the claims ``mem{n}_significant`` and ``mem{n}_rises``."""
    claims = list(claims)
    sig, rises = _pick(claims, f"mem{n}_significant"), _pick(claims, f"mem{n}_rises")
    name = mem_name(n)
    if not t.defined:
        return f"The lab's knowledge {name} is {range_text(t)}, so the claim cannot be checked here."
    return (f"The lab's knowledge {name} ranges from {range_text(t)}, significant (cluster permutation over "
            f"the facts) for {sig_text(t)} models. Significant for every model: {verdict(sig)} Rising with "
            f"size: {verdict(rises)}")


def reasoning_sentence(t: Trend, claim: Claim) -> str:
    """The lab's answer to the source's GSM8K claim (no significant Mem_n at any
    size), with the claim ``mem{n}_reasoning_none``."""
    name = mem_name(claim.extra.get("mem_n", 3))
    if not t.defined:
        return f"The lab's reasoning {name} is {range_text(t)}, so the claim cannot be checked here."
    sign = {-1: " (negative: the models' probabilities run against the co-occurrence conditional)",
            1: " (positive: the models' probabilities follow the co-occurrence conditional)"}.get(
        claim.extra.get("sign", 0), "") if claim.extra.get("k") else ""
    return (f"The lab's reasoning {name} ranges from {range_text(t)}; {claim.extra.get('k', 0)} of "
            f"{t.n_models} "
            f"models are significant after Holm's correction over the models{sign}. {verdict(claim)}")


def kendall_sentence(claim: Claim, k: Trend) -> str:
    """The source reads a Kendall tau distance that rises with size on GSM8K as
    generalization; the lab's reasoning distance and the claim ``kendall{n}_rises``."""
    n = claim.extra.get("mem_n", 3)
    if not k.defined:
        return f"The reasoning task's Kendall tau distance is {range_text(k)}."
    return (f"On reasoning {n}-grams the Kendall tau distance ranges from {range_text(k)} (Spearman ρ "
            "with size "
            f"{trend_text(k)}{_p(claim)}). Whether it rises with size, as the source finds for GSM8K: "
            f"{verdict(claim)}")


def sensitivity_sentence(claim: Claim) -> str:
    """The source finds Mem_n's trend with size the same at every γ; the claim
    ``sensitivity{n}``, with the rank correlation at each threshold."""
    name = mem_name(claim.extra.get("mem_n", 3))
    rows = claim.extra.get("thresholds", [])
    if not rows:
        return f"{name} was not computed at any threshold. {verdict(claim)}"
    per = "; ".join(f"{r['gamma']} ({r['pairs']:,} pairs): "
                    + (f"{r['size_rho']:+.2f}" if r["size_rho"] is not None else "undefined") for r in rows)
    return f"The rank correlations of {name} with size per threshold are {per}. {verdict(claim)}"


def kendall_inf_sentence(claim: Claim, k_tg: Trend, k_inf: Trend) -> str:
    """The ∞-gram LM's Kendall tau distance beside the task-gram LM's (the source's
    GSM8K: the larger against the ∞-gram LM), with the claim ``kendall{n}_inf_above``."""
    task, n = claim.extra.get("task", "reasoning"), claim.extra.get("mem_n", 3)
    if not k_inf.defined:
        return f"The {task} task's Kendall tau distance to the ∞-gram LM is {range_text(k_inf)}."
    return (f"Against the ∞-gram LM the {task} task's {n}-gram Kendall tau distance ranges from "
            f"{range_text(k_inf)}, against the task-gram LM from {range_text(k_tg)}; the ∞-gram distance is "
            f"the larger for {claim.extra['k']} of {claim.n} models{_p(claim)} (the source: "
            f"{claim.source_value}). {verdict(claim)}")


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
            parts.append(f"On the {c.extra['task']} task it is undefined (no generated pair). {verdict(c)}")
            continue
        stats = (f"Spearman ρ with size {c.value:+.2f}{_p(c)}" if c.value is not None
                 else "no rank correlation")
        spread = (f"is {t.lo:.2f} for every model" if t.lo == t.hi and np.isfinite(t.rho).all()
                  else f"ranges from {range_text(t)}")
        parts.append(f"On the {c.extra['task']} task it {spread} ({stats}). {verdict(c)}")
    return (f"The share of generated {NOVELTY_N}-gram pairs that never co-occur in the corpus. "
            + " ".join(parts)
            + f" The source reads a rise with size on its translation task as generalization "
              f"({claims[0].extra.get('source') or '—'}).")


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
    return f"{head}{body} {render(claim)}"


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


# ---------------------------------------------------------------------------
# Answer frequency, units, and the source's scoring rules
# ---------------------------------------------------------------------------


def partial_range(pm: pd.DataFrame, task: str = "knowledge", n: int = 3, arm: str = "task") -> str:
    """``'lo–hi'`` of the partial Mem_n over the ladder (two decimals), or why there is none."""
    g = pm[(pm["task"] == task) & (pm["n"] == n) & (pm["arm"] == arm)]["partial"].to_numpy(float)
    g = g[np.isfinite(g)]
    return f"{g.min():.2f}–{g.max():.2f}" if len(g) else "undefined"


def partial_sentence(claim: Claim, pm: pd.DataFrame) -> str:
    """The plain and the partial Mem_n (``log C(s^y)`` held fixed) of the claim
    ``mem{n}_partial_{task}``, on the task and on the answers-swapped set, with the
    verdict; says when the Mem survives only without the control for answer frequency."""
    task, n = claim.extra.get("task", "knowledge"), claim.extra.get("mem_n", 3)
    name = mem_name(n)
    if claim.status == NOT_TESTABLE:
        return f"The partial {name} of the {task} task is not defined. {verdict(claim)}"
    x = claim.extra
    iv = f" (95% interval over {claim.unit} {claim.interval[0]:.2f} to {claim.interval[1]:.2f})" \
        if claim.interval else ""
    ctrl = (f"On the answers-swapped set ({x['control_pairs']:,} co-occurring pairs) the median partial "
            f"{name} is {claim.control_value:.2f}." if claim.control_value is not None else
            "The answers-swapped set has too few co-occurring pairs for a partial correlation.")
    tail = (f" The plain {name} is significant and the partial one is not: an answer-frequency effect, "
            "not a memory of the pairs." if x.get("answer_frequency") else "")
    return (f"Holding the answer n-gram's corpus count log C(s^y) fixed, the {task} task's {name} lies in "
            f"{partial_range(pm, task, n)} over the ladder (plain: median "
            f"{'undefined' if x.get('plain') is None else format(x['plain'], '.2f')}); the median "
            f"over the models is {claim.value:.2f}{iv}. {ctrl}{tail} {verdict(claim)}")


def distinct_sentence(distinct: pd.DataFrame, n: int = 3) -> str:
    """How many distinct model values the pairs of each task's ``n``-gram table carry."""
    parts = []
    for r in distinct[distinct["n"] == n].itertuples(index=False):
        span = (f"{r.distinct_min:,}" if r.distinct_min == r.distinct_max
                else f"{r.distinct_min:,} to {r.distinct_max:,}")
        parts.append(f"the {r.task} task's {r.pairs:,} {n}-gram pairs, from {r.units:,} "
                     f"{'facts' if r.task == 'knowledge' else 'problems'}, carry {span} distinct model "
                     "values (over the models)")
    return ("; ".join(parts) + ".") if parts else ""


def noncontiguous_sentence(shares: Mapping[tuple, float]) -> str:
    """The share of each (task, n)'s pairs whose output n-gram is not contiguous in the output."""
    parts = [f"{fmt_pct(v)} of the {task} task's {n}-gram pairs" for (task, n), v in shares.items()
             if np.isfinite(v)]
    return ", ".join(parts) if parts else "none of the pairs"


def _influence_gap_text(est, missing: str) -> str:
    """An influence gap with its interval and facts, or ``missing`` when there is none."""
    if est is None or not np.isfinite(est.value):
        return missing
    if est.interval is None:
        return f"{est.value:+.3g} over {est.n_units} facts (no interval: too few facts)"
    return f"{est.value:+.3g} [{est.lo:+.3g}, {est.hi:+.3g}] over {est.n_units} facts"


def influence_values(est, table: pd.DataFrame, summary: Mapping[str, int], run: str, n_checkpoints: int,
                     r: int, control=None) -> dict[str, str]:
    """The influence section's glued text: ``influence_pair_minus_output`` (the mean gap
    with its interval and facts), ``influence_control`` (the same gap on the
    answers-swapped test examples), the run, checkpoints, documents retrieved and the
    table's per-way means."""
    gap = _influence_gap_text(est, "not computed: no fact has documents of both ways")
    ctrl = _influence_gap_text(control, "not computed")
    means = {w: f"{m:.3g}" for w, m in zip(table["way"], table["mean influence"])} if len(table) else {}
    return {"influence_pair_minus_output": gap, "influence_control": ctrl, "influence_run": run,
            "influence_checkpoints": f"{n_checkpoints}", "influence_r": f"{r}", "influence_source_r": "50",
            "influence_facts_both": f"{summary['facts_both']:,}",
            "influence_facts": f"{summary['facts']:,}", "influence_pair_mean": means.get("pair", "—"),
            "influence_output_mean": means.get("output", "—")}


def counterfactual_values(est, base, counter, removed, run: str) -> dict[str, str]:
    """The counterfactual's glued text: ``counterfactual_drop`` (the difference with its
    interval), the mean change of each half and the run."""
    base, counter, removed = np.asarray(base, float), np.asarray(counter, float), np.asarray(removed, bool)
    delta = counter - base
    gap = ("not computed: too few facts scored in either half" if est is None or not np.isfinite(est.value)
           else f"{est.value:+.2f} nats [{est.lo:+.2f}, {est.hi:+.2f}] over {est.n_units} facts")
    return {"counterfactual_drop": gap, "counterfactual_run": run,
            "counterfactual_removed": f"{int(removed.sum()):,}",
            "counterfactual_kept": f"{int((~removed).sum()):,}",
            "counterfactual_removed_delta": f"{np.nanmean(delta[removed]):+.2f}",
            "counterfactual_kept_delta": f"{np.nanmean(delta[~removed]):+.2f}"}


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def prompt_opt_values(task: str, est, control, table: pd.DataFrame, arms: Mapping[str, object],
                      unit: str) -> dict[str, str]:
    """The prompt-optimization section's glued text for ``task``: ``prompt_opt_<task>``
    (the accuracy gap, memorization − generalization, in points, with its interval and
    units), the two templates, their corpus scores and the control's gap (scored against
    another instance's answer)."""
    key = f"prompt_opt_{task}"
    if est is None or not np.isfinite(est.value):
        gap = "not computed: no instance answered in both arms"
    elif est.interval is None:
        gap = f"{_points(est.value)} points over {est.n_units:,} {unit} (no interval)"
    else:
        gap = (f"{_points(est.value)} points [{_points(est.lo)}, {_points(est.hi)}] over {est.n_units:,} "
               f"{unit}, {len(table)} models")
    ctrl = ("—" if control is None or not np.isfinite(control.value) else
            f"{_points(control.value)} points" + (f" [{_points(control.lo)}, {_points(control.hi)}]"
                                                  if control.interval else ""))
    scores = arms["scores"].set_index("template")["score"]
    show = {arm: str(arms[arm]).replace("{question}", "…") for arm in ("memorization", "generalization")}
    return {key: gap, f"{key}_control": ctrl,
            f"{key}_memorization": show["memorization"], f"{key}_generalization": show["generalization"],
            f"{key}_memorization_score": f"{scores[arms['memorization']]:.2f}",
            f"{key}_generalization_score": f"{scores[arms['generalization']]:.2f}",
            f"{key}_candidates": f"{len(scores)}",
            f"{key}_skipped": f"{int(arms['scores']['contaminated'].sum())}",
            f"{key}_higher": f"{int((table['difference'] > 0).sum())} of {len(table)}" if len(table) else "—"}


def prompt_opt_glue(arms: Mapping[str, dict], gaps: Mapping[str, tuple], controls: Mapping[str, object],
                    n_problems: int) -> dict[str, str]:
    """Every task's :func:`prompt_opt_values`, and ``prompt_opt_n`` (the reasoning problems asked)."""
    out = {"prompt_opt_n": f"{n_problems:,}"}
    for task in arms:
        out |= prompt_opt_values(task, gaps[task][0], controls[task], gaps[task][1], arms[task],
                                 "facts" if task == "knowledge" else "problems")
    return out
