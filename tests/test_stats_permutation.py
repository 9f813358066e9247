"""Hand-checked tests of the blocked sign-permutation test (analysis.stats.permutation)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from analysis.stats import permutation as perm
from analysis.stats.result import StatsError


def test_exact_pvalue_by_hand():
    # s = [1, 2, -0.5]: observed sum 2.5. The 8 flip sums are
    # +-1 +-2 -+0.5: 2.5, 3.5, -1.5, -0.5, 0.5, 1.5, -3.5, -2.5 -> two are >= 2.5.
    res = perm.sign_permutation_test([1, 2, -0.5])
    assert res.statistic == pytest.approx(2.5 / 3)
    assert res.pvalue == 2 / 8 and res.exact and res.n_flips == 8 and res.k == 3
    assert perm.sign_permutation_test([1, 2, -0.5], alternative="less").pvalue == 7 / 8
    assert perm.sign_permutation_test([1, 2, -0.5], alternative="two-sided").pvalue == 0.5


def test_exact_pvalue_counts_float_ties():
    # sums of +-0.1 +-0.2 -+0.3: 0 (observed), 0.6, -0.4, 0.2, -0.2, 0.4, -0.6 and 0 again
    # (rounded differently); 5 of 8 are >= the observed 0
    assert perm.sign_permutation_test([0.1, 0.2, -0.3]).pvalue == 5 / 8
    assert perm.sign_permutation_test([1, 1]).pvalue == 1 / 4


@pytest.mark.parametrize("k", [4, 7, 10, 12])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_exact_test_agrees_with_scipy(k, alternative):
    s = np.random.default_rng(k).normal(0.2, 1, size=k)
    ours = perm.sign_permutation_test(s, alternative=alternative)
    ref = stats.permutation_test((s,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples",
                                 alternative=alternative, n_resamples=np.inf, vectorized=True)
    assert len(ref.null_distribution) == 2**k  # scipy enumerated every flip
    assert ours.pvalue == pytest.approx(ref.pvalue, abs=1e-12)


def test_meet_in_the_middle_equals_direct_enumeration():
    s = np.random.default_rng(5).normal(0.1, 1, size=15)
    for thr in (-2.0, 0.0, s.sum(), 3.0):
        assert perm._count_at_least_split(s, thr) == perm._count_at_least_direct(s, thr)
    # and the exact brute force over itertools for a small case
    s = np.array([0.3, -0.2, 0.5, 0.1, -0.4, 0.25])
    brute = sum(np.dot(e, s) >= s.sum() - 1e-12 for e in itertools.product([1, -1], repeat=6))
    assert perm._count_at_least_split(s, s.sum() - 1e-12) == brute


def test_monte_carlo_path_matches_exact_and_is_seeded():
    s = np.random.default_rng(2).normal(0.3, 1, size=22)
    exact = perm.sign_permutation_test(s)  # K = 22: exact via meet in the middle
    assert exact.exact and exact.n_flips == 2**22
    mc = perm.sign_permutation_test(s, exact_max_k=20, n_mc=50_000, seed=4)
    assert not mc.exact and mc.n_flips == 50_000 and mc.seed == 4
    se = math.sqrt(exact.pvalue * (1 - exact.pvalue) / 50_000)
    assert abs(mc.pvalue - exact.pvalue) < 4 * se + 1e-4
    again = perm.sign_permutation_test(s, exact_max_k=20, n_mc=50_000, seed=4)
    assert again.pvalue == mc.pvalue


def test_sign_test_validation():
    with pytest.raises(StatsError, match="alternative"):
        perm.sign_permutation_test([1.0], alternative="bigger")
    with pytest.raises(StatsError, match="at least one"):
        perm.sign_permutation_test([])
    with pytest.raises(StatsError, match="finite"):
        perm.sign_permutation_test([1.0, float("nan")])
    with pytest.raises(StatsError, match="exact_max_k"):
        perm.sign_permutation_test([1.0], exact_max_k=61)
    with pytest.raises(StatsError, match="n_mc"):
        perm.sign_permutation_test([1.0], n_mc=0)
