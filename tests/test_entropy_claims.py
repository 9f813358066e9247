"""The entropy chapter's decisions (:mod:`analysis.entropy.claims`), by value on small
hand-computed fixtures: each claim's status, value, p and n."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED
from analysis.entropy import claims as K
from analysis.stats.fisher import compare_correlations
from analysis.stats.lines import Fit
from entropy_fakes import fake_set

ES = (1, 2, 3, 4, 5, 6)  # six level sets: above the claims' minimum of 5
NO_BOOT = pd.DataFrame(columns=["slope", "intercept", "r"])
INST = {"entropy": Fit(1.0, 0.0, 0.2, 0.0, 100)}  # an instance-level line: r = 0.2 over 100 pairs


def binomial_p(k: int, n: int) -> float:
    """Two-sided binomial p-value of k of n against one half, by hand (symmetric null)."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


def fisher_p(r1, n1, r2, n2) -> float:
    z = (math.atanh(r1) - math.atanh(r2)) / math.sqrt(1 / (n1 - 3) + 1 / (n2 - 3))
    return math.erfc(abs(z) / math.sqrt(2))


def boot_r(values):
    return {"slope": [0.5] * len(values), "intercept": [1.0] * len(values), "r": list(values)}


# -- the sample and one answer at a time ----------------------------------------------------------


# -- level sets -----------------------------------------------------------------------------------


# -- at every length, strategy, set -------------------------------------------------------------


def trend_set(name, intercept):
    return fake_set(name, intercept=intercept, es=ES,
                    boot={"slope": [0.5] * 101, "intercept": np.linspace(-0.1, 0.1, 101), "r": [0.9] * 101})


def test_the_intercept_across_answer_lengths():
    lengths = [4, 8, 16]
    rising = {f"|s| = {n}": trend_set(str(n), v) for n, v in zip(lengths, (1.0, 2.0, 3.0))}
    c = K.length_claims(rising, lengths)["intercept_grows_with_length"]
    # the re-centred resamples differ by exactly 2 bits: none at or below 0, p = 2 / 102
    assert (c.status, c.value, c.n, c.extra["trend"]) == (REPRODUCED, 2.0, 3, "rises")
    assert c.p == pytest.approx(2 / 102) and c.interval == (pytest.approx(2.0), pytest.approx(2.0))
    falling = {k: trend_set(k, v) for k, v in zip(rising, (3.0, 2.0, 1.0))}
    c = K.length_claims(falling, lengths)["intercept_grows_with_length"]
    assert (c.status, c.extra["trend"]) == (NOT_REPRODUCED, "falls")
    bumpy = {k: trend_set(k, v) for k, v in zip(rising, (1.0, 3.0, 2.0))}
    assert K.length_claims(bumpy, lengths)["intercept_grows_with_length"].extra["trend"] == "rises overall"
    flat = {k: trend_set(k, v) for k, v in zip(rising, (1.0, 0.9, 1.3))}
    assert K.length_claims(flat, lengths)["intercept_grows_with_length"].extra["trend"] == "flat"
    missing = {**rising, "|s| = 16": fake_set("16")}
    assert K.length_claims(missing, lengths)["intercept_grows_with_length"].status == NOT_TESTABLE


# -- sample size --------------------------------------------------------------------------------


def sensitivity(small, large):
    return pd.DataFrame({"size": [10] * len(small) + [20] * len(large),
                         "intercept": list(small) + list(large),
                         "repeat": 0, "slope": 0.0, "r": 0.9})


def test_small_samples_spread_wider_and_sit_lower():
    # at 10 pairs the intercepts are 0..10 (10–90 spread 8, mean 5); at 20 pairs 10..11 (0.8, 10.5)
    sens = sensitivity(np.arange(11.0), 10 + np.arange(11) / 10)
    c = K.sample_size_claims(sens)
    spread, lower = c["small_samples_spread"], c["small_samples_lower"]
    assert (spread.status, spread.value, spread.n) == (REPRODUCED, pytest.approx(7.2), 22)
    assert (lower.status, lower.value, lower.n) == (REPRODUCED, pytest.approx(-5.5), 22)
    # Welch: t = −5.5 / sqrt(11/11 + 0.11/11) = −5.47 on about 10 degrees of freedom
    assert lower.p < 0.001 and spread.p < 0.05
    flipped = K.sample_size_claims(sensitivity(10 + np.arange(11) / 10, np.arange(11.0)))
    assert flipped["small_samples_spread"].status == NOT_REPRODUCED
    assert flipped["small_samples_lower"].status == NOT_REPRODUCED
    few = K.sample_size_claims(sensitivity([0.0, 4.0, 8.0], [10.0, 10.5]))
    assert few["small_samples_lower"].status == INCONCLUSIVE  # 5 subsamples, below the minimum of 10
    one_size = K.sample_size_claims(sensitivity(np.arange(11.0), [])[lambda f: f["size"] == 10])
    assert {c.status for c in one_size.values()} == {NOT_TESTABLE}
    assert {c.status for c in K.sample_size_claims(sens.iloc[:0]).values()} == {NOT_TESTABLE}


# -- dataset inference ---------------------------------------------------------------------------


def di_rows(kind, outcomes):
    """Candidate rows of ``kind``: "r" right, "w" wrong, "-" undecided (no line)."""
    rows = [{"model": "m", "set": "ref", "role": "reference", "kind": kind, "truth": 1, "prediction": 1.0}]
    for k, o in enumerate(outcomes):
        truth = k % 2
        prediction = np.nan if o == "-" else float(truth if o == "r" else 1 - truth)
        rows.append({"model": "m", "set": f"s{k}", "role": "candidate", "kind": kind,
                     "truth": np.int64(truth), "prediction": prediction})
    return pd.DataFrame(rows)


def test_intercept_and_slope_move_against_each_other_by_design():
    slopes = np.linspace(0, 1, 21)
    opposed = [fake_set(str(k), intercept=1.0, boot={"slope": slopes, "intercept": 5 - 4 * slopes,
                                                      "r": [0.9] * 21}) for k in range(6)]
    c = K.intercept_slope_claim(opposed)
    # six sets with r = −1 each: sign test p = 2 / 64
    assert (c.status, c.value, c.n, c.by_design) == (REPRODUCED, pytest.approx(-1.0), 6, True)
    assert c.p == pytest.approx(2 / 64) and c.extra == {"how": "opposite"}
    assert K.intercept_slope_claim(opposed[:5]).status == INCONCLUSIVE  # p = 2 / 32 and n = 5
    together = [fake_set(str(k), intercept=1.0, boot={"slope": slopes, "intercept": slopes, "r": [0.9] * 21})
                for k in range(6)]
    assert K.intercept_slope_claim(together).status == NOT_REPRODUCED
    assert K.intercept_slope_claim([fake_set()]).status == NOT_TESTABLE


def test_fishers_z_compares_two_correlations():
    est = compare_correlations(0.9, 10, 0.2, 10)
    assert est.value == pytest.approx(0.7) and est.n == 10
    assert est.p == pytest.approx(fisher_p(0.9, 10, 0.2, 10))
    assert compare_correlations(0.5, 30, 0.5, 50).p == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 4 points"):
        compare_correlations(0.5, 3, 0.2, 10)
    with pytest.raises(ValueError, match=r"r must be a number in \[-1, 1\]"):
        compare_correlations(1.5, 10, 0.2, 10)


# -- against a baseline, and membership inference (beyond the source) -----------------------------


