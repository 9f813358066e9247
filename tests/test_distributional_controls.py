"""Answer frequency, units and the source's scoring rules (issue 45): the partial
Spearman correlation, the bootstrap over facts, nltk's stopwords, non-contiguous
n-grams, the matched thresholds, and the claims built on them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis import ngrams as G
from analysis.core.claims import HOLDS, NOT_TESTABLE
from analysis.distributional.claims_causes import partial_claims
from analysis.distributional.claims_tasks import untestable_claims
from analysis.distributional.controls import (
    SWAPPED,
    distinct_values,
    mem_intervals,
    partial_mem_table,
    swapped_task,
    unit_resamples,
)
from analysis.distributional.method import (
    ngram_segments,
    noncontiguous_share,
    noncontiguous_shares,
    pair_contexts,
)
from analysis.distributional.method_tables import sensitivity_table
from analysis.distributional.params import PROFILES, DistributionalError
from analysis.distributional.run import ngram_logprob
from analysis.distributional.source_rules import (
    NLTK_STOPWORD_COUNT,
    e5_keep_rate,
    matched_thresholds,
    nltk_stopwords,
    source_stopwords,
    stopwords_source,
)
from analysis.stats.partial import partial_spearman, residual_rank_corr
from analysis.stats.result import StatsError
from distributional_toys import BigramToy

# ---------------------------------------------------------------------------
# The partial Spearman correlation
# ---------------------------------------------------------------------------

# ranks are the values themselves; by hand (Σd² over n = 5): r_xy = 1 − 6·4/120 = 0.8,
# r_xz = 1 − 6·4/120 = 0.8, r_yz = 1 − 6·14/120 = 0.3
X, Y, Z = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5], [1, 3, 2, 5, 4]
HAND = (0.8 - 0.8 * 0.3) / math.sqrt((1 - 0.8 ** 2) * (1 - 0.3 ** 2))


def test_partial_spearman_matches_the_hand_computed_formula():
    est = partial_spearman(X, Y, Z)
    assert est.value == pytest.approx(HAND, abs=1e-12)
    assert est.n == 5
    # the residual route gives the same number (the two definitions agree on ranks)
    assert residual_rank_corr(X, Y, Z) == pytest.approx(HAND, abs=1e-12)
    # monotone transforms change nothing (a count or its log)
    assert partial_spearman(np.exp(X), Y, np.log(Z)).value == pytest.approx(HAND, abs=1e-12)


def test_partial_spearman_removes_a_shared_driver():
    z = np.arange(50.0)
    rng = np.random.default_rng(0)
    x, y = z + rng.normal(0, 1, 50), z + rng.normal(0, 1, 50)
    assert partial_spearman(x, y, z).value < 0.5 < partial_spearman(x, y, rng.normal(size=50)).value


def test_partial_spearman_bad_input():
    with pytest.raises(StatsError, match="at least 4"):
        partial_spearman([1, 2, 3], [1, 2, 3], [3, 1, 2])
    with pytest.raises(StatsError, match="one length"):
        partial_spearman([1, 2, 3, 4], [1, 2, 3], [1, 2, 3, 4])


# ---------------------------------------------------------------------------
# Units: the bootstrap keeps a fact's rows together
# ---------------------------------------------------------------------------


def test_unit_resamples_keep_each_units_rows_together():
    units = np.array(["a", "a", "b", "b", "b", "c"])
    for idx in unit_resamples(units, n_boot=200, seed=1):
        for u, size in (("a", 2), ("b", 3), ("c", 1)):
            rows = np.flatnonzero(units == u)
            counts = [int((idx == r).sum()) for r in rows]
            assert len(set(counts)) == 1  # every row of the unit drawn equally often
            assert sum(counts) % size == 0
    with pytest.raises(DistributionalError, match="n_boot"):
        unit_resamples(units, n_boot=10)
    with pytest.raises(DistributionalError, match="two units"):
        unit_resamples(["a", "a"], n_boot=100)


def test_distinct_values():
    assert distinct_values([-1.0, -1.0, -2.0, np.nan, -1.0000000001]) == 2


# ---------------------------------------------------------------------------
# Memorization against answer frequency
# ---------------------------------------------------------------------------


def _freq_tables(model_follows: str, k: int = 40, seed: int = 0):
    """A table of ``k`` facts with two pairs each, where C(s^y) drives P_taskgram, and
    models whose log-probability follows either C(s^y) ("answer") or P_taskgram
    beyond it ("pair")."""
    rng = np.random.default_rng(seed)
    inst = np.repeat(np.arange(k), 2)
    c_y = np.repeat(rng.integers(2, 200, k), 2).astype(float)
    extra = rng.uniform(0.2, 1.0, 2 * k)
    p = np.clip(c_y / 400 * extra, 1e-4, 1)
    table = pd.DataFrame({"instance": inst, "p_taskgram": p, "c_y": c_y})
    ladder = pd.DataFrame({"model": ["m1", "m2", "m3", "m4", "m5", "m6"], "params": [1, 2, 3, 4, 5, 6]})
    base = np.log(c_y) if model_follows == "answer" else np.log(extra)
    llm = {(m, "knowledge", 3): base + rng.normal(0, 0.01, 2 * k) for m in ladder["model"]}
    return {("knowledge", 3): table}, llm, ladder


def test_partial_mem_separates_answer_frequency_from_the_pair():
    tables, llm, ladder = _freq_tables("answer")
    pm = partial_mem_table.compute(tables, llm, ladder, n_perm=200, n_boot=200)
    assert (pm["rho"] > 0.5).all()                      # the plain Mem is strong...
    assert (pm["partial"].abs() < 0.3).all()            # ...and vanishes once C(s^y) is held fixed
    assert (pm["rho_lo"] <= pm["rho"]).all() and (pm["rho"] <= pm["rho_hi"]).all()
    assert (pm["units"] == 40).all() and (pm["pairs"] == 80).all()
    claim = partial_claims(pm.assign(arm="task"))[0]
    assert claim.id == "mem3_partial_knowledge" and claim.unit == "facts" and claim.n_units == 40
    assert claim.extra["answer_frequency"] is True
    assert claim.status != HOLDS
    assert claim.interval is not None

    tables, llm, ladder = _freq_tables("pair")
    pm = partial_mem_table.compute(tables, llm, ladder, n_perm=200, n_boot=200)
    assert (pm["partial"] > 0.3).all()
    swap_tables, swap_llm, _ = _freq_tables("answer", seed=5)
    swap = partial_mem_table.compute(swap_tables, swap_llm, ladder, arm=SWAPPED, n_perm=200, n_boot=200)
    claim = partial_claims(pd.concat([pm, swap], ignore_index=True))[0]
    assert claim.status == HOLDS and not claim.extra["answer_frequency"]
    assert claim.control_value == pytest.approx(float(swap["partial"].median()), abs=1e-9)


def test_partial_claim_without_rows_is_not_testable():
    pm = pd.DataFrame({"task": ["knowledge"], "n": [3], "arm": ["task"], "model": ["m"], "partial": [np.nan],
                       "median_partial": [np.nan], "units": [0], "pairs": [0], "distinct": [0]})
    assert partial_claims(pm)[0].status == NOT_TESTABLE


def test_mem_intervals_bootstrap_every_unfiltered_row_and_the_trend():
    tables, llm, ladder = _freq_tables("answer")
    mem = pd.DataFrame([{"task": "knowledge", "n": 3, "model": m, "params": p, "filter": f, "lm": "task-gram",
                         "rho": 0.5} for m, p in zip(ladder["model"], ladder["params"])
                        for f in ("no filter", "paper")])
    out = mem_intervals.compute(mem, tables, llm, None, n_boot=200)
    nf = out[out["filter"] == "no filter"]
    assert nf[["rho_lo", "rho_hi", "trend_lo", "trend_hi"]].notna().all().all()
    assert out[out["filter"] == "paper"]["rho_lo"].isna().all()


def test_swapped_task_needs_the_knowledge_table():
    know = pd.DataFrame({"question": ["q1", "q2"], "prompt": ["p1", "p2"], "swapped_answer": ["b", "a"]})
    assert swapped_task(know)["outputs"] == ["b", "a"]
    with pytest.raises(DistributionalError, match="swapped_answer"):
        swapped_task(know.drop(columns="swapped_answer"))


# ---------------------------------------------------------------------------
# The source's rules: stopwords, non-contiguous n-grams, matched thresholds
# ---------------------------------------------------------------------------


def test_nltk_stopwords_are_the_registered_179_words():
    words = nltk_stopwords()
    assert len(words) == NLTK_STOPWORD_COUNT == 179
    assert stopwords_source() == "nltk English stopwords (179 words), nltk_data@5db857e"
    assert "mightn" in words and "whereupon" not in words       # nltk's, not scikit-learn's
    assert "whereupon" in G.STOPWORDS and len(G.STOPWORDS) == 318


def test_source_stopwords_switches_the_list_and_restores_it():
    text = "whereupon the cat sat"
    assert G.ngrams(text, 2) == [("cat", "sat")]
    with source_stopwords():
        assert G.ngrams(text, 2) == [("whereupon", "cat"), ("cat", "sat")]
    assert G.ngrams(text, 2) == [("cat", "sat")]
    with pytest.raises(RuntimeError), source_stopwords():
        raise RuntimeError
    assert len(G.STOPWORDS) == 318


def test_noncontiguous_ngram_is_found_where_its_words_stand():
    out = "The capital of France is Paris"
    assert ngram_segments(out, ("capital", "France", "Paris")) == [(4, 11), (15, 21), (25, 30)]
    assert ngram_segments(out, ("France", "is")) == [(15, 21 + 3)]
    assert ngram_segments(out, ("Paris", "France")) is None  # not in order
    table = pd.DataFrame({"instance": [0, 0], "y": [("capital", "France"), ("France", "is")]})
    contexts, grams = pair_contexts(table, ["Q:"], [out])
    assert grams == [("capital", "France"), "France is"]
    assert contexts == [("Q: The", "Q: The capital of"), "Q: The capital of"]
    assert noncontiguous_share(grams) == 0.5
    shares, every = noncontiguous_shares({("knowledge", 2): (contexts, grams)})
    assert shares == {("knowledge", 2): 0.5} and every == 0.5


def test_noncontiguous_ngram_is_scored_as_the_sum_of_its_runs():
    m = BigramToy("toy")
    lp = ngram_logprob(m, [("Q: The", "Q: The capital of"), "Q:"], [("capital", "France"), "ab"])
    sep = ngram_logprob(m, ["Q: The", "Q: The capital of"], ["capital", "France"])
    assert lp[0] == pytest.approx(sep.sum())
    assert lp[1] == pytest.approx(ngram_logprob(m, ["Q:"], ["ab"])[0])
    with pytest.raises(DistributionalError, match="contexts for"):
        ngram_logprob(m, [("a",)], [("b", "c")])


def test_matched_thresholds_keep_e5s_share():
    assert e5_keep_rate(0.7) == 1.0
    assert e5_keep_rate(0.8) == pytest.approx(2 / 3)
    assert e5_keep_rate(1.2) == 0.0
    cos = np.linspace(0.0, 0.99, 100)
    cuts = matched_thresholds(cos, (0.7, 0.75, 0.8))
    kept = {g: int((cos > t).sum()) for g, t in cuts.items()}
    assert kept == {0.7: 100, 0.75: 84, 0.8: 67}
    with pytest.raises(DistributionalError, match="lo < hi"):
        e5_keep_rate(0.7, (1.0, 0.7))
    with pytest.raises(DistributionalError, match="finite cosine"):
        matched_thresholds([np.nan], (0.7,))


def test_sensitivity_table_at_matched_thresholds():
    table = pd.DataFrame({"p_taskgram": np.linspace(0.1, 1, 10), "cosine": np.linspace(0, 0.9, 10),
                          "instance": np.arange(10), "x": [("q",)] * 10, "y": [("a",)] * 10})
    table.attrs["n"] = 3
    ladder = pd.DataFrame({"model": ["a"], "params": [1]})
    llm = {("a", "knowledge", 3): -np.linspace(1, 2, 10)}
    cuts = matched_thresholds(table["cosine"], (0.7, 0.8))
    sens = sensitivity_table(table, llm, ladder, "knowledge", 3, (0.7, 0.8), thresholds=cuts)
    assert list(sens["pairs"]) == [10, 7, 10]
    assert sens["gamma"].iloc[0].startswith("γ = 0.7 (MiniLM >")
    with pytest.raises(DistributionalError, match="no matched threshold"):
        sensitivity_table(table, llm, ladder, "knowledge", 3, (0.75,), thresholds=cuts)


def test_what_cannot_run_here_is_listed():
    found = {c.id: c for c in untestable_claims(None)}
    for id in ("olmo_gsm8k_none", "wmt_europarl"):
        assert found[id].status == NOT_TESTABLE and found[id].reason
    assert "Europarl" in found["wmt_europarl"].reason and "OLMo" in found["olmo_gsm8k_none"].reason


def test_the_default_profile_has_a_thousand_problems():
    assert PROFILES["default"]["n_reasoning"] >= 1000


def test_unit_trend_interval_is_exact_when_every_resample_keeps_the_order():
    from analysis.distributional.controls import unit_trend_interval

    # model k answers a share k/3 of every unit's questions: every resample of units keeps
    # the models' order, so the trend is +1 (sizes ascending) or -1 (descending) in every draw
    numer = np.array([[0.0] * 6, [1 / 3] * 6, [2 / 3] * 6])
    assert unit_trend_interval([1, 2, 3], numer, n_boot=200) == pytest.approx((1.0, 1.0))
    assert unit_trend_interval([3, 2, 1], numer, n_boot=200) == pytest.approx((-1.0, -1.0))
    # with denominators each model's value is pooled: novel pairs over pairs, here 0, 1/2, 1 per unit
    pairs = np.full((3, 6), 2.0)
    pooled = unit_trend_interval([1, 2, 3], numer * 3 * pairs / 2, pairs, n_boot=200)
    assert pooled == pytest.approx((1.0, 1.0))
    with pytest.raises(DistributionalError, match="models x units"):
        unit_trend_interval([1, 2], numer)


def test_kendall_trend_interval_ordered_models():
    from analysis.distributional.controls import kendall_trend_interval

    x_p = np.exp(-np.arange(1, 51, dtype=float))  # p_taskgram: -log p = 1..50, all distinct
    table = pd.DataFrame({"instance": np.repeat(np.arange(10), 5), "p_taskgram": x_p})
    neg = np.arange(1, 51, dtype=float)  # the corpus LM's -log p
    within_reversed = np.concatenate([neg[i * 5:(i + 1) * 5][::-1] for i in range(10)])
    # log_llm holds log p, so the model's -log p is its negation: m0 reverses the corpus LM
    # (distance 1), m1 agrees across units and reverses within them, m2 agrees (distance 0)
    log_llm = {("m0", "reasoning", 3): neg, ("m1", "reasoning", 3): -within_reversed,
               ("m2", "reasoning", 3): -neg}
    ladder = pd.DataFrame({"model": ["m0", "m1", "m2"], "params": [1, 2, 3]})
    lo, hi = kendall_trend_interval(table, log_llm, ladder, "reasoning", 3, n_boot=200)
    assert (lo, hi) == pytest.approx((-1.0, -1.0))


def test_accuracy_matrix_orders_models_and_instances():
    from analysis.distributional.controls import accuracy_matrix

    scored = pd.DataFrame({"model": ["b", "a", "a", "b", "a"], "task": ["k", "k", "k", "k", "r"],
                           "instance": [0, 1, 0, 1, 0], "correct": [1.0, 0.0, 1.0, np.nan, 1.0]})
    m = accuracy_matrix(scored, ["a", "b"], "k")
    np.testing.assert_array_equal(m, np.array([[1.0, 0.0], [1.0, np.nan]]))
