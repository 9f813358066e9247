"""The pairwise test's precision and recall at the source's two thresholds, their
intervals over resampled models (analysis.size.nulls.rate_bootstrap), the probe's
validity on each real model, and the source's results this run cannot test."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.core.claims import (
    DOES_NOT_HOLD,
    EXTENSION,
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    from_json,
    to_json,
)
from analysis.size.claims import probe_claims, probe_modes, source_only_claims
from analysis.size.claims_ladder import ladder_claims, pairwise_claims
from analysis.size.method import ladder_method
from analysis.size.method_absolute import ScalingLaw
from analysis.size.method_relative import tau_sweep, truly_larger
from analysis.size.nulls import LADDER_STATS, LadderNulls, ladder_nulls, rate_bootstrap, tau_tag
from analysis.size.params import SizeError, load_paper_table
from analysis.size.text import probe_text, render, untestable_text
from analysis.stats.resampling import cluster_bootstrap
from analysis.stats.result import Estimate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from size_toys import toy_acc  # noqa: E402

# --- four models of known size -------------------------------------------------------------
#
# sizes A = 100, B = 150, C = 180, D = 400; the ratio of each truly-larger candidate:
#   B/A = 1.5, C/A = 1.8, D/A = 4.0, C/B = 1.2, D/B = 2.67, D/C = 2.22 (the reverse pairs are below 1)
# decided "f larger" (p ≤ 0.05): BA, CA, DA, CB, DB and AB (a false one); DC is missed (p = 0.20)
#
# τ = 0.01 (truth: ratio > 1.01): BA, CA, DA, CB, DB, DC truly larger (6)
#   TP = BA, CA, DA, CB, DB = 5; FP = AB = 1; FN = DC = 1
#   precision = 5/6, recall = 5/6
# τ = 0.70 (truth: ratio > 1.70): CA, DA, DB, DC truly larger (4)
#   TP = CA, DA, DB = 3; FP = BA, CB, AB = 3; FN = DC = 1
#   precision = 3/6 = 0.5, recall = 3/4 = 0.75
# τ = 0.50 (truth: ratio > 1.50; B/A = 1.5 is not): the same four as at 0.70, so 0.5 and 0.75 again

THETA4 = pd.Series({"A": 100.0, "B": 150.0, "C": 180.0, "D": 400.0})
DECIDED4 = {("B", "A"): 0.01, ("C", "A"): 0.02, ("D", "A"): 0.001, ("C", "B"): 0.04, ("D", "B"): 0.003,
            ("A", "B"): 0.04, ("D", "C"): 0.20}


def _pairs4() -> pd.DataFrame:
    rows = [(f, g, DECIDED4.get((f, g), 0.9)) for f in THETA4.index for g in THETA4.index if f != g]
    return pd.DataFrame(rows, columns=["f", "g", "pvalue"])


def _method(theta: pd.Series, pairs: pd.DataFrame) -> SimpleNamespace:
    """What pairwise_claims reads of a LadderMethod: sizes, pairs, the τ sweep, the law's n."""
    return SimpleNamespace(theta=theta, pairs=pairs, sweep=tau_sweep(pairs, theta),
                           law=ScalingLaw(1.0, 1.0, 0.0, 1.0, len(theta)))


def _nulls(p=0.005, null=0.0) -> LadderNulls:
    return LadderNulls({k: Estimate(0.0, p=p, null_value=null, n=4, n_units=4) for k in LADDER_STATS})


def test_precision_and_recall_at_two_thresholds_on_four_models():
    claims = {c.id: c for c in pairwise_claims(_method(THETA4, _pairs4()), nulls=_nulls())}
    assert list(claims) == ["lab_precision", "lab_recall", "lab_precision_t001", "lab_recall_t001",
                            "lab_precision_t070", "lab_recall_t070"]
    got = {cid: (c.value, c.n, c.extra["tau"]) for cid, c in claims.items()}
    assert got == {
        "lab_precision_t001": (pytest.approx(5 / 6), 6, 0.01),  # 5 TP of 6 decided
        "lab_recall_t001": (pytest.approx(5 / 6), 6, 0.01),  # 5 TP of 6 truly larger
        "lab_precision_t070": (0.5, 6, 0.7),  # 3 TP of 6 decided
        "lab_recall_t070": (0.75, 4, 0.7),  # 3 TP of 4 truly larger
        "lab_precision": (0.5, 6, 0.5),
        "lab_recall": (0.75, 4, 0.5),
    }
    for c in claims.values():
        assert (c.unit, c.n_units, c.kind, c.null_kind) == ("models", 4, "source", "permutation")
        assert c.extra["n_boot"] == 2000 and "resamples of the 4 models" in c.comparison
    # the source's number at each end of its range (Figure 3)
    assert [claims[k].source_value for k in ("lab_precision_t001", "lab_recall_t001", "lab_precision_t070",
                                             "lab_recall_t070")] == ["0.91", "0.87", "0.83", "0.97"]
    assert claims["lab_precision"].source_value == "≥ 0.83"  # the chapter's τ: the range's floor
    text = render(claims["lab_recall_t070"])
    assert text.startswith("At τ = 0.7 the test's recall is 0.75 over 4 pairs truly larger (95% interval ")
    assert "over 2,000 resamples of the 4 models, the pairs rebuilt among each resample's models" in text
    assert "the source's is 0.97 at τ = 0.70" in text


def _literal_model_bootstrap(pairs, theta, tau, alpha=0.05, n_boot=2000, seed=0):
    """The bootstrap written out: draw the models with replacement, rebuild the ordered pairs among
    the drawn models (two draws of one model make no pair), recompute both ratios."""
    rng = np.random.default_rng(seed)
    models = list(theta.index)
    decided = {(r.f, r.g): r.pvalue <= alpha for r in pairs.itertuples()}
    out = {"precision": [], "recall": []}
    for _ in range(n_boot):
        drawn = [models[i] for i in rng.integers(0, len(models), size=len(models))]
        rebuilt = [(f, g) for a, f in enumerate(drawn) for b, g in enumerate(drawn) if a != b and f != g]
        assert {m for pair in rebuilt for m in pair} <= set(drawn)  # only the resample's own models
        d = np.array([decided[p] for p in rebuilt], dtype=bool)
        t = np.array([theta[f] > (1 + tau) * theta[g] for f, g in rebuilt], dtype=bool)
        if d.sum():
            out["precision"].append((d & t).sum() / d.sum())
        if t.sum():
            out["recall"].append((d & t).sum() / t.sum())
    return {k: tuple(np.quantile(v, [0.025, 0.975])) for k, v in out.items()}


@pytest.mark.parametrize("tau", [0.01, 0.7])
def test_the_model_bootstrap_rebuilds_the_pairs_among_the_resampled_models(tau):
    got = rate_bootstrap(_pairs4(), THETA4, tau, n_boot=400, seed=3)
    want = _literal_model_bootstrap(_pairs4(), THETA4, tau, n_boot=400, seed=3)
    for what in ("precision", "recall"):
        assert got[what] == pytest.approx(want[what])


def test_the_model_bootstrap_resamples_models_not_pairs():
    # three models of sizes 1, 2, 4, every ordered pair decided larger: each pair of distinct models
    # gives one true and one false "larger", so in every resample of the models the precision is 1/2
    theta = pd.Series({"a": 1.0, "b": 2.0, "c": 4.0})
    pairs = pd.DataFrame([(f, g, 0.01) for f in theta.index for g in theta.index if f != g],
                         columns=["f", "g", "pvalue"])
    assert rate_bootstrap(pairs, theta, 0.5)["precision"] == (0.5, 0.5)
    # resampling the six pairs as if independent: the count of true pairs in a resample is
    # Binomial(6, 1/2): P(0) = 1/64 < 2.5% < P(≤ 1) = 7/64, so the interval runs from 1/6 to 5/6
    truth = truly_larger(theta[pairs["f"]].to_numpy(), theta[pairs["g"]].to_numpy(), 0.5)
    by_pair = cluster_bootstrap(lambda rows: truth[rows].mean(), np.arange(len(pairs)))
    assert (by_pair.lo, by_pair.hi) == (pytest.approx(1 / 6), pytest.approx(5 / 6))
    # the claim takes the models' interval: with four such models (sizes 1, 2, 4, 8, every ratio
    # above 1.7) the precision is 1/2 in every resample, wholly below the source's 0.83: evidence against
    theta8 = pd.Series({"a": 1.0, "b": 2.0, "c": 4.0, "d": 8.0})
    pairs8 = pd.DataFrame([(f, g, 0.01) for f in theta8.index for g in theta8.index if f != g],
                          columns=["f", "g", "pvalue"])
    claims = {c.id: c for c in pairwise_claims(_method(theta8, pairs8), nulls=_nulls())}
    low = claims["lab_precision_t070"]
    assert (low.value, low.interval, low.n, low.n_units) == (0.5, (0.5, 0.5), 12, 4)
    assert low.status == NOT_REPRODUCED and "lies outside" in low.reason
    # recall: every truly larger pair of every resample is decided larger
    assert claims["lab_recall_t070"].interval == (1.0, 1.0)


def test_two_models_by_hand():
    # models drawn {x, y}: their two pairs, y > x decided and true, x > y neither: both ratios 1;
    # drawn {x, x} or {y, y}: no pair, left out. So every kept resample gives 1 and 1.
    theta = pd.Series({"x": 1.0, "y": 3.0})
    pairs = pd.DataFrame({"f": ["y", "x"], "g": ["x", "y"], "pvalue": [0.001, 0.8]})
    assert rate_bootstrap(pairs, theta, 0.7) == {"precision": (1.0, 1.0), "recall": (1.0, 1.0)}


def test_bad_thresholds_and_pairs_fail_clearly():
    method = _method(THETA4, _pairs4())
    with pytest.raises(SizeError, match=r"taus \[0\.3\] have no value in the source"):
        pairwise_claims(method, taus=(0.3,))
    with pytest.raises(SizeError, match="alpha must be in"):
        pairwise_claims(method, alpha=1.5)
    coarse = SimpleNamespace(**{**vars(method), "sweep": tau_sweep(_pairs4(), THETA4, taus=[0.01, 0.5])})
    with pytest.raises(SizeError, match=r"no row at τ = 0\.7 \(nearest 0\.5\)"):
        pairwise_claims(coarse)
    with pytest.raises(SizeError, match=r"theta lacks the sizes of \['D'\]"):
        rate_bootstrap(_pairs4(), THETA4.drop("D"), 0.01)
    with pytest.raises(SizeError, match="n_boot must be a positive integer"):
        rate_bootstrap(_pairs4(), THETA4, 0.01, n_boot=0)
    assert (tau_tag(0.01), tau_tag(0.7), tau_tag(0.5)) == ("t001", "t070", "t050")
    with pytest.raises(SizeError, match="multiple of 0.01"):
        tau_tag(0.015)


# --- on a ladder built by the method ----------------------------------------------------------


@pytest.fixture(scope="module")
def toy_ladder():
    theta = pd.Series({"w1": 100.0, "w2": 160.0, "w3": 250.0, "d1": 400.0, "d2": 640.0})
    method = ladder_method(toy_acc(theta), theta, families={m: m[0] for m in theta.index})
    return method, ladder_nulls(method)


def test_the_permuted_size_null_covers_both_thresholds(toy_ladder):
    method, lab_nulls = toy_ladder
    for tau, tag in ((0.01, "t001"), (0.7, "t070")):
        row = tau_sweep(method.pairs, method.theta, taus=[tau]).iloc[0]
        for what in ("precision", "recall"):
            est = lab_nulls[f"{what}_{tag}"]
            assert est.value == pytest.approx(row[what]) and est.n_null == 200 and est.n_units == 5
    claims = {c.id: c for c in ladder_claims(method, nulls=lab_nulls)}
    for cid in ("lab_precision_t001", "lab_recall_t001", "lab_precision_t070", "lab_recall_t070"):
        c = claims[cid]
        stat = cid.removeprefix("lab_")
        assert (c.p, c.null_value, c.n_units) == (lab_nulls[stat].p, lab_nulls[stat].null_value, 5)
    assert from_json(to_json(list(claims.values()))) == list(claims.values())


# --- the probe's validity on each real model --------------------------------------------------


def _gap() -> pd.DataFrame:
    rows = [  # model, popular, baseline, gap, ci_lo, ci_hi, n_popular, n_baseline, n_rows
        ("above", 0.30, 0.10, 0.20, 0.05, 0.35, 37, 4, 246),
        ("smol", 0.029, 0.026, 0.003, -0.005, 0.010, 37, 4, 246),  # results/size.json's SmolLM2
        ("below", 0.10, 0.20, -0.10, -0.20, -0.01, 37, 4, 246),
        ("floor", 0.0, 0.0, 0.0, 0.0, 0.0, 37, 4, 246),
    ]
    return pd.DataFrame(rows, columns=["model", "popular", "baseline", "gap", "ci_lo", "ci_hi", "n_popular",
                                       "n_baseline", "n_rows"])


def test_probe_claims_say_whether_the_popular_accuracy_is_off_the_floor():
    modes = probe_modes(pd.DataFrame({"model": ["smol", "smol", "above"],
                                         "mode": ["chat", "chat", "completion"]}))
    assert modes == {"smol": "chat", "above": "completion"}
    claims = probe_claims(_gap(), ["above", "smol", "below", "floor", "silent"], modes=modes)
    got = {c.id: (c.status, c.n_units) for c in claims}
    assert got == {"probe_above": (HOLDS, 41),  # the interval over texts lies above 0
                   "probe_smol": (INCONCLUSIVE, 41),  # +0.003, the interval covers 0
                   "probe_below": (DOES_NOT_HOLD, 41),  # the whole interval below 0
                   "probe_floor": (NOT_TESTABLE, 41),  # 0 on every text
                   "probe_silent": (NOT_TESTABLE, None)}
    for c in claims:
        assert (c.kind, c.unit, c.section) == (EXTENSION, "texts", "size-results")
        assert "interval" in c.comparison and "baseline" in c.comparison
    smol = claims[1]
    assert smol.value == pytest.approx(0.003) and smol.interval == (-0.005, 0.010)
    assert render(smol) == (
        "On smol (queried in chat mode, as the source queries its models) the popular texts are predicted "
        "at 0.029, against a floor of 0.026 on the baseline texts (difference +0.003, 95% interval -0.005 to "
        "+0.010 over 41 texts): this run cannot tell its popular-text accuracy from that floor, so its "
        "accuracy profile is not shown to carry any memorization the method could read. **Inconclusive**: "
        "the source's direction, not significant (95% interval [-0.005, 0.01] covers 0), 41 texts.")
    # completion mode is said to be the book's adaptation
    assert "this book's own adaptation for a base model: the source queries chat models only" in render(
        claims[0])
    assert probe_text(claims).startswith("On above (queried in completion mode")


# --- the source's results on models this run does not query --------------------------------


def test_the_source_results_this_run_cannot_test_are_listed():
    claims = source_only_claims()
    assert [(c.id, c.status, c.kind) for c in claims] == [("closed_hierarchy", NOT_TESTABLE, "source"),
                                                          ("moe_bounds_valid", NOT_TESTABLE, "source")]
    t3 = load_paper_table("table3").set_index("model")["best_lb"]
    assert f"claude-opus-4.6 {t3['anthropic/claude-opus-4.6']:g}B" in claims[0].source_value
    assert "claude-opus-4.6 433B, claude-sonnet-4.6 405B, claude-haiku-4.5 49B" in claims[0].source_value
    assert "none of the 21 closed models" in claims[0].reason
    assert claims[1].source_value == "16 of 16 (Table II)"
    md = (Path(__file__).resolve().parents[1] / "notebooks" / "size.md").read_text()
    assert {c.section for c in claims} == {"size-paper-tables"} and "(size-paper-tables)=" in md
    text = untestable_text(claims)
    assert text.count("**Not testable here**") == 2 and text.startswith("Within a provider's generation")
