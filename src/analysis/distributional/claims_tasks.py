"""The distributional chapter's claims on the source's tasks beyond the lab's two
Mem_n tables: novelty of the generated pairs (the source's translation reading
carried to the lab's tasks), the MMLU knowledge and reasoning splits (Figure 4), and
the source's tasks and replications the lab has no counterpart of (not testable).

Split from :mod:`analysis.distributional.claims` by role; the helpers and thresholds
are that module's.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.core.claims import EXTENSION, INCONCLUSIVE, NOT_TESTABLE, Claim, Verdict, decide
from analysis.distributional.claims import (
    MMLU,
    NO_LADDER_CONTROL,
    NOVELTY,
    SOURCE_SECTION,
    _claim,
    _holm,
    _interval,
    _nt,
    _pairs,
    _trend_claim,
    _trend_spec,
)
from analysis.distributional.method_trends import trend
from analysis.distributional.params import (
    ALPHA,
    MIN_MODELS,
    MIN_PAIRS,
    SOURCE_MMLU_REASONING,
    SOURCE_NOVELTY,
    paper_value,
)
from analysis.stats import ranks

# ---------------------------------------------------------------------------
# Novelty, and the MMLU splits
# ---------------------------------------------------------------------------


def novelty_claims(nov: pd.DataFrame, source_value: str | None = SOURCE_NOVELTY,
                   intervals: Mapping[str, tuple[float, float]] | None = None) -> list[Claim]:
    """Per lab task, the share of novel generated pairs
    (:func:`~analysis.distributional.method_tables.novelty_table`) against size: the
    source's WMT reading (novelty rises with size, read as generalization) carried to
    the lab's tasks, the book's own (a Holm family over the tasks). A task where some
    model generated fewer than :data:`MIN_PAIRS` pairs is inconclusive; every model at
    novelty 1 (or 0) is the ceiling (floor): not testable."""
    specs, groups = [], []
    for task, g in nov.groupby("task", sort=False):
        g = g.sort_values("params", kind="stable")
        fewest = int(g["pairs"].min()) if len(g) else 0
        values = g["novelty"].to_numpy(float)
        fin = values[np.isfinite(values)]
        floor = None
        if len(fin) and (fin == 1).all():
            floor = "ceiling (every generated pair of every model is novel)"
        elif len(fin) and (fin == 0).all():
            floor = "floor (no generated pair of any model is novel)"
        spec = _trend_spec(g["params"], values, floor=floor)
        if floor is None and len(fin) and fewest < MIN_PAIRS:
            spec["gate"] = Verdict(INCONCLUSIVE,
                                   f"a model generated only {fewest} pairs, below the minimum of "
                                                 f"{MIN_PAIRS}")
        specs.append(spec)
        groups.append((task, fewest))
    _holm(specs)
    return [_trend_claim(f"novelty_rises_{task}", f"On the {task} task, the share of novel generated n-gram "
                         "pairs rises with model size (the source's reading of its translation task)", s,
                         EXTENSION,
                         family="novelty_rises", section=NOVELTY, extra={"task": task, "pairs": fewest,
                                                                         "source": source_value},
                         interval=_interval((intervals or {}).get(task)))
            for s, (task, fewest) in zip(specs, groups)]


def _split_gate(splits: pd.DataFrame, mem: pd.DataFrame, task: str, n: int) -> Verdict | None:
    """The verdict of an MMLU split's claim when its pairs cannot decide it: none
    co-occurs in the corpus (not testable), or too few (inconclusive)."""
    row = splits[(splits["task"] == task) & (splits["n"] == n)]
    if row.empty:
        return Verdict(NOT_TESTABLE, f"the {task} split was not counted")
    r = row.iloc[0]
    if not r["co-occurring"]:
        return Verdict(NOT_TESTABLE,
                       f"none of the {r['candidates']:,} candidate {n}-gram pairs of the {task} "
                                     f"split's {r['questions']:,} questions co-occurs in a document of "
                                     "the lab "
                                     "corpus")
    pairs = _pairs(mem, task, n)
    if pairs < MIN_PAIRS:
        return Verdict(INCONCLUSIVE, f"the {task} split has {pairs} co-occurring pairs, below the minimum of "
                                     f"{MIN_PAIRS} for a Mem_{n}")
    return None


def mmlu_claims(mem: pd.DataFrame, splits: pd.DataFrame, paper: pd.DataFrame | None = None, n: int = 3,
                knowledge: str = "MMLU knowledge", reasoning: str = "MMLU reasoning") -> list[Claim]:
    """The source's MMLU split (Figure 4): the knowledge split's ``Mem_n`` falls with
    model size, and the reasoning split's is lower than the knowledge split's, from
    :func:`~analysis.distributional.method_tables.split_tables` (``splits``) and the
    cluster p-values of :func:`~analysis.distributional.method_tables.taskgram_mem_table` (``mem``)."""
    src = paper_value(paper, "Figure 4", f"MMLU knowledge (n = {n})") or "Mem_n falls with model size"
    tk = trend(mem, knowledge, n)
    spec = _trend_spec(tk.params, tk.rho, direction=-1)
    spec["gate"] = _split_gate(splits, mem, knowledge, n)
    if spec["gate"] is None and tk.n_models >= MIN_MODELS and tk.n_sig == 0:
        spec["gate"] = Verdict(INCONCLUSIVE,
                               "no model's Mem is significant, so there is no memorization trend "
                                             "to read")
    falls = _trend_claim("mmlu_mem_falls", f"The MMLU knowledge split's Mem_{n} falls with model size", spec,
                         section=MMLU, source_value=src,
                         extra={"task": knowledge, "mem_n": n, "pairs": _pairs(mem, knowledge, n)})
    tr = trend(mem, reasoning, n)
    both = np.isfinite(tk.rho) & np.isfinite(tr.rho) if tk.n_models == tr.n_models else np.zeros(0, bool)
    below, total = int((tr.rho[both] < tk.rho[both]).sum()), int(both.sum())
    est = ranks.sign_test(below, total)
    gates = [g for g in (_split_gate(splits, mem, knowledge, n), _split_gate(splits, mem, reasoning, n)) if g]
    v = (next((g for g in gates if g.status == NOT_TESTABLE), gates[0]) if gates
         else decide(value=est.value, null=0.5, p=est.p, n_units=total, min_n=MIN_MODELS, unit="models"))
    lower = _claim("mmlu_reasoning_below", f"The MMLU reasoning split's Mem_{n} is lower than the knowledge "
                   "split's", v,
                   comparison=f"share of models with the lower reasoning Mem_{n}, two-sided sign test "
                              f"p < {ALPHA:g}, at least {MIN_MODELS} models and {MIN_PAIRS} pairs per split",
                   value=est.value, p=est.p, n=total, n_units=total, unit="models", min_n=MIN_MODELS,
                   null_kind="analytic" if total else "none", null_value=0.5 if total else None,
                   control_reason=NO_LADDER_CONTROL, section=MMLU, source_value=SOURCE_MMLU_REASONING,
                   extra={"unit": "share", "task": reasoning, "mem_n": n, "k": below,
                          "pairs": _pairs(mem, reasoning, n)})
    return [falls, lower]


def untestable_claims(paper: pd.DataFrame | None = None) -> list[Claim]:
    """The source's claims this machine cannot test: tasks the lab has no counterpart of
    (WMT, with its Europarl table) and the OLMo replication."""
    why = "the lab has no translation task"
    return [
        _nt("wmt_mem_none", "Translation (WMT) shows no significant Mem_n at any size", why,
            section=SOURCE_SECTION, unit="tasks",
            source_value=paper_value(paper, "Figure 4", "WMT") or "none shown (none significant)"),
        _nt("wmt_novelty_rises", "On translation (WMT), the share of novel generated n-gram pairs rises with "
            "model size", why, section=SOURCE_SECTION, unit="tasks", source_value=SOURCE_NOVELTY),
        _nt("olmo_gsm8k_none", "The GSM8K result replicates on OLMo (1B, 7B) trained on Dolma: no "
            "significant Mem_n, Kendall tau distance rising with size",
            "OLMo's checkpoints and a searchable index of Dolma (3T tokens) are not reachable offline, "
            "and the lab trains one model family on one corpus", section=SOURCE_SECTION, unit="models",
            source_value=paper_value(paper, "Figure 4", "GSM8K") or "no significant rho for Pythia or OLMo"),
        _nt("wmt_europarl", "Translation's task-gram table, mined from Europarl (about 20M parallel "
            "sentences) and filtered with LASER, gives no significant Mem_n on WMT-09",
            "neither Europarl, WMT-09 nor LASER is in the data mirror, and the lab corpus is English only",
            section=SOURCE_SECTION, unit="tasks", source_value="none shown (none significant)"),
    ]
