"""The distributional chapter's decisions: every verdict it states, as a :class:`Claim`.

Each function takes the chapter's tables and returns claims whose status comes from
the book's one rule set (:func:`analysis.core.claims.decide`, :func:`within`,
:func:`not_testable`); :mod:`analysis.distributional.text` words them. What each
claim rests on:

* a model's Mem_n (task-gram, ∞-gram, pair count): its units are the facts of the
  knowledge task and the problems of the reasoning task (a fact's pairs share its
  prompt and answer), and its p-value comes from the cluster permutation of
  :mod:`analysis.distributional.inference` (whole units' model values move), the
  negative control being the answers swapped between units;
* "significant for every model": each model's cluster p below :data:`ALPHA` (an
  intersection–union test, no correction needed); "for no model": the models' cluster
  p-values Holm-corrected; a statistic over the models (the median ρ) has the null of
  the same permutations;
* a trend across the ladder (Mem_n, accuracy, novelty, a distance against size): the
  unit is the model, and Spearman's ρ with size is tested by permuting the values
  among the models (:func:`~analysis.distributional.inference.model_trend`);
* "Mem_n ≥ Mem_∞" and the like: the sign test over the models (an exact binomial null
  for models as independent units, conditional on the one corpus and test set);
* a share of pairs against a bound: a cluster bootstrap over facts or problems;
* a claim stated for two tasks or two n (one statement) is a family, Holm-corrected.

Claims the source makes are ``kind="source"`` with its value; the book's own
additions are extensions (``holds`` / ``does not hold``).

This module holds the chapter's shared rules (the claim builders, the Holm families,
the trend specs) and the memorization section's claims. The others, by section:
:mod:`.claims_filter` (the embedding filter and the threshold check),
:mod:`.claims_tasks` (novelty, the MMLU splits and the source's tasks the lab lacks),
:mod:`.claims_performance` (performance against counts) and :mod:`.claims_causes`
(what lies behind a correlation).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.core import jsonio
from analysis.core.claims import (
    EXTENSION,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    SOURCE,
    Claim,
    Verdict,
    as_kind,
    decide,
    not_testable,
    within,
)
from analysis.distributional.inference import aggregate_null, model_trend, share_bootstrap
from analysis.distributional.method_trends import Trend, trend
from analysis.distributional.params import (
    ALPHA,
    MIN_FACTS,
    MIN_MODELS,
    MOST,
    NEAR_ZERO,
    SOURCE_KENDALL,
    paper_value,
)
from analysis.stats import ranks
from analysis.stats.resampling import holm

CHAPTER = "distributional"
#: the notebook's section labels, where each claim is shown
FILTER, PERFORMANCE, MEM, NOVELTY, SENSITIVITY, MMLU, SOURCE_SECTION = (
    "distributional-filter", "distributional-performance", "distributional-mem", "distributional-novelty",
    "distributional-sensitivity", "distributional-mmlu", "distributional-source")
#: how the trend claims are compared
TREND_TEST = (f"Spearman's ρ with model size, two-sided permutation p over the models < {ALPHA:g}, at least "
              f"{MIN_MODELS} models")
#: the independent unit of each task's pairs
TASK_UNITS = {"knowledge": "facts", "reasoning": "problems", "MMLU knowledge": "facts",
              "MMLU reasoning": "problems"}
#: why the trend claims across the ladder have no negative control
NO_LADDER_CONTROL = "every ladder model trained on the whole corpus; none lacks the signal"



def _num(x) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def _claim(id: str, statement: str, verdict, kind: str = SOURCE, **kw) -> Claim:
    """A claim of this chapter, its status (a :class:`Verdict` or (status, reason))
    worded for its ``kind``."""
    status, reason, *mech = verdict
    kw["extra"] = jsonio.finite(kw.get("extra", {}))
    for name in ("value", "p", "p_adjusted", "null_value", "control_value"):
        if name in kw:
            kw[name] = _num(kw[name])
    if kw.get("control_value") is None and not kw.get("control_reason"):
        kw["control_reason"] = "the answers-swapped control is undefined (too few units or a constant side)"
    return Claim(id=id, chapter=CHAPTER, statement=statement, status=as_kind(status, kind), reason=reason,
                 kind=kind, mechanical=bool(mech and mech[0]), **kw)


def _nt(id: str, statement: str, why: str, kind: str = SOURCE, **kw) -> Claim:
    kw["extra"] = jsonio.finite(kw.get("extra", {}))
    kw.setdefault("unit", "models")
    return not_testable(id, CHAPTER, statement, why, kind=kind, **kw)


def _holm(specs: list[dict]) -> None:
    """Holm-adjust the ``p`` of a family of claim specs in place (``p_adjusted``)."""
    adj = holm([s["p"] if s.get("gate") is None else None for s in specs])
    for s, a in zip(specs, adj):
        s["p_adjusted"] = a


def _decide_spec(s: dict) -> Verdict:
    """The verdict of a spec: its gate, else :func:`decide` on its (adjusted) p."""
    if s.get("gate") is not None:
        return s["gate"]
    adjusted = s.get("p_adjusted") is not None
    if s.get("floor"):  # every arm at the floor: not testable, whatever the (undefined) value
        return decide(value=0.0, null=0.0, n_units=s["n_units"] or 1, min_n=s["min_n"], floor=s["floor"])
    return decide(value=s["value"], null=s["null"], p=s["p_adjusted"] if adjusted else s["p"],
                  adjusted=adjusted, n_units=s["n_units"], min_n=s["min_n"], direction=s.get("direction", 1),
                  floor=s.get("floor"), control_value=s.get("control_value"), control_p=s.get("control_p"),
                  unit=s["unit"])


# ---------------------------------------------------------------------------
# Rows of the Mem tables
# ---------------------------------------------------------------------------


def _rows(mem: pd.DataFrame, task: str, n: int, lm: str = "task-gram",
          filt: str = "no filter") -> pd.DataFrame:
    g = mem[(mem["task"] == task) & (mem["n"] == n) & (mem["lm"] == lm)]
    if "filter" in g:
        g = g[g["filter"] == filt]
    return g.sort_values("params", kind="stable")


def _units(g: pd.DataFrame) -> int:
    """The fewest units any model's Mem of these rows rests on (0 for none)."""
    return int(np.nanmin(g["units"].to_numpy(float))) if len(g) and g["units"].notna().any() else 0


def _pairs(mem: pd.DataFrame, task: str, n: int, lm: str = "task-gram", filt: str = "no filter") -> int:
    """The fewest pairs a Mem_n of ``task``'s ``n``-grams rests on, over the models (0 for none)."""
    g = _rows(mem, task, n, lm, filt)
    return int(g["pairs"].min()) if len(g) else 0


def _gate(t: Trend, units: int, unit: str) -> Verdict | None:
    """The verdict of a claim about the models' own Mem when the evidence cannot
    decide it: no value, too few models, or too few units."""
    if not t.defined:
        return Verdict(NOT_TESTABLE, "no model has a defined correlation")
    if t.n_models < MIN_MODELS:
        return Verdict(INCONCLUSIVE, f"{t.n_models} models, below the minimum of {MIN_MODELS}")
    if units < MIN_FACTS:
        return Verdict(INCONCLUSIVE,
                       f"the thinnest Mem rests on {units} {unit}, below the minimum of {MIN_FACTS}")
    return None


def _trend_spec(params, values, direction: int = 1, floor: str | None = None, control=None) -> dict:
    """The spec of a trend across the ladder (unit: models, permutation null over them)."""
    est = model_trend(params, values)
    spec = {"value": est["rho"], "p": est["pvalue"], "null": 0.0, "null_value": est["null_rho"],
            "n_units": est["models"], "min_n": MIN_MODELS, "direction": direction, "floor": floor,
            "unit": "models", "gate": None}
    if control is not None:
        c = model_trend(params, control)
        spec |= {"control_value": c["rho"], "control_p": c["pvalue"]}
    return spec


def _trend_claim(id: str, statement: str, spec: dict, kind: str = SOURCE, **kw) -> Claim:
    v = _decide_spec(spec)
    if _num(spec.get("control_value")) is not None:
        kw["control_value"] = spec["control_value"]
    else:
        kw.setdefault("control_reason", NO_LADDER_CONTROL if "control_value" not in spec
                      else "the answers-swapped control has no defined trend")
    if v.status == NOT_TESTABLE and _num(spec["value"]) is None:
        spec = spec | {"null_value": None}
        kw["null_kind"] = "none"
    kw.setdefault("null_kind", "permutation")
    return _claim(id, statement, v, kind, comparison=TREND_TEST, value=spec["value"], p=spec["p"],
                  p_adjusted=spec.get("p_adjusted"), n=spec["n_units"], n_units=spec["n_units"],
                  unit="models", min_n=MIN_MODELS, null_value=spec["null_value"], **kw)


# ---------------------------------------------------------------------------
# Performance against counts
# ---------------------------------------------------------------------------


def _floor(values, what: str) -> str | None:
    """``what`` when every value is 0 (the floor of an accuracy), else None."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return what if len(v) and (v == 0).all() else None


def _interval(iv) -> tuple[float, float] | None:
    """A (lo, hi) interval, or None when either end is missing."""
    if iv is None or not all(np.isfinite(iv)):
        return None
    return float(iv[0]), float(iv[1])


# ---------------------------------------------------------------------------
# Distributional memorization across the ladder
# ---------------------------------------------------------------------------


def _cluster_kw(g: pd.DataFrame, task: str) -> dict:
    return dict(unit=TASK_UNITS.get(task, "facts"), n_units=_units(g), null_kind="permutation",
                null_value=float(np.nanmedian(g["null_rho"])) if g["null_rho"].notna().any() else None)


def mem_significant(mem: pd.DataFrame, task: str = "knowledge", n: int = 3, source_value: str | None = None
                    ) -> Claim:
    """The source's TriviaQA Mem_n is significant and positive at every size: every
    model's cluster p below :data:`ALPHA` with ρ > 0 (decided on the weakest model, or
    on the most significant negative one, which is evidence against)."""
    t, g = trend(mem, task, n), _rows(mem, task, n)
    unit, units = TASK_UNITS.get(task, "facts"), _units(g)
    kw = dict(comparison=f"every model's cluster-permutation p < {ALPHA:g} with ρ > 0 (intersection–union), "
                         f"at least {MIN_FACTS} {unit}", section=MEM,
              source_value=source_value or "Mem_n significant and positive at every size", **_cluster_kw(g,
                                                                                                         task),
              extra={"unit": "share", "task": task, "mem_n": n, "pairs": _pairs(mem, task, n)})
    statement = f"The {task} task's Mem_{n} is significant and positive for every model"
    good = t.significant & (t.rho > 0)
    kw["extra"]["k"] = int(good.sum())
    gate = _gate(t, units, unit)
    if gate is not None and gate.status == NOT_TESTABLE:
        return _nt(f"mem{n}_significant", statement, gate.reason, **{k: v for k, v in kw.items()
                                                                    if k not in ("n_units", "null_kind",
                                                                                 "null_value")})
    neg = t.significant & (t.rho < 0)
    i = int(np.nanargmin(np.where(neg, t.pvalue, np.inf))) if neg.any() else int(np.nanargmin(t.rho))
    value, p = float(t.rho[i]), float(t.pvalue[i]) if neg.any() else float(np.nanmax(t.pvalue))
    c_rho, c_p = g["control_rho"].to_numpy(float), g["control_pvalue"].to_numpy(float)
    control, control_p = float(np.nanmin(c_rho)), float(np.nanmax(c_p))
    v = gate or decide(value=value, null=kw["null_value"] or 0.0, p=p, n_units=units, min_n=MIN_FACTS,
                       control_value=control, control_p=control_p, unit=unit)
    if "rho_lo" in g and np.isfinite(g["rho_lo"].iloc[i]) and np.isfinite(g["rho_hi"].iloc[i]):
        kw["interval"] = (float(g["rho_lo"].iloc[i]), float(g["rho_hi"].iloc[i]))
    return _claim(f"mem{n}_significant", statement, v, value=value, p=p, n=int(g["pairs"].min()),
                  min_n=MIN_FACTS, control_value=control, **kw)


def mem_rises_claims(mem: pd.DataFrame, task: str = "knowledge", ns=(3, 5), sources=None) -> list[Claim]:
    """The source's TriviaQA Mem_n rises with model size, per n (a Holm family over
    the n): Spearman's ρ of the models' Mem_n with size, a permutation null over the
    models; the control is the same trend of the answers-swapped Mem_n. No trend is
    read when no model's Mem_n is significant."""
    sources = sources or {}
    specs = []
    for n in ns:
        t, g = trend(mem, task, n), _rows(mem, task, n)
        spec = _trend_spec(t.params, t.rho, control=g["control_rho"].to_numpy(float) if len(g) else None)
        spec["interval"] = _trend_interval(g)
        if t.defined and t.n_models >= MIN_MODELS and t.n_sig == 0:
            spec["gate"] = Verdict(INCONCLUSIVE, "no model's Mem is significant (cluster permutation), so "
                                                 "there is no memorization trend to read")
        specs.append(spec)
    _holm(specs)
    return [_trend_claim(f"mem{n}_rises", f"The {task} task's Mem_{n} rises with model size", s, section=MEM,
                         family=f"mem_rises ({task})", interval=s["interval"],
                         source_value=sources.get(n) or ("TriviaQA: Mem_n increases with model size "
                                                         "(Figure 4, "
                                                         "solid lines; numbers given for n = 3 only)"),
                         extra={"task": task, "mem_n": n})
            for n, s in zip(ns, specs)]


def _trend_interval(g: pd.DataFrame) -> tuple[float, float] | None:
    """The bootstrap interval over units of a trend with size (the ``trend_lo``,
    ``trend_hi`` of :func:`~analysis.distributional.controls.mem_intervals`), or None."""
    if not len(g) or "trend_lo" not in g:
        return None
    lo, hi = float(g["trend_lo"].iloc[0]), float(g["trend_hi"].iloc[0])
    return (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else None


def mem_rises(mem: pd.DataFrame, task: str = "knowledge", n: int = 3,
              source_value: str | None = None) -> Claim:
    """One n of :func:`mem_rises_claims` (a family of one)."""
    return mem_rises_claims(mem, task, (n,), {n: source_value})[0]


def mem_none(mem: pd.DataFrame, task: str = "reasoning", n: int = 3,
             source_value: str | None = None) -> Claim:
    """The source's GSM8K: no significant Mem_n at any size. The count of models whose
    cluster p is below :data:`ALPHA` after Holm's correction over the models, held
    against zero; when the answers-swapped control also has a significant model,
    the count measures the method (mechanical)."""
    t, g = trend(mem, task, n), _rows(mem, task, n)
    unit, units = TASK_UNITS.get(task, "problems"), _units(g)
    statement = f"The {task} task's Mem_{n} is significant for no model"
    kw = dict(comparison=f"models with Holm-adjusted cluster-permutation p < {ALPHA:g} = 0, at least "
                         f"{MIN_FACTS} {unit}", section=MEM,
              source_value=source_value or "no significant Mem_n at any size")
    gate = _gate(t, units, unit)
    if gate is not None and gate.status == NOT_TESTABLE:
        return _nt(f"mem{n}_{task}_none", statement, gate.reason, unit=unit, **kw)
    adj = np.array([np.nan if a is None else a for a in holm(list(t.pvalue))], float)
    ctrl = np.array([np.nan if a is None else a for a in holm(list(g["control_pvalue"].to_numpy(float)))],
                    float)
    sig, csig = adj < ALPHA, ctrl < ALPHA
    k, ck = int(sig.sum()), int(csig.sum())
    sig_rho = t.rho[sig]
    sign = 0 if not len(sig_rho) else -1 if (sig_rho < 0).all() else 1 if (sig_rho > 0).all() else 0
    if gate is not None:
        v = gate
    else:
        status, reason = within(value=k / t.n_models, target=0.0, tolerance=0.0, n=units, min_n=MIN_FACTS,
                                exact=True, unit=unit)
        reason = f"{k} of {t.n_models} models with Holm-adjusted p < {ALPHA:g}; {reason}"
        v = Verdict(status, reason)
        if status == NOT_REPRODUCED and ck:  # the protocol: a control that shows it makes it mechanical
            v = Verdict(INCONCLUSIVE,
                        reason + f"; but the answers-swapped control has {ck} such models, so this "
                                               "measures the method, not the phenomenon", True)
    p_adj = float(np.nanmin(adj)) if np.isfinite(adj).any() else None
    return _claim(f"mem{n}_{task}_none", statement, v, value=k / t.n_models, p=float(np.nanmin(t.pvalue)),
                  p_adjusted=p_adj, family=f"mem{n}_{task}_none: the {t.n_models} models",
                  n=int(g["pairs"].min()),
                  min_n=MIN_FACTS, control_value=ck / t.n_models, **_cluster_kw(g, task), **kw,
                  extra={"unit": "share", "task": task, "mem_n": n, "k": k, "sign": sign,
                         "pairs": _pairs(mem, task, n), "control_k": ck})


def _above_spec(mem: pd.DataFrame, task: str, n: int) -> dict:
    tg, inf = _rows(mem, task, n), _rows(mem, task, n, lm="∞-gram")
    a, b = tg["rho"].to_numpy(float), inf["rho"].to_numpy(float)
    ok = np.isfinite(a) & np.isfinite(b) if len(a) == len(b) else np.zeros(0, bool)
    above, total = int((a[ok] >= b[ok]).sum()), int(ok.sum())
    est = ranks.sign_test(above, total)
    spec = {"value": est.value, "p": est.p, "null": 0.5, "n_units": total, "min_n": MIN_MODELS,
            "unit": "models",
            "gate": None, "k": above}
    if len(a) == len(b) and "control_rho" in tg:
        ca, cb = tg["control_rho"].to_numpy(float), inf["control_rho"].to_numpy(float)
        cok = np.isfinite(ca) & np.isfinite(cb)
        c = ranks.sign_test(int((ca[cok] >= cb[cok]).sum()), int(cok.sum()))
        spec |= {"control_value": c.value, "control_p": c.p}
    if not total:
        spec["gate"] = Verdict(NOT_TESTABLE, "no model has both correlations")
    return spec


def above_infgram_claims(mem: pd.DataFrame, tasks=("knowledge", "reasoning"), n: int = 3, sources=None
                         ) -> list[Claim]:
    """Mem_n ≥ Mem_∞ per task, a Holm family over the tasks: the sign test over the
    models (the source states it for TriviaQA and MMLU, so the knowledge task is its
    claim and the reasoning task the book's); the control is the same sign test on
    the answers-swapped correlations."""
    sources = sources or {}
    specs = [_above_spec(mem, task, n) for task in tasks]
    _holm(specs)
    out = []
    for task, s in zip(tasks, specs):
        kind = SOURCE if sources.get(task) else EXTENSION
        out.append(_claim(
            f"mem{n}_above_infgram_{task}", f"On the {task} task, Mem_{n} (task-gram LM) is at least Mem_∞ "
            "(∞-gram LM)", _decide_spec(s), kind,
            comparison=f"share of models with Mem_{n} ≥ Mem_∞, two-sided sign test (Holm over the tasks) "
                       f"p < {ALPHA:g}, at least {MIN_MODELS} models",
            value=s["value"], p=s["p"], p_adjusted=s.get("p_adjusted"), family=f"mem{n}_above_infgram",
            n=s["n_units"],
            n_units=s["n_units"], unit="models", min_n=MIN_MODELS, null_kind="analytic", null_value=0.5,
            control_value=s.get("control_value"),
            control_reason=None if _num(s.get("control_value")) is not None else "no answers-swapped "
                                                                                 "correlations",
            section=MEM, source_value=sources.get(task),
            extra={"unit": "share", "task": task, "mem_n": n, "k": s["k"]}))
    return out


def above_infgram_claim(mem: pd.DataFrame, task: str, n: int = 3, source_value: str | None = None) -> Claim:
    """One task of :func:`above_infgram_claims` (a family of one)."""
    return above_infgram_claims(mem, (task,), n, {task: source_value})[0]


def tied_claims(tables: Mapping[tuple, pd.DataFrame], mem: pd.DataFrame, tasks=("knowledge", "reasoning"),
                n: int = 3) -> list[Claim]:
    """Fewer than half of a task's test pairs have ``P_{n,D} = 1`` (the task-gram LM can
    order them), per task, a Holm family (the book's own): the share with a cluster
    bootstrap over the task's units, decided on its two-sided bootstrap p against
    one half."""
    specs, info = [], []
    for task in tasks:
        table, unit = tables.get((task, n)), TASK_UNITS.get(task, "facts")
        t = trend(mem, task, n)
        top = max(abs(t.lo), abs(t.hi)) if t.defined else np.nan
        if table is None or not len(table):
            specs.append({"gate": Verdict(NOT_TESTABLE, "this run has no test pair to count"), "p": None})
            info.append((task, unit, table, None, top))
            continue
        b = share_bootstrap(table["p_taskgram"].to_numpy(float) == 1, table["instance"].to_numpy(), MOST)
        specs.append({"value": b["value"], "p": b["pvalue"], "null": MOST, "n_units": b["units"],
                      "min_n": MIN_FACTS, "direction": -1, "unit": unit, "gate": None})
        info.append((task, unit, table, b, top))
    _holm(specs)
    out = []
    for s, (task, unit, table, b, top) in zip(specs, info):
        kw = dict(section=MEM, unit=unit, family=f"tied{n}",
                  control_reason="a property of the corpus counts alone; no model signal to take away",
                  comparison=f"share of pairs below {MOST:g}, cluster bootstrap over the {unit} (Holm "
                             "over the "
                             "tasks)",
                  extra={"unit": "share", "task": task, "mem_n": n, "max_abs_mem": top,
                         "near_zero": bool(top < NEAR_ZERO)})
        statement = f"Fewer than half of the {task} task's {n}-gram test pairs have P(s^y | s^x) = 1"
        if b is None:
            out.append(_nt(f"tied{n}_{task}", statement, s["gate"].reason, EXTENSION, **kw))
            continue
        out.append(_claim(f"tied{n}_{task}", statement, _decide_spec(s), EXTENSION, value=b["value"],
                          interval=b["interval"], p=b["pvalue"], p_adjusted=s.get("p_adjusted"), n=len(table),
                          n_units=b["units"], min_n=MIN_FACTS, null_kind="target", null_value=MOST, **kw))
    return out


def count_claims(mem: pd.DataFrame, tasks=("knowledge", "reasoning"), n: int = 3) -> list[Claim]:
    """A variant beyond the paper, per task (a Holm family): the models' probabilities
    follow the pair count ``C((x, y))``. The median over the models of their ρ, with
    the cluster permutation null of the same statistic (the permutations are shared
    by the models of a table) and the answers-swapped control."""
    specs, rows = [], []
    for task in tasks:
        c, g = trend(mem, task, n, lm="pair count"), _rows(mem, task, n, lm="pair count")
        unit, units = TASK_UNITS.get(task, "facts"), _units(g)
        value, p, null, control, control_p = aggregate_null(g) if len(g) else (np.nan,) * 5
        specs.append({"value": value, "p": p, "null": null if np.isfinite(null) else 0.0, "n_units": units,
                      "min_n": MIN_FACTS, "unit": unit, "control_value": control, "control_p": control_p,
                      "gate": _gate(c, units, unit), "null_value": null})
        rows.append((task, c, g))
    _holm(specs)
    out = []
    for s, (task, c, _g) in zip(specs, rows):
        pos = int((c.significant & (c.rho > 0)).sum())
        neg = int((c.significant & (c.rho < 0)).sum())
        statement = f"On the {task} task, the models' probabilities follow the pair count C((s^x, s^y))"
        kw = dict(section=MEM, unit=s["unit"], family=f"count{n}",
                  comparison=f"median ρ over the models, cluster-permutation p (Holm over the tasks) < "
                             f"{ALPHA:g}, "
                             f"at least {MIN_FACTS} units",
                  extra={"unit": "median_rho", "task": task, "mem_n": n, "k": c.n_sig, "pos": pos,
                         "neg": neg})
        v = _decide_spec(s)
        if v.status == NOT_TESTABLE:
            out.append(_nt(f"count{n}_{task}", statement, v.reason, EXTENSION, **kw))
            continue
        out.append(_claim(f"count{n}_{task}", statement, v, EXTENSION, value=s["value"], p=s["p"],
                          p_adjusted=s.get("p_adjusted"), n=c.n_models, n_units=s["n_units"],
                          min_n=MIN_FACTS, null_kind="permutation", null_value=s["null_value"],
                          control_value=s["control_value"], **kw))
    return out


def count_claim(mem: pd.DataFrame, task: str, n: int = 3) -> Claim:
    """One task of :func:`count_claims` (a family of one)."""
    return count_claims(mem, (task,), n)[0]


def kendall_rises(kendall: pd.DataFrame, task: str = "reasoning", n: int = 3, source_value: str | None = None,
                  interval: tuple[float, float] | None = None) -> Claim:
    """The source's GSM8K Kendall tau distance rises with model size (read as
    generalization); ``interval``: the trend's bootstrap interval over problems
    (:func:`~analysis.distributional.controls.kendall_trend_interval`)."""
    k = trend(kendall, task, n, value="kendall")
    return _trend_claim(f"kendall{n}_rises", f"The {task} task's Kendall tau distance rises with model size",
                        _trend_spec(k.params, k.rho), section=MEM, interval=_interval(interval),
                        source_value=source_value or "Kendall tau distance rises with size (GSM8K)",
                        extra={"task": task, "mem_n": n})


def kendall_inf_claim(kendall: pd.DataFrame, task: str = "reasoning", n: int = 3,
                      source_value: str | None = SOURCE_KENDALL) -> Claim:
    """The source's GSM8K Kendall tau distance is larger against the ∞-gram LM than
    against the task-gram LM: the sign test over the models with both distances
    (:func:`~analysis.distributional.method_tables.kendall_table` with ``log_inf``)."""
    tg = trend(kendall, task, n, value="kendall")
    inf = trend(kendall, task, n, lm="∞-gram", value="kendall")
    both = np.isfinite(tg.rho) & np.isfinite(inf.rho) if tg.n_models == inf.n_models else np.zeros(0, bool)
    above, total = int((inf.rho[both] > tg.rho[both]).sum()), int(both.sum())
    est = ranks.sign_test(above, total)
    v = decide(value=est.value, null=0.5, p=est.p, n_units=total, min_n=MIN_MODELS, unit="models")
    return _claim(f"kendall{n}_inf_above",
                  f"On the {task} task, the Kendall tau distance to the ∞-gram LM exceeds that to the "
                  "task-gram LM", v,
                  comparison=f"share of models with the larger ∞-gram distance, two-sided sign test "
                             f"p < {ALPHA:g}, at least {MIN_MODELS} models",
                  value=est.value, p=est.p, n=total, n_units=total, unit="models", min_n=MIN_MODELS,
                  null_kind="analytic", null_value=0.5, control_reason=NO_LADDER_CONTROL, section=MEM,
                  source_value=source_value or SOURCE_KENDALL, extra={"unit": "share", "task": task,
                                                                      "mem_n": n,
                                                                     "k": above})


def mem_claims(mem: pd.DataFrame, kendall: pd.DataFrame, tables: Mapping[tuple, pd.DataFrame],
               paper: pd.DataFrame | None = None, n: int = 3, also_n: int = 5,
               kendall_interval: tuple[float, float] | None = None) -> list[Claim]:
    """Every claim of the memorization section, for ``n``-grams (and the knowledge
    task's trend for ``also_n``-grams), from
    :func:`~analysis.distributional.inference.cluster_mem_table` of
    :func:`~analysis.distributional.method_tables.mem_table` and
    :func:`~analysis.distributional.method_tables.kendall_table`."""
    k3 = paper_value(paper, "Figure 4", f"TriviaQA (n = {n})")
    gsm = paper_value(paper, "Figure 4", "GSM8K")
    return [
        mem_significant(mem, "knowledge", n, k3), *mem_rises_claims(mem, "knowledge", (n, also_n), {n: k3}),
        mem_none(mem, "reasoning", n, gsm),
        *above_infgram_claims(mem, ("knowledge", "reasoning"), n,
                              {"knowledge": paper_value(paper, "Figure 4", "TriviaQA")}),
        *tied_claims(tables, mem, ("knowledge", "reasoning"), n),
        *count_claims(mem, ("knowledge", "reasoning"), n),
        kendall_rises(kendall, "reasoning", n, gsm, kendall_interval),
        kendall_inf_claim(kendall, "reasoning", n),
    ]
