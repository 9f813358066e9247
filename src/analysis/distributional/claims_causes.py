"""The distributional chapter's claims on what lies behind a correlation: whether
``Mem_n`` survives holding the answer's corpus frequency fixed (the book's own, with
the answers-swapped control), and whether the documents holding a test example's n-gram
pair influence it more than those holding its output alone (the source's Section 6).

Split from :mod:`analysis.distributional.claims` by role; the helpers and thresholds
are that module's.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.core.claims import EXTENSION, NOT_TESTABLE, Claim, Verdict, decide
from analysis.distributional.claims import (
    MEM,
    TASK_UNITS,
    _claim,
    _decide_spec,
    _holm,
    _nt,
    _num,
)
from analysis.distributional.params import ALPHA, MIN_FACTS

# ---------------------------------------------------------------------------
# Memorization against answer frequency (the book's own)
# ---------------------------------------------------------------------------


def partial_claims(pm: pd.DataFrame, tasks=("knowledge",), n: int = 3) -> list[Claim]:
    """Per task (a Holm family over the tasks), whether ``Mem_n`` survives holding
    ``log C(s^y)`` fixed: the median over the models of the partial Spearman ρ
    (:func:`~analysis.distributional.controls.partial_mem_table`, arm ``task``), its
    cluster-permutation p (whole units' model values move; the permutations shared by the
    models) and its bootstrap interval over units. The negative control is the same median
    on the answers-swapped set (arm ``answers swapped``): each question asked for another
    fact's answer. ``extra["answer_frequency"]`` is true when the plain median is
    significant and the partial one is not: a Mem that survives only without the control
    for answer frequency."""
    specs, info = [], []
    for task in tasks:
        unit = TASK_UNITS.get(task, "facts")
        own = pm[(pm["task"] == task) & (pm["n"] == n) & (pm["arm"] == "task")]
        ctrl = pm[(pm["task"] == task) & (pm["n"] == n) & (pm["arm"] == "answers swapped")]
        first = own.iloc[0] if len(own) and "median_partial" in own else None
        cfirst = ctrl.iloc[0] if len(ctrl) and "median_partial" in ctrl else None
        if first is None or not np.isfinite(first["median_partial"]):
            specs.append({"gate": Verdict(NOT_TESTABLE, "no model has a defined partial correlation"),
                          "p": None})
            info.append((task, unit, own, first, cfirst))
            continue
        c_val = _num(cfirst["median_partial"]) if cfirst is not None else None
        specs.append({"value": first["median_partial"], "p": first["median_partial_p"],
                      "null": first["median_partial_null"], "null_value": first["median_partial_null"],
                      "n_units": int(own["units"].min()), "min_n": MIN_FACTS, "unit": unit,
                      "control_value": c_val,
                      "control_p": _num(cfirst["median_partial_p"]) if cfirst is not None else None,
                      "gate": None})
        info.append((task, unit, own, first, cfirst))
    _holm(specs)
    out = []
    for s, (task, unit, own, first, cfirst) in zip(specs, info):
        statement = (f"On the {task} task, Mem_{n} survives holding the answer's corpus count log C(s^y) "
                     "fixed (partial Spearman)")
        kw = dict(section=MEM, unit=unit, family=f"partial{n}",
                  comparison=f"median over the models of the partial Spearman ρ given log C(s^y), "
                             f"cluster-permutation p (Holm over the tasks) < {ALPHA:g}, at least {MIN_FACTS} "
                             f"{unit}; interval: bootstrap over {unit}")
        if s.get("gate") is not None:
            out.append(_nt(f"mem{n}_partial_{task}", statement, s["gate"].reason, EXTENSION,
                           **{k: v for k, v in kw.items() if k != "unit"}, unit=unit))
            continue
        plain_sig = bool(np.isfinite(first["median_plain_p"]) and first["median_plain_p"] < ALPHA)
        partial_sig = bool(s["p_adjusted"] is not None and s["p_adjusted"] < ALPHA)
        lo, hi = first.get("median_partial_lo", np.nan), first.get("median_partial_hi", np.nan)
        extra = {"unit": "median_rho", "task": task, "mem_n": n,
                 "plain": _num(first["median_plain"]), "plain_p": _num(first["median_plain_p"]),
                 "partial_lo": _num(own["partial"].min()), "partial_hi": _num(own["partial"].max()),
                 "answer_frequency": plain_sig and not partial_sig,
                 "control_plain": _num(cfirst["median_plain"]) if cfirst is not None else None,
                 "control_pairs": int(cfirst["pairs"]) if cfirst is not None else 0,
                 "distinct_min": int(own["distinct"].min()), "distinct_max": int(own["distinct"].max())}
        v = _decide_spec(s)
        control_reason = None if s["control_value"] is not None else (
            "the answers-swapped set has too few co-occurring pairs for a partial correlation")
        out.append(_claim(f"mem{n}_partial_{task}", statement, v, EXTENSION, value=s["value"], p=s["p"],
                          p_adjusted=s.get("p_adjusted"), n=int(own["pairs"].min()), n_units=s["n_units"],
                          min_n=MIN_FACTS, null_kind="permutation", null_value=s["null_value"],
                          control_value=s["control_value"], control_reason=control_reason,
                          interval=(float(lo), float(hi)) if np.isfinite(lo) and np.isfinite(hi) else None,
                          extra=extra, **kw))
    return out


INFLUENCE_SECTION = "distributional-influence"
INFLUENCE_STATEMENT = ("Training documents that hold a test example's n-gram pair influence its prediction "
                       "more than documents that hold only its output n-gram (gradient influence, "
                       "Section 6).")


def influence_claim(est, run: str, n_checkpoints: int, r: int, control=None) -> Claim:
    """``influence_pair_above_output``: the mean over facts of (pair documents' mean
    influence − output-only documents'), :func:`~analysis.distributional.influence.influence_gap`,
    above 0 by its bootstrap interval over facts (the unit). ``control`` is the same gap
    with each test example ending in another fact's answer (the same documents): a gap
    that also shows there comes from the documents sharing the prompt's words, not from
    the pair."""
    c_val = None if control is None or not np.isfinite(control.value) else float(control.value)
    kw = dict(section=INFLUENCE_SECTION, unit="facts", min_n=MIN_FACTS, source_value=(
        "pair documents above output-only ones in every task and size (Figure 5; TriviaQA about 0.14 to "
        "0.16)"), comparison=(f"mean over facts of (pair − output-only) influence > 0: 95% bootstrap "
                              f"interval over facts; {run}, {n_checkpoints} checkpoints, up to {r} documents "
                              "per way"),
              control_reason=(None if c_val is not None else
                              "the answers-swapped control was not run or gave no fact with both ways"),
              extra={"unit": "influence", "run": run, "checkpoints": n_checkpoints, "r": r,
                     "control_lo": None if control is None or control.interval is None else control.lo,
                     "control_hi": None if control is None or control.interval is None else control.hi})
    if est is None or not np.isfinite(est.value):
        return _nt("influence_pair_above_output", INFLUENCE_STATEMENT, "no fact has documents of both ways",
                   **kw)
    v = decide(value=est.value, null=0.0, interval=est.interval, n_units=est.n_units, min_n=MIN_FACTS,
               unit="facts", control_value=c_val,
               control_interval=None if control is None else control.interval)
    return _claim("influence_pair_above_output", INFLUENCE_STATEMENT, v, value=est.value,
                  interval=est.interval, n=est.n, n_units=est.n_units, null_kind="analytic", null_value=0.0,
                  control_value=c_val, **kw)


COUNTERFACTUAL_STATEMENT = ("Retraining without a fact's documents lowers the probability of its answer more "
                            "than retraining lowers the other facts' (the book's counterfactual, which the "
                            "source could not afford).")


def counterfactual_claim(est, run: str, n_removed: int) -> Claim:
    """``counterfactual_drop``: the mean change in the answers' log-probability of the
    removed facts minus the kept ones (:func:`~analysis.distributional.counterfactual.counterfactual_drop`),
    below 0 by its bootstrap interval over facts. The kept half is the control: retrained
    the same way, its documents still there."""
    kw = dict(section=INFLUENCE_SECTION, unit="facts", min_n=MIN_FACTS, kind=EXTENSION,
              comparison=(f"mean Δ log p(answer | cloze) of the {n_removed} removed facts − that of the kept "
                          f"ones < 0 ({run} retrained without the removed facts' documents): 95% bootstrap "
                          "interval over facts"),
              control_reason="the kept facts are the control arm of the difference",
              extra={"unit": "counterfactual", "run": run, "removed": n_removed})
    if est is None or not np.isfinite(est.value):
        return _nt("counterfactual_drop", COUNTERFACTUAL_STATEMENT, "too few facts scored in either half",
                   **kw)
    v = decide(value=est.value, null=0.0, interval=est.interval, n_units=est.n_units, min_n=MIN_FACTS,
               direction=-1, unit="facts")
    return _claim("counterfactual_drop", COUNTERFACTUAL_STATEMENT, v, value=est.value, interval=est.interval,
                  n=est.n, n_units=est.n_units, null_kind="analytic", null_value=0.0, **kw)


# ---------------------------------------------------------------------------
# Prompt optimization (the source's Section 7, Table 1)
# ---------------------------------------------------------------------------

PROMPT_SECTION = "distributional-prompts"
#: the source's Table 1, as its summary reads it, per task
PROMPT_SOURCE = {
    "knowledge": ("TriviaQA: memorization prompt above generalization for 5 of 5 models (17% vs 9% Pythia "
                  "6.9B, 28.7% vs 23.2% Pythia 12B, 29% vs 10% OLMo-7B-Instruct)"),
    "reasoning": ("GSM8K: generalization prompt above memorization for 5 of 5 models, by 0.1 to 1.6 points "
                  "(2.6% vs 2.8% Pythia 6.9B, 6.3% vs 7.9% OLMo-7B-Instruct)"),
}
#: the direction of each task's finding, on accuracy(memorization) − accuracy(generalization)
PROMPT_DIRECTION = {"knowledge": 1, "reasoning": -1}


def prompt_opt_claim(task: str, est, control, table: pd.DataFrame, arms: dict, substitution: str) -> Claim:
    """``prompt_opt_<task>``: accuracy under the memorization prompt minus the
    generalization prompt (:func:`~analysis.distributional.prompt_opt.prompt_gap`), the mean
    over models, on the source's side of 0 by its bootstrap interval over instances (the
    unit). Knowledge: above 0; reasoning: below. ``control`` is the same gap scored against
    another instance's answer (the negative control); ``table`` the per-model rows;
    ``arms`` the two templates; ``substitution`` says what stands in for the source's
    optimizer. Every model at 0% in both arms is the floor: not testable."""
    direction = PROMPT_DIRECTION[task]
    unit = TASK_UNITS.get(task, "facts")
    better = "memorization" if direction > 0 else "generalization"
    statement = (f"On the {task} task, the prompt rewritten toward {'frequent' if direction > 0 else 'rare'} "
                 f"corpus n-grams (the {better} prompt) is answered more accurately than the other "
                 "(Table 1).")
    higher = int((table["difference"] * direction > 0).sum()) if len(table) else 0
    kw = dict(section=PROMPT_SECTION, unit=unit, min_n=MIN_FACTS, source_value=PROMPT_SOURCE[task],
              comparison=(f"mean over the models of accuracy(memorization prompt) − accuracy(generalization "
                          f"prompt) {'>' if direction > 0 else '<'} 0: 95% bootstrap interval over {unit}; "
                          f"{substitution}"),
              extra={"unit": "accuracy_gap", "task": task, "models": int(len(table)),
                     "models_source_side": higher, **arms})
    if est is None or not np.isfinite(est.value):
        return _nt(f"prompt_opt_{task}", statement, "no instance was answered in both arms", **kw)
    at_zero = len(table) and (table[["memorization", "generalization"]].fillna(0) == 0).all().all()
    floor = "floor (every model answers none right in either arm)" if at_zero else None
    c_val = _num(control.value) if control is not None else None
    v = decide(value=est.value, null=0.0, interval=est.interval, n_units=est.n_units, min_n=MIN_FACTS,
               direction=direction, floor=floor, control_value=c_val,
               control_interval=control.interval if control is not None else None, unit=unit)
    return _claim(f"prompt_opt_{task}", statement, v, value=est.value, interval=est.interval, n=est.n,
                  n_units=est.n_units, null_kind="analytic", null_value=0.0, control_value=c_val,
                  control_reason=None if c_val is not None else "the control scored no instance in both arms",
                  **kw)


#: what stands in for the source's optimizer, said on every prompt-optimization claim
PROMPT_SUBSTITUTION = ("a template search scored by the lab corpus's counts stands in for GPT-4o with WIMBD "
                       "feedback")


def prompt_opt_claims(arms: Mapping[str, dict], gaps: Mapping[str, tuple], controls: Mapping[str, object],
                      substitution: str = PROMPT_SUBSTITUTION) -> list[Claim]:
    """:func:`prompt_opt_claim` for every task of ``arms`` (task → the search's result),
    ``gaps`` (task → :func:`~analysis.distributional.prompt_opt.prompt_gap`'s estimate and
    per-model table) and ``controls`` (task → the control's estimate)."""
    return [prompt_opt_claim(task, gaps[task][0], controls[task], gaps[task][1],
                             {a: arms[task][a] for a in ("memorization", "generalization")}, substitution)
            for task in arms]
