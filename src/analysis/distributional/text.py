"""The distributional chapter's English: each function gathers a sentence's numbers and
claims and renders its macro in ``sentences.j2`` (wording and formatting live there);
:func:`render` words a claim in the book's one voice (:mod:`analysis.core.claim_text`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import product

import numpy as np
import pandas as pd

from analysis.core import claim_text, prose
from analysis.core.claim_text import verdict
from analysis.core.claims import NOT_TESTABLE, Claim
from analysis.distributional import params
from analysis.distributional.method_trends import Trend, above_infgram, trend

S = prose.sentences("distributional", **prose.constants(params), verdict=verdict)


def mem_name(n) -> str:
    """``Mem₃`` for n = 3, ``Mem∞`` for the ∞-gram LM: the measure's name in glued prose."""
    return S.mem_name(n=n)


def fmt_params(n: float) -> str:
    """A parameter count for prose: ``24656 -> '25K'``, ``163840 -> '0.16M'``, ``4.07e6 -> '4.1M'``."""
    return S.fmt_params(n=float(n))


def range_text(t: Trend) -> str:
    """``'lo to hi'`` (two decimals), or why there is none."""
    return S.range_text(t=t)


def mem_glue(mem: pd.DataFrame, tasks: Sequence[str], sizes: Sequence[int]) -> dict[str, str]:
    """The Mem section's ``{task}_{n}_`` range, sig, trend, above_inf, count_range and count_trend."""
    out = {}
    for task, n in product(tasks, sizes):
        t, c = trend(mem, task, n), trend(mem, task, n, lm="pair count")
        above, total = above_infgram(mem, task, n)
        out |= {f"{task}_{n}_range": range_text(t), f"{task}_{n}_sig": f"{t.n_sig} of {t.n_models}",
                f"{task}_{n}_trend": S.trend_text(t=t), f"{task}_{n}_above_inf": f"{above} of {total}",
                f"{task}_{n}_count_range": range_text(c), f"{task}_{n}_count_trend": S.trend_text(t=c)}
    return out


def render(claim: Claim) -> str:
    """One claim as Markdown in the book's one voice, with this run's value worded for the chapter."""
    return claim_text.render(claim, S.value_text(c=claim) or None)


def _pick(claims: Iterable[Claim], id: str) -> Claim:
    found = {c.id: c for c in claims}
    if id not in found:
        raise KeyError(f"no claim {id!r} among {sorted(found)}")
    return found[id]


def untestable_sentence(claims: Iterable[Claim]) -> str:
    """The source's claims the lab cannot test, one rendering each."""
    return " ".join(render(c) for c in claims if c.status == NOT_TESTABLE)


def units_sentence(tables: Mapping[tuple, pd.DataFrame], n: int, n_facts: int, n_problems: int) -> str:
    """What the Mem_n p-values rest on: the facts and problems behind the pairs."""
    k, r = (tables.get((task, n)) for task in ("knowledge", "reasoning"))
    return S.units(n=n, n_facts=n_facts, n_problems=n_problems,
                   knowledge=None if k is None else (len(k), k["instance"].nunique()),
                   reasoning=None if r is None else (len(r), r["instance"].nunique()))


def filter_sentence(counts: Mapping[str, int], claims: Iterable[Claim], label: str) -> str:
    """What the two thresholds keep of one (task, n)'s candidates (``authors_filter``, ``paper_filter``)."""
    claims = list(claims)
    return S.filter(c=counts, label=label, authors=_pick(claims, "authors_filter"),
                    paper=_pick(claims, "paper_filter"))


def authors_sentence(counts: Mapping[str, int], claims: Iterable[Claim]) -> str:
    """The authors' effective threshold in numbers; the main analysis follows their code."""
    _pick(claims, "authors_filter")
    return S.authors(total=counts["total"], authors=counts["authors"])


def accuracy_sentence(acc: pd.DataFrame, claims: Iterable[Claim]) -> str:
    """The accuracy paragraph (``acc``: the accuracy table, smallest model first), with ``accuracy_size``."""
    return S.accuracy(c=_pick(claims, "accuracy_size"), small=acc.iloc[0], big=acc.iloc[-1],
                      best=acc["reasoning accuracy"].max())


def copies_sentence(by_copies: pd.DataFrame, ladder: pd.DataFrame, claims: Iterable[Claim]) -> str:
    """Recall against copies and each family's best on the most-copied facts (``copies_rise``, ``_size``)."""
    claims = list(claims)
    rise, size = _pick(claims, "copies_rise"), _pick(claims, "copies_size")
    best, tokens = {}, {}
    if rise.value is not None and not rise.extra["none_recalled"]:
        col = by_copies[[c for c in by_copies.columns if c != "params"][-1]].astype(float)
        fam = ladder.set_index("model")["family"].reindex(col.index).to_numpy()
        best, tokens = dict(col.groupby(fam).max().sort_index()), ladder.groupby("family")["tokens"].first()
        tokens = dict(tokens) if tokens.nunique() > 1 else {}
    return S.copies(rise=rise, size=size, best=best, tokens=tokens)


def mem_sentence(t: Trend, task: str, n: int, claims: Iterable[Claim] = ()) -> str:
    """One task's Mem_n across the ladder, with the claim ``mem{n}_rises`` for ``task`` when there is one."""
    c = next((c for c in claims if c.id == f"mem{n}_rises" and c.extra.get("task") == task), None)
    return S.mem(t=t, task=task, n=n, c=c)


def undefined_sentence(mem: pd.DataFrame, filt: str = "no filter") -> str:
    """Which (task, n, corpus LM) have no defined correlation for any model, and why (the rows' ``note``)."""
    keys = ["task", "n", "lm"]
    g = mem[mem["filter"] == filt].groupby(keys, sort=False).filter(lambda t: t["rho"].isna().all())
    groups = g.groupby(keys, sort=False)
    return S.undefined(parts=[(lm, task, n, t["note"].iloc[0]) for (task, n, lm), t in groups])


def ties_sentence(claim: Claim) -> str:
    """The share of tied pairs (``P(s^y | s^x) = 1``), with the claim ``tied{n}_{task}``."""
    return S.ties(c=claim)


def count_sentence(claim: Claim, c: Trend) -> str:
    """The pair-count variant (beyond the paper) across the ladder, with the claim ``count{n}_{task}``."""
    return S.count(claim=claim, t=c)


def lm_sentence(claims: Iterable[Claim], n: int, tasks: Sequence[str] = ("knowledge", "reasoning")) -> str:
    """Per task, for how many models Mem_n ≥ Mem_∞ (the claims ``mem{n}_above_infgram_{task}``)."""
    claims = list(claims)
    return S.lm(n=n, pairs=[(task, _pick(claims, f"mem{n}_above_infgram_{task}")) for task in tasks])


def knowledge_sentence(t: Trend, claims: Iterable[Claim], n: int = 3) -> str:
    """The source's central claim: the claims ``mem{n}_significant`` and ``mem{n}_rises``."""
    claims = list(claims)
    sig, rises = _pick(claims, f"mem{n}_significant"), _pick(claims, f"mem{n}_rises")
    return S.knowledge(t=t, n=n, sig=sig, rises=rises)


def reasoning_sentence(t: Trend, claim: Claim) -> str:
    """The source's GSM8K claim (no significant Mem_n), with the claim ``mem{n}_reasoning_none``."""
    return S.reasoning(t=t, c=claim)


def kendall_sentence(claim: Claim, k: Trend) -> str:
    """The reasoning task's Kendall tau distance across the ladder, with the claim ``kendall{n}_rises``."""
    return S.kendall(c=claim, t=k)


def sensitivity_sentence(claim: Claim) -> str:
    """Mem_n's rank correlation with size at each γ, with the claim ``sensitivity{n}``."""
    return S.sensitivity(c=claim)


def kendall_inf_sentence(claim: Claim, k_tg: Trend, k_inf: Trend) -> str:
    """The ∞-gram LM's Kendall tau distance beside the task-gram LM's (``kendall{n}_inf_above``)."""
    return S.kendall_inf(c=claim, k_tg=k_tg, k_inf=k_inf)


def novelty_sentence(claims: Iterable[Claim], nov: pd.DataFrame) -> str:
    """The share of novel generated pairs against size per task (``novelty_rises_{task}``)."""
    rows = []
    for c in (c for c in claims if c.id.startswith("novelty_rises_")):
        g = nov[nov["task"] == c.extra["task"]].sort_values("params", kind="stable")
        params, novelty = g["params"].to_numpy(float), g["novelty"].to_numpy(float)
        rows.append((c, Trend(params, novelty, np.full(len(g), np.nan))))
    return S.novelty(rows=rows)


def mmlu_lab_text(injected: int, families: Sequence[str], ladder_injects: bool) -> str:
    """Where the lab's MMLU text is (:func:`~analysis.distributional.run.mmlu_in_lab`), as a reason."""
    return S.mmlu_lab(injected=injected, families=families, ladder_injects=ladder_injects)


def mmlu_sentence(claim: Claim, splits: pd.DataFrame, mem: pd.DataFrame, subjects: Sequence[str],
                  lab_text: str = "") -> str:
    """One MMLU split's pairs and Mem_n, then its claim (``lab_text``: :func:`mmlu_lab_text`)."""
    task, n = claim.extra["task"], claim.extra["mem_n"]
    r = splits[(splits["task"] == task) & (splits["n"] == n)].iloc[0]
    return S.mmlu(c=claim, r=r, subjects=subjects, lab_text=lab_text, rendered=render(claim),
                  t=trend(mem, task, n) if r["co-occurring"] else None)


def peak_sentence(perf: pd.DataFrame, task: str) -> str:
    """The best accuracy in any count bin of a performance table, with its model, bin and instances."""
    g = perf.dropna(subset=["accuracy"])
    return S.peak(task=task, best=None if g.empty else g.loc[g["accuracy"].idxmax()])


def partial_range(pm: pd.DataFrame, task: str = "knowledge", n: int = 3, arm: str = "task") -> str:
    """``'lo–hi'`` of the partial Mem_n over the ladder (two decimals), or ``'undefined'``."""
    g = pm[(pm["task"] == task) & (pm["n"] == n) & (pm["arm"] == arm)]["partial"].to_numpy(float)
    return S.partial_range(values=g[np.isfinite(g)].tolist())


def partial_sentence(claim: Claim, pm: pd.DataFrame) -> str:
    """The plain and the partial Mem_n of the claim ``mem{n}_partial_{task}``, its control and verdict."""
    span = partial_range(pm, claim.extra.get("task", "knowledge"), claim.extra.get("mem_n", 3))
    return S.partial(c=claim, testable=claim.status != NOT_TESTABLE, span=span)


def distinct_sentence(distinct: pd.DataFrame, n: int = 3) -> str:
    """How many distinct model values the pairs of each task's ``n``-gram table carry."""
    return S.distinct(rows=list(distinct[distinct["n"] == n].itertuples(index=False)), n=n)


def noncontiguous_sentence(shares: Mapping[tuple, float]) -> str:
    """The share of each (task, n)'s pairs whose output n-gram is not contiguous in the output."""
    return S.noncontiguous(shares=shares)


def influence_values(est, table: pd.DataFrame, summary: Mapping[str, int], run: str, n_checkpoints: int,
                     r: int, control=None) -> dict[str, str]:
    """The influence section's glued text (``influence_…``): the gap, its control, the run and the counts."""
    means = {w: f"{m:.3g}" for w, m in zip(table["way"], table["mean influence"])} if len(table) else {}
    return {"influence_pair_minus_output": S.influence_gap(est=est, control=False),
            "influence_control": S.influence_gap(est=control, control=True), "influence_run": run,
            "influence_checkpoints": f"{n_checkpoints}", "influence_r": f"{r}", "influence_source_r": "50",
            "influence_facts_both": f"{summary['facts_both']:,}",
            "influence_facts": f"{summary['facts']:,}", "influence_pair_mean": means.get("pair", "—"),
            "influence_output_mean": means.get("output", "—")}


def counterfactual_values(est, base, counter, removed, run: str) -> dict[str, str]:
    """The counterfactual's glued text: the difference with its interval, each half's mean change, the run."""
    base, counter, removed = np.asarray(base, float), np.asarray(counter, float), np.asarray(removed, bool)
    delta = counter - base
    return {"counterfactual_drop": S.counterfactual_drop(est=est), "counterfactual_run": run,
            "counterfactual_removed": f"{int(removed.sum()):,}",
            "counterfactual_kept": f"{int((~removed).sum()):,}",
            "counterfactual_removed_delta": f"{np.nanmean(delta[removed]):+.2f}",
            "counterfactual_kept_delta": f"{np.nanmean(delta[~removed]):+.2f}"}


def prompt_opt_values(task: str, est, control, table: pd.DataFrame, arms: Mapping[str, object],
                      unit: str) -> dict[str, str]:
    """The prompt-optimization section's glued text for ``task`` (``prompt_opt_<task>…``)."""
    key, scores = f"prompt_opt_{task}", arms["scores"].set_index("template")["score"]
    show = {arm: str(arms[arm]).replace("{question}", "…") for arm in ("memorization", "generalization")}
    return {key: S.prompt_gap(est=est, unit=unit, models=len(table)),
            f"{key}_control": S.prompt_control(est=control),
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
