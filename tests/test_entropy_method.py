"""The entropy chapter's equations (:mod:`analysis.entropy.method`): sampling, scores,
entropies, level sets, lines and the bootstrap, on toy token lists with
hand-computed values."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import csr_matrix

from analysis.entropy import method as M
from analysis.entropy.params import PAPER_STRATEGIES, PAPER_TAU, EntropyError, load_paper_table

# -- reference implementations (textbook dynamic programs) -------------------------


def lev_dp(a, b):
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def lcs_dp(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


# -- sampling ------------------------------------------------------------------------


DOCS = {"a": list(range(10)), "b": list(range(100, 130)), "c": list(range(200, 205))}


def test_pairs_are_distinct_windows_inside_one_document():
    pairs = M.sample_pairs(DOCS, 3, 2, 30, seed=1)
    assert len(pairs) == 30
    assert len(set(zip(pairs["doc_id"], pairs["start"]))) == 30
    for row in pairs.itertuples():
        doc = DOCS[row.doc_id]
        assert row.prefix == doc[row.start : row.start + 3]
        assert row.suffix == doc[row.start + 3 : row.start + 5]
    # a 5-token window fits 6 times in "a", 26 in "b", once in "c": 33 in all
    assert M.available_windows([len(d) for d in DOCS.values()], 5) == 33
    again = M.sample_pairs(DOCS, 3, 2, 30, seed=1)
    assert again[["doc_id", "start"]].equals(pairs[["doc_id", "start"]])


def test_balanced_sampling_shares_windows_evenly():
    pairs = M.sample_pairs(DOCS, 2, 2, 20, seed=0, balance=True)
    counts = pairs["doc_id"].value_counts().to_dict()
    # windows of 4 tokens: "a" has 7, "b" 27, "c" 2; an even share is 6 or 7 each, then
    # what "c" cannot take goes to the documents with room left
    assert counts == {"a": 7, "b": 11, "c": 2}


def test_weighted_sampling_never_draws_a_zero_weight_document():
    pairs = M.sample_pairs(DOCS, 2, 2, 20, seed=0, weights={"a": 0, "b": 1, "c": 5})
    assert set(pairs["doc_id"]) <= {"b", "c"}
    assert (pairs["doc_id"] == "c").sum() == 2  # both windows of the heavy document
    with pytest.raises(EntropyError, match="n = 30"):
        M.sample_pairs(DOCS, 2, 2, 30, weights={"b": 1})


def test_sampling_rejects_bad_input_before_work():
    with pytest.raises(EntropyError, match=r"prefix plus suffix \(20 \+ 20 = 40 tokens\).*longest has 30"):
        M.sample_pairs(DOCS, 20, 20, 1)
    with pytest.raises(EntropyError, match="n = 34 is larger.*33 distinct windows"):
        M.sample_pairs(DOCS, 3, 2, 34)
    with pytest.raises(EntropyError, match="prefix_tokens must be a positive integer"):
        M.sample_pairs(DOCS, 0, 2, 1)
    with pytest.raises(EntropyError, match="suffix_tokens"):
        M.sample_pairs(DOCS, 2, -1, 1)


# -- scores and the filter ---------------------------------------------------------------


def test_token_levenshtein_by_hand_and_against_the_dynamic_program():
    assert list(M.levenshtein([[1, 2, 3], [1, 2], [7, 8, 9]], [[1, 3, 3], [2, 1], [7, 8, 9]])) == [1, 2, 0]
    # token ids above 255 are tokens, not bytes: 1000 vs 1001 is one substitution
    assert M.levenshtein([[1000, 5]], [[1001, 5]])[0] == 1
    rng = np.random.default_rng(0)
    a = [list(rng.integers(0, 6, rng.integers(0, 12))) for _ in range(200)]
    b = [list(rng.integers(0, 6, rng.integers(0, 12))) for _ in range(200)]
    assert list(M.levenshtein(a, b)) == [lev_dp(x, y) for x, y in zip(a, b)]


def test_lcs_is_the_longest_common_subsequence():
    assert M.lcs([[1, 2, 3, 4]], [[2, 4, 9]])[0] == 2
    rng = np.random.default_rng(1)
    a = [list(rng.integers(0, 5, 10)) for _ in range(100)]
    b = [list(rng.integers(0, 5, 8)) for _ in range(100)]
    assert list(M.lcs(a, b)) == [lcs_dp(x, y) for x, y in zip(a, b)]
    with pytest.raises(EntropyError, match="same length"):
        M.lcs([[1]], [])


def test_the_two_readings_of_the_trivial_filter():
    frame = pd.DataFrame({
        "prefix": [[1, 2, 3, 4], [1, 2, 3, 4]],
        "suffix": [[1, 2, 9, 9], [7, 8, 9, 9]],     # LCS(p, s) = 2 and 0; |s|/2 = 2
        "response": [[5, 5, 5, 5], [3, 4, 6, 6]],   # LCS(p, r) = 0 and 2
    })
    assert list(M.trivial(frame, "written")) == [True, False]
    assert list(M.trivial(frame, "described")) == [False, True]
    assert list(M.trivial(frame, "none")) == [False, False]
    with pytest.raises(EntropyError, match="lcs_filter must be one of"):
        M.trivial(frame, "both")


# -- instance level ------------------------------------------------------------------------


def test_entropy_and_zlib_by_hand():
    assert M.token_entropy([1, 1, 2, 2]) == pytest.approx(1.0)
    assert M.token_entropy([1, 2, 3, 4]) == pytest.approx(2.0)
    assert M.token_entropy([5, 5, 5]) == 0.0
    # p = (1/2, 1/4, 1/4): 1.5 bits, 1.5 ln 2 nats
    assert M.token_entropy([1, 1, 2, 3]) == pytest.approx(1.5)
    assert M.token_entropy([1, 1, 2, 3], base=math.e) == pytest.approx(1.5 * math.log(2))
    with pytest.raises(EntropyError, match="empty"):
        M.token_entropy([])
    text = "the cat sat on the mat " * 5
    assert M.zlib_ratio(text) == len(zlib.compress(text.encode())) / len(text.encode())
    with pytest.raises(EntropyError, match="empty"):
        M.zlib_ratio("")


def test_instance_metrics_are_per_pair():
    frame = pd.DataFrame({"suffix": [[1, 1, 2, 2], [3, 3, 3, 3]], "suffix_text": ["abab", "cccc"]})
    out = M.instance_metrics(frame)
    assert list(out["entropy"]) == [pytest.approx(1.0), 0.0]
    assert out["zlib"].iloc[1] == len(zlib.compress(b"cccc")) / 4


# -- level sets ------------------------------------------------------------------------------


def test_level_sets_pool_the_answers_with_the_same_score():
    scores = [0, 0, 1, 2, 2]
    suffixes = [[1, 1], [1, 2], [3, 3], [5, 6], [7, 8]]
    sets = M.level_sets(scores, suffixes)
    assert sets == {0: {1: 3, 2: 1}, 1: {3: 2}, 2: {5: 1, 6: 1, 7: 1, 8: 1}}
    table = M.level_set_table(scores, suffixes, ["ab", "ac", "dd", "ef", "gh"]).set_index("e")
    assert list(table["pairs"]) == [2, 1, 2]
    assert list(table["tokens"]) == [4, 2, 4]
    assert list(table["token_space"]) == [2, 1, 4]
    h0 = -(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25))
    assert table.loc[0, "entropy"] == pytest.approx(h0)
    assert table.loc[1, "entropy"] == 0.0
    assert table.loc[2, "entropy"] == pytest.approx(2.0)
    # normalized entropy: M / log|T_e|; undefined for a one-token level set
    assert table.loc[0, "norm_entropy"] == pytest.approx(h0 / 1.0)
    assert np.isnan(table.loc[1, "norm_entropy"])
    assert table.loc[2, "norm_entropy"] == pytest.approx(1.0)
    assert table.loc[2, "zlib"] == len(zlib.compress(b"efgh")) / 4
    with pytest.raises(EntropyError, match="same length"):
        M.level_sets([0], [])


def test_level_lines_use_the_shared_fit_and_speak_of_level_sets():
    f = M.level_line([0, 1, 2, 3], [1, 3, 5, 7])
    assert (f.slope, f.intercept, f.r, f.n) == (pytest.approx(2), pytest.approx(1), pytest.approx(1), 4)
    # y = 1, 2, 2, 3 over x = 0..3: slope 0.6, intercept 1.1, r = 3 / sqrt(5 * 2) by hand
    g = M.level_line([0, 1, 2, 3], [1, 2, 2, 3])
    assert g.slope == pytest.approx(0.6) and g.intercept == pytest.approx(1.1)
    assert g.r == pytest.approx(3 / math.sqrt(5 * 2))
    with pytest.raises(EntropyError, match="at least 3 level sets, got 2; sample more pairs"):
        M.level_line([0, 1], [1, 2])
    with pytest.raises(EntropyError, match="level sets has the same x"):
        M.level_line([2, 2, 2], [1, 2, 3])
    with pytest.raises(EntropyError, match="empty"):
        M.fit_levels(pd.DataFrame(columns=["e", "pairs", "entropy"]))
    table = M.level_set_table([0, 1, 2, 2], [[1, 2], [1, 1], [3, 4], [5, 6]])
    with pytest.raises(EntropyError, match="no level set has 5 or more pairs"):
        M.fit_levels(table, min_pairs=5)
    with pytest.raises(EntropyError, match="column must be one of"):
        M.fit_levels(table, "perplexity")
    # level sets at e = 0, 1, 2 with entropies 1, 0 and 2 bits: slope (0·(−1) + 1·1) / 2 = 0.5
    assert M.fit_levels(table).slope == pytest.approx(0.5)


def test_bootstrap_rebuilds_the_same_level_sets_with_unit_weights():
    rng = np.random.default_rng(3)
    suffixes = [list(rng.integers(0, 20, 6)) for _ in range(40)]
    scores = rng.integers(0, 5, 40)
    counts = M._count_matrix(suffixes)
    levels, level_of = np.unique(scores, return_inverse=True)
    group = csr_matrix((np.ones(40), (level_of, np.arange(40))), shape=(len(levels), 40))
    h, space = M._entropies_from_matrix(group @ counts, 2.0)
    table = M.level_set_table(scores, suffixes)
    assert np.allclose(h, table["entropy"]) and list(space) == list(table["token_space"])
    boot = M.bootstrap_fits(scores, suffixes, n_boot=30, seed=0)
    assert len(boot) == 30 and list(boot.columns) == ["slope", "intercept", "r"]
    assert boot.equals(M.bootstrap_fits(scores, suffixes, n_boot=30, seed=0))
    with pytest.raises(EntropyError, match="n_boot"):
        M.bootstrap_fits(scores, suffixes, n_boot=0)


def test_bootstrap_p_counts_the_resamples_on_either_side():
    values = np.arange(1.0, 100.0)  # 1..99
    # 9 values at or below 9.5 (1..9), 90 above: p = 2 (9 + 1) / (99 + 1)
    assert M.bootstrap_p(values, 9.5) == pytest.approx(0.2)
    # none below 0: the smallest p this bootstrap can give, 2 / 100
    assert M.bootstrap_p(values, 0.0) == pytest.approx(0.02)
    assert M.bootstrap_p(values, 50.0) == 1.0  # 50 on each side, capped at 1
    assert np.isnan(M.bootstrap_p([np.nan], 0.0)) and np.isnan(M.bootstrap_p([], 0.0))


def test_which_line_is_stronger():
    assert M.stronger(0.97, 0.95) == "entropy" and M.stronger(0.9, 0.95) == "zlib"
    assert M.stronger(0.9, 0.9001) == "equal"  # the same to three decimals
    assert M.stronger(np.nan, 0.9) is None


def test_decision_rule_and_reference_threshold():
    # the source's Table 1 rows follow its rule: OLMo-2 with tau = 3, Pythia with tau = 0
    table = load_paper_table("table1")
    tau = table["llm"].map(PAPER_TAU)
    assert [M.di_predict(i, t) for i, t in zip(table["intercept"], tau)] == list(table["prediction"])
    assert M.di_predict(3.0, 3.0) == 0  # strictly above
    with pytest.raises(EntropyError, match="finite"):
        M.di_predict(np.nan, 0.0)
    assert M.reference_threshold(np.arange(101)) == pytest.approx(5.0)
    assert M.reference_threshold(np.arange(101), quantile=0.5) == pytest.approx(50.0)
    with pytest.raises(EntropyError, match="quantile"):
        M.reference_threshold([1.0], quantile=1.0)
    with pytest.raises(EntropyError, match="no bootstrap intercepts"):
        M.reference_threshold([])


def test_paper_tables_are_transcribed():
    t4 = load_paper_table("table4")
    assert list(t4["strategy"]) == [name for name, _ in PAPER_STRATEGIES]
    assert t4.set_index("strategy").loc["Temp=0.8", "intercept"] == 5.011
    assert len(load_paper_table("table1")) == 10
    with pytest.raises(EntropyError, match="name must be one of"):
        load_paper_table("table9")


