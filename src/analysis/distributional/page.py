"""What each section of the distributional chapter glues, formatted for the page.

One function per section of ``notebooks/distributional.md``, named after it, each
returning ``{"text": {name: str}, "md": {name: markdown}}`` for
:func:`analysis.book.report.glue_page`: the numbers the page shows, formatted here
(so a glued name is found by searching this module), and the sentences the
chapter's :mod:`.text` writes. A few helpers give the tables that need more than a
format (a caption, a concatenation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from analysis import ngrams as G
from analysis.core.claim_text import counts_sentence
from analysis.core.claims import Claim
from analysis.core.fmt import fmt_pct
from analysis.distributional.influence import fact_documents_summary, influence_table
from analysis.distributional.method import noncontiguous_shares, tied_share
from analysis.distributional.method_tables import facts_per_copies_bin
from analysis.distributional.method_trends import significant_positive, trend
from analysis.distributional.params import (
    CHAPTER_THRESHOLDS,
    E5_COSINE_RANGE,
    MMLU_SPLITS,
    N_PERM,
    SOURCE_KENDALL,
    SOURCE_MODELS,
)
from analysis.distributional.source_rules import e5_keep_rate, stopwords_source
from analysis.distributional.text import (
    accuracy_sentence,
    authors_sentence,
    copies_sentence,
    count_sentence,
    counterfactual_values,
    distinct_sentence,
    filter_sentence,
    fmt_params,
    influence_values,
    kendall_inf_sentence,
    kendall_sentence,
    knowledge_sentence,
    lm_sentence,
    mem_glue,
    mem_sentence,
    mmlu_lab_text,
    mmlu_sentence,
    noncontiguous_sentence,
    novelty_sentence,
    partial_range,
    partial_sentence,
    peak_sentence,
    prompt_opt_glue,
    range_text,
    reasoning_sentence,
    sensitivity_sentence,
    ties_sentence,
    undefined_sentence,
    units_sentence,
    untestable_sentence,
)
from analysis.lab.corpus import N_PROBLEM_TEMPLATES

Page = dict[str, dict[str, str]]


def method() -> Page:
    """``src_models``, ``n_templates``, ``stopwords_source``, ``e5_range``: the stand-ins."""
    return {"text": {"src_models": SOURCE_MODELS, "n_templates": str(N_PROBLEM_TEMPLATES),
                     "stopwords_source": stopwords_source(),
                     "e5_range": "{:.1f}–{:.1f}".format(*E5_COSINE_RANGE)}}


def setup(know: pd.DataFrame, reas: pd.DataFrame, ladder_runs: pd.DataFrame, counts) -> Page:
    """``n_facts``, ``n_problems``, ``n_models``, ``min_``/``max_copies``, ``min_``/``max_mentions``,
    ``knowledge_prompt_overlap`` (8-grams), ``knowledge_prompt_overlap_14``, ``lab_range``,
    ``t_doc``, ``t_inf``."""
    return {"text": {
        "n_facts": str(len(know)), "n_problems": str(len(reas)), "n_models": str(len(ladder_runs)),
        "min_copies": str(int(know["copies"].min())), "max_copies": str(int(know["copies"].max())),
        "min_mentions": str(int(know["mentions"].min())), "max_mentions": str(int(know["mentions"].max())),
        "knowledge_prompt_overlap": str(int(know["overlap_8"].sum())),
        "knowledge_prompt_overlap_14": str(int(know["overlap_14"].sum())),
        "lab_range": "–".join(fmt_params(f(ladder_runs["params"])) for f in (min, max)),
        "t_doc": f"{counts.seconds_doc:.1f}", "t_inf": f"{counts.seconds_infgram:.1f}"}}


def embedding_filter(k3: Mapping[str, int], claims: Sequence[Claim],
                     tables: Mapping[tuple, pd.DataFrame]) -> Page:
    """``k3_total``, ``k3_paper``, ``k3_authors``, ``k3_paper_co``, ``k3_none_co``, ``gamma_2``/``_3``/``_5``,
    ``gamma_step``, ``authors_raw``, ``authors_gamma``, ``knowledge_p1_share``; Markdown
    ``filter_verdict``, ``authors_verdict``."""
    knowledge, paper = CHAPTER_THRESHOLDS["knowledge"], G.PAPER_THRESHOLDS["triviaqa"]
    return {"text": {
        "k3_total": f"{k3['total']:,}", "k3_paper": f"{k3['paper']:,}", "k3_authors": f"{k3['authors']:,}",
        "k3_paper_co": f"{k3['paper_co']:,}", "k3_none_co": f"{k3['none_co']:,}",
        "gamma_3": f"{paper[3]:g}", "gamma_5": f"{paper[5]:g}",
        "gamma_2": f"{knowledge[2]:.2f}", "gamma_step": f"{knowledge[2] - knowledge[3]:.2f}",
        "authors_raw": f"{100 * G.AUTHORS_THRESHOLD:g}", "authors_gamma": f"{G.AUTHORS_THRESHOLD:g}",
        "knowledge_p1_share": fmt_pct(tied_share(tables.get(("knowledge", 3))))},
        "md": {"filter_verdict": filter_sentence(k3, claims, "the knowledge task's 3-grams"),
               "authors_verdict": authors_sentence(k3, claims)}}


def generation(answers: pd.DataFrame, seconds: float) -> Page:
    """``gen_seconds`` (the answers' wall time) and ``n_errors`` (requests that failed)."""
    return {"text": {"gen_seconds": f"{seconds:.0f}", "n_errors": str(int(answers["answer"].isna().sum()))}}


def performance(perf: pd.DataFrame, perf_reasoning: pd.DataFrame, acc: pd.DataFrame, by_copies: pd.DataFrame,
                ladder_runs: pd.DataFrame, claims: Sequence[Claim], count_n: int) -> Page:
    """``count_n``, ``n_bins``; Markdown ``reasoning_peak``, ``accuracy_sentence``, ``copies_verdict``."""
    return {"text": {"count_n": str(count_n), "n_bins": str(perf["bin"].nunique())},
            "md": {"reasoning_peak": peak_sentence(perf_reasoning, "reasoning"),
                   "accuracy_sentence": accuracy_sentence(acc, claims),
                   "copies_verdict": copies_sentence(by_copies, ladder_runs, claims)}}


def copies_table(by_copies: pd.DataFrame, copies) -> pd.io.formats.style.Styler:
    """Knowledge accuracy by the fact's copies, as percentages, captioned with the facts per bin."""
    per_bin = facts_per_copies_bin(copies)
    return (by_copies.style.format({"params": "{:,}"} | {c: "{:.0%}" for c in by_copies.columns[1:]})
            .set_caption("knowledge accuracy by copies of the fact (facts per bin: "
                         + ", ".join(f"{c}: {int(v)}" for c, v in per_bin.items()) + ")"))


def mem_ladder(mem: pd.DataFrame, tables: Mapping[tuple, pd.DataFrame], inputs, log_llm: Mapping,
               distinct: pd.DataFrame, sizes: Sequence[int], n_facts: int, n_problems: int,
               seconds: float) -> Page:
    """The numbers behind Mem_n: :func:`~analysis.distributional.text.mem_glue`'s ``{task}_{n}_…``,
    ``n_llm``, ``t_mem``, ``n_perm``, ``p_min``, ``knowledge_3_facts``/``_pairs``,
    ``reasoning_3_problems``/``_pairs``, ``noncontiguous_share``, ``knowledge_mem3_significant``;
    Markdown ``units_sentence``, ``noncontiguous_detail``, ``distinct_sentence``."""
    k3, r3 = tables[("knowledge", 3)], tables[("reasoning", 3)]
    nc_shares, nc_all = noncontiguous_shares(inputs)
    text = mem_glue(mem, ("knowledge", "reasoning"), sizes) | {
        "n_llm": f"{sum(map(len, log_llm.values())):,}", "t_mem": f"{seconds:.0f}",
        "n_perm": f"{N_PERM:,}", "p_min": f"{2 / (N_PERM + 1):.4f}",
        "knowledge_3_facts": f"{k3['instance'].nunique():,}",
        "reasoning_3_problems": f"{r3['instance'].nunique():,}",
        "knowledge_3_pairs": f"{len(k3):,}", "reasoning_3_pairs": f"{len(r3):,}",
        "noncontiguous_share": fmt_pct(nc_all),
        "knowledge_mem3_significant": str(significant_positive(mem, "knowledge", 3))}
    return {"text": text, "md": {"units_sentence": units_sentence(tables, 3, n_facts, n_problems),
                                 "noncontiguous_detail": noncontiguous_sentence(nc_shares),
                                 "distinct_sentence": distinct_sentence(distinct)}}


def mem_verdicts(mem: pd.DataFrame, kendall: pd.DataFrame, claims: Sequence[Claim]) -> Page:
    """``kendall_tg_range``, ``kendall_inf_range``, ``src_kendall``; Markdown ``mem_knowledge_3``,
    ``mem_knowledge_5``, ``mem_reasoning_3``, ``lm_verdict``, ``undefined``, ``ties_knowledge``,
    ``count_knowledge``, ``ties_reasoning``, ``count_reasoning``, ``kendall_verdict``,
    ``kendall_inf_verdict``, ``knowledge_verdict``, ``reasoning_verdict``."""
    found = {c.id: c for c in claims}
    k3, k5, r3 = trend(mem, "knowledge", 3), trend(mem, "knowledge", 5), trend(mem, "reasoning", 3)
    k_tg = trend(kendall, "reasoning", 3, value="kendall")
    k_inf = trend(kendall, "reasoning", 3, lm="∞-gram", value="kendall")
    return {"text": {"kendall_tg_range": range_text(k_tg), "kendall_inf_range": range_text(k_inf),
                     "src_kendall": SOURCE_KENDALL},
            "md": {"kendall_inf_verdict": kendall_inf_sentence(found["kendall3_inf_above"], k_tg, k_inf),
                   "mem_knowledge_3": mem_sentence(k3, "knowledge", 3, claims),
                   "mem_knowledge_5": mem_sentence(k5, "knowledge", 5, claims),
                   "mem_reasoning_3": mem_sentence(r3, "reasoning", 3, claims),
                   "lm_verdict": lm_sentence(claims, 3),
                   "undefined": undefined_sentence(mem),
                   "ties_knowledge": ties_sentence(found["tied3_knowledge"]),
                   "count_knowledge": count_sentence(found["count3_knowledge"],
                                                     trend(mem, "knowledge", 3, lm="pair count")),
                   "ties_reasoning": ties_sentence(found["tied3_reasoning"]),
                   "count_reasoning": count_sentence(found["count3_reasoning"],
                                                     trend(mem, "reasoning", 3, lm="pair count")),
                   "kendall_verdict": kendall_sentence(found["kendall3_rises"], k_tg),
                   "knowledge_verdict": knowledge_sentence(k3, claims),
                   "reasoning_verdict": reasoning_sentence(r3, found["mem3_reasoning_none"])}}


def answer_frequency(partial: pd.DataFrame, claims: Sequence[Claim]) -> Page:
    """``mem3_partial_range`` (the knowledge task's partial Mem₃); Markdown ``partial_verdict``."""
    return {"text": {"mem3_partial_range": partial_range(partial, "knowledge", 3)},
            "md": {"partial_verdict": partial_sentence(claims[0], partial)}}


def partial_table(partial: pd.DataFrame) -> pd.io.formats.style.Styler:
    """Mem₃ plain and partial per task, arm and model, with intervals and p-values, captioned."""
    cols = ["task", "arm", "model", "pairs", "units", "distinct", "rho", "rho_lo", "rho_hi", "partial",
            "partial_lo", "partial_hi", "partial_pvalue"]
    return (partial[cols].style.hide(axis="index")
            .format({c: "{:.3f}" for c in ("rho", "rho_lo", "rho_hi", "partial", "partial_lo", "partial_hi")}
                    | {"partial_pvalue": "{:.4f}"}, na_rep="—")
            .set_caption("Mem₃ plain and partial (log C(s^y) fixed), 95% intervals by bootstrap over facts "
                         "or problems, p by cluster permutation"))


def novelty(claims: Sequence[Claim], nov: pd.DataFrame) -> Page:
    """Markdown ``novelty_trend``."""
    return {"md": {"novelty_trend": novelty_sentence(claims, nov)}}


def sensitivity(claim: Claim, gammas: Sequence[float] = G.SENSITIVITY_GAMMAS) -> Page:
    """``gammas`` (the paper's grid), ``keep_rates`` (E5's share kept at each); Markdown ``sens_verdict``."""
    return {"text": {"gammas": ", ".join(f"{g:g}" for g in gammas),
                     "keep_rates": ", ".join(fmt_pct(e5_keep_rate(g)) for g in gammas)},
            "md": {"sens_verdict": sensitivity_sentence(claim)}}


def mmlu(claims: Sequence[Claim], splits: pd.DataFrame, mem: pd.DataFrame, in_lab: Mapping) -> Page:
    """Markdown ``mmlu_knowledge_mem3``, ``mmlu_reasoning_mem3`` (``in_lab``: :func:`.run.mmlu_in_lab`)."""
    falls, below = claims
    why = mmlu_lab_text(**in_lab)
    return {"md": {
        "mmlu_knowledge_mem3": mmlu_sentence(falls, splits, mem, MMLU_SPLITS["MMLU knowledge"], why),
        "mmlu_reasoning_mem3": mmlu_sentence(below, splits, mem, MMLU_SPLITS["MMLU reasoning"], why)}}


def influence(gap, influence: pd.DataFrame, retrieved: pd.DataFrame, run: str, n_checkpoints: int, r: int,
              control=None) -> Page:
    """:func:`~analysis.distributional.text.influence_values`' ``influence_…`` names."""
    return {"text": influence_values(gap, influence_table(influence), fact_documents_summary(retrieved), run,
                                     n_checkpoints, r, control=control)}


def counterfactual(gap, base, counter, removed, run: str) -> Page:
    """:func:`~analysis.distributional.text.counterfactual_values`' ``counterfactual_…`` names."""
    return {"text": counterfactual_values(gap, base, counter, removed, run)}


def arms_table(arms: Mapping[str, Mapping]) -> pd.DataFrame:
    """Each task's three best and three worst instruction templates, with their scores."""
    return (pd.concat({t: a["scores"].iloc[[0, 1, 2, -3, -2, -1]] for t, a in arms.items()}, names=["task"])
            .reset_index(level=0))


def gaps_table(gaps: Mapping[str, tuple]) -> pd.DataFrame:
    """Each task's per-model accuracy under the two arms and their difference."""
    return pd.concat({t: g[1] for t, g in gaps.items()}, names=["task"]).reset_index(level=0)


#: the names :func:`~analysis.distributional.text.prompt_opt_glue` returns for the two
#: tasks, spelled out so that a name on the page leads here
PROMPT_NAMES = (
    "prompt_opt_n",
    "prompt_opt_knowledge", "prompt_opt_knowledge_control", "prompt_opt_knowledge_memorization",
    "prompt_opt_knowledge_generalization", "prompt_opt_knowledge_memorization_score",
    "prompt_opt_knowledge_generalization_score", "prompt_opt_knowledge_candidates",
    "prompt_opt_knowledge_skipped", "prompt_opt_knowledge_higher",
    "prompt_opt_reasoning", "prompt_opt_reasoning_control", "prompt_opt_reasoning_memorization",
    "prompt_opt_reasoning_generalization", "prompt_opt_reasoning_memorization_score",
    "prompt_opt_reasoning_generalization_score", "prompt_opt_reasoning_candidates",
    "prompt_opt_reasoning_skipped", "prompt_opt_reasoning_higher",
)


def prompts(arms: Mapping[str, Mapping], gaps: Mapping[str, tuple], controls: Mapping,
            n_problems: int) -> Page:
    """:data:`PROMPT_NAMES`: ``prompt_opt_n`` and, per task, the accuracy gap, its control, the
    two templates and their scores, the candidates, the skipped and the models higher."""
    out = prompt_opt_glue(arms, gaps, controls, n_problems)
    return {"text": {name: out[name] for name in PROMPT_NAMES if name in out} | out}


def source_vs_run(paper_claims: pd.DataFrame, untestable: Sequence[Claim], claims: Sequence[Claim]) -> Page:
    """``src_perf``, ``src_k3``, ``src_inf``, ``src_gsm``, ``src_sens`` (the source's values);
    Markdown ``untestable``, ``claim_counts``."""
    source = paper_claims.set_index(["figure", "task"])["value"]
    return {"text": {"src_perf": str(source[("Figure 3", "TriviaQA (n = 5)")]),
                     "src_k3": str(source[("Figure 4", "TriviaQA (n = 3)")]),
                     "src_inf": str(source[("Figure 4", "TriviaQA")]),
                     "src_gsm": str(source[("Figure 4", "GSM8K")]),
                     "src_sens": str(source[("Figure 6", "TriviaQA (n = 3)")])},
            "md": {"untestable": untestable_sentence(untestable), "claim_counts": counts_sentence(claims)}}


def summary(seconds: float) -> Page:
    """``elapsed``: this execution's wall time in seconds."""
    return {"text": {"elapsed": f"{seconds:.0f}"}}


__all__ = ["PROMPT_NAMES", "Page", "answer_frequency", "arms_table", "copies_table", "counterfactual",
           "embedding_filter", "gaps_table", "generation", "influence", "method", "mem_ladder",
           "mem_verdicts", "mmlu", "novelty", "partial_table", "performance", "prompts", "sensitivity",
           "setup", "source_vs_run", "summary"]
