"""The entropy chapter's computations, on toy token lists with hand-computed values."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pandas as pd
import pytest

from analysis import entropy as E
from analysis.cache import QueryCache
from analysis.models import Answer, GenerationSettings, Model, ModelError

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
    pairs = E.sample_pairs(DOCS, 3, 2, 30, seed=1)
    assert len(pairs) == 30
    assert len(set(zip(pairs["doc_id"], pairs["start"]))) == 30
    for row in pairs.itertuples():
        doc = DOCS[row.doc_id]
        assert row.prefix == doc[row.start : row.start + 3]
        assert row.suffix == doc[row.start + 3 : row.start + 5]
    # a 5-token window fits 6 times in "a", 26 in "b", once in "c": 33 in all
    assert E.available_windows([len(d) for d in DOCS.values()], 5) == 33
    again = E.sample_pairs(DOCS, 3, 2, 30, seed=1)
    assert again[["doc_id", "start"]].equals(pairs[["doc_id", "start"]])


def test_balanced_sampling_shares_windows_evenly():
    pairs = E.sample_pairs(DOCS, 2, 2, 20, seed=0, balance=True)
    counts = pairs["doc_id"].value_counts().to_dict()
    # windows of 4 tokens: "a" has 7, "b" 27, "c" 2; an even share is 6 or 7 each, then
    # what "c" cannot take goes to the documents with room left
    assert counts == {"a": 7, "b": 11, "c": 2}


def test_weighted_sampling_never_draws_a_zero_weight_document():
    pairs = E.sample_pairs(DOCS, 2, 2, 20, seed=0, weights={"a": 0, "b": 1, "c": 5})
    assert set(pairs["doc_id"]) <= {"b", "c"}
    assert (pairs["doc_id"] == "c").sum() == 2  # both windows of the heavy document
    with pytest.raises(E.EntropyError, match="n = 30"):
        E.sample_pairs(DOCS, 2, 2, 30, weights={"b": 1})


def test_sampling_rejects_bad_input_before_work():
    with pytest.raises(E.EntropyError, match=r"prefix plus suffix \(20 \+ 20 = 40 tokens\).*longest has 30"):
        E.sample_pairs(DOCS, 20, 20, 1)
    with pytest.raises(E.EntropyError, match="n = 34 is larger.*33 distinct windows"):
        E.sample_pairs(DOCS, 3, 2, 34)
    with pytest.raises(E.EntropyError, match="prefix_tokens must be a positive integer"):
        E.sample_pairs(DOCS, 0, 2, 1)
    with pytest.raises(E.EntropyError, match="suffix_tokens"):
        E.sample_pairs(DOCS, 2, -1, 1)


# -- scores and the filter ---------------------------------------------------------------


def test_token_levenshtein_by_hand_and_against_the_dynamic_program():
    assert list(E.levenshtein([[1, 2, 3], [1, 2], [7, 8, 9]], [[1, 3, 3], [2, 1], [7, 8, 9]])) == [1, 2, 0]
    # token ids above 255 are tokens, not bytes: 1000 vs 1001 is one substitution
    assert E.levenshtein([[1000, 5]], [[1001, 5]])[0] == 1
    rng = np.random.default_rng(0)
    a = [list(rng.integers(0, 6, rng.integers(0, 12))) for _ in range(200)]
    b = [list(rng.integers(0, 6, rng.integers(0, 12))) for _ in range(200)]
    assert list(E.levenshtein(a, b)) == [lev_dp(x, y) for x, y in zip(a, b)]


def test_lcs_is_the_longest_common_subsequence():
    assert E.lcs([[1, 2, 3, 4]], [[2, 4, 9]])[0] == 2
    rng = np.random.default_rng(1)
    a = [list(rng.integers(0, 5, 10)) for _ in range(100)]
    b = [list(rng.integers(0, 5, 8)) for _ in range(100)]
    assert list(E.lcs(a, b)) == [lcs_dp(x, y) for x, y in zip(a, b)]
    with pytest.raises(E.EntropyError, match="same length"):
        E.lcs([[1]], [])


def test_the_two_readings_of_the_trivial_filter():
    frame = pd.DataFrame({
        "prefix": [[1, 2, 3, 4], [1, 2, 3, 4]],
        "suffix": [[1, 2, 9, 9], [7, 8, 9, 9]],     # LCS(p, s) = 2 and 0; |s|/2 = 2
        "response": [[5, 5, 5, 5], [3, 4, 6, 6]],   # LCS(p, r) = 0 and 2
    })
    assert list(E.trivial(frame, "written")) == [True, False]
    assert list(E.trivial(frame, "described")) == [False, True]
    assert list(E.trivial(frame, "none")) == [False, False]
    with pytest.raises(E.EntropyError, match="lcs_filter must be one of"):
        E.trivial(frame, "both")


# -- instance level ------------------------------------------------------------------------


def test_entropy_and_zlib_by_hand():
    assert E.token_entropy([1, 1, 2, 2]) == pytest.approx(1.0)
    assert E.token_entropy([1, 2, 3, 4]) == pytest.approx(2.0)
    assert E.token_entropy([5, 5, 5]) == 0.0
    # p = (1/2, 1/4, 1/4): 1.5 bits, 1.5 ln 2 nats
    assert E.token_entropy([1, 1, 2, 3]) == pytest.approx(1.5)
    assert E.token_entropy([1, 1, 2, 3], base=math.e) == pytest.approx(1.5 * math.log(2))
    with pytest.raises(E.EntropyError, match="empty"):
        E.token_entropy([])
    text = "the cat sat on the mat " * 5
    assert E.zlib_ratio(text) == len(zlib.compress(text.encode())) / len(text.encode())
    with pytest.raises(E.EntropyError, match="empty"):
        E.zlib_ratio("")


def test_instance_metrics_are_per_pair():
    frame = pd.DataFrame({"suffix": [[1, 1, 2, 2], [3, 3, 3, 3]], "suffix_text": ["abab", "cccc"]})
    out = E.instance_metrics(frame)
    assert list(out["entropy"]) == [pytest.approx(1.0), 0.0]
    assert out["zlib"].iloc[1] == len(zlib.compress(b"cccc")) / 4


# -- level sets ------------------------------------------------------------------------------


def test_level_sets_pool_the_answers_with_the_same_score():
    scores = [0, 0, 1, 2, 2]
    suffixes = [[1, 1], [1, 2], [3, 3], [5, 6], [7, 8]]
    sets = E.level_sets(scores, suffixes)
    assert sets == {0: {1: 3, 2: 1}, 1: {3: 2}, 2: {5: 1, 6: 1, 7: 1, 8: 1}}
    table = E.level_set_table(scores, suffixes, ["ab", "ac", "dd", "ef", "gh"]).set_index("e")
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
    with pytest.raises(E.EntropyError, match="same length"):
        E.level_sets([0], [])


def test_line_fit_and_its_errors():
    f = E.fit_line([0, 1, 2, 3], [1, 3, 5, 7])
    assert (f.slope, f.intercept, f.r, f.n) == (pytest.approx(2), pytest.approx(1), pytest.approx(1), 4)
    assert list(f.predict([10])) == [pytest.approx(21)]
    # y = 1, 2, 2, 3 over x = 0..3: slope 0.6, intercept 1.1, r = 0.6 / sqrt(0.5 * 1.25)... by hand
    g = E.fit_line([0, 1, 2, 3], [1, 2, 2, 3])
    assert g.slope == pytest.approx(0.6) and g.intercept == pytest.approx(1.1)
    assert g.r == pytest.approx(3 / math.sqrt(5 * 2))
    with pytest.raises(E.EntropyError, match="at least 3 level sets, got 2"):
        E.fit_line([0, 1], [1, 2])
    with pytest.raises(E.EntropyError, match="same memorization score"):
        E.fit_line([2, 2, 2], [1, 2, 3])
    with pytest.raises(E.EntropyError, match="empty"):
        E.fit_levels(pd.DataFrame(columns=["e", "pairs", "entropy"]))
    table = E.level_set_table([0, 1, 2, 2], [[1, 2], [1, 1], [3, 4], [5, 6]])
    with pytest.raises(E.EntropyError, match="no level set has 5 or more pairs"):
        E.fit_levels(table, min_pairs=5)


def test_bootstrap_rebuilds_the_same_level_sets_with_unit_weights():
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(3)
    suffixes = [list(rng.integers(0, 20, 6)) for _ in range(40)]
    scores = rng.integers(0, 5, 40)
    counts = E._count_matrix(suffixes)
    levels, level_of = np.unique(scores, return_inverse=True)
    group = csr_matrix((np.ones(40), (level_of, np.arange(40))), shape=(len(levels), 40))
    h, space = E._entropies_from_matrix(group @ counts, 2.0)
    table = E.level_set_table(scores, suffixes)
    assert np.allclose(h, table["entropy"]) and list(space) == list(table["token_space"])
    boot = E.bootstrap_fits(scores, suffixes, n_boot=30, seed=0)
    assert len(boot) == 30 and list(boot.columns) == ["slope", "intercept", "r"]
    assert boot.equals(E.bootstrap_fits(scores, suffixes, n_boot=30, seed=0))
    with pytest.raises(E.EntropyError, match="n_boot"):
        E.bootstrap_fits(scores, suffixes, n_boot=0)


def test_interval_is_a_percentile_interval():
    assert E.interval(np.arange(101)) == (pytest.approx(2.5), pytest.approx(97.5))
    assert all(np.isnan(E.interval([np.nan])))


# -- dataset inference -------------------------------------------------------------------------


def test_decision_rule_and_reference_threshold():
    # the source's Table 1 rows follow its rule: OLMo-2 with tau = 3, Pythia with tau = 0
    table = E.load_paper_table("table1")
    tau = table["llm"].map(E.PAPER_TAU)
    assert [E.di_predict(i, t) for i, t in zip(table["intercept"], tau)] == list(table["prediction"])
    assert E.di_predict(3.0, 3.0) == 0  # strictly above
    with pytest.raises(E.EntropyError, match="finite"):
        E.di_predict(np.nan, 0.0)
    assert E.reference_threshold(np.arange(101)) == pytest.approx(5.0)
    assert E.reference_threshold(np.arange(101), quantile=0.5) == pytest.approx(50.0)
    with pytest.raises(E.EntropyError, match="quantile"):
        E.reference_threshold([1.0], quantile=1.0)
    with pytest.raises(E.EntropyError, match="no bootstrap intercepts"):
        E.reference_threshold([])


def test_paper_tables_are_transcribed():
    t4 = E.load_paper_table("table4")
    assert list(t4["strategy"]) == [name for name, _ in E.PAPER_STRATEGIES]
    assert t4.set_index("strategy").loc["Temp=0.8", "intercept"] == 5.011
    assert len(E.load_paper_table("table1")) == 10
    with pytest.raises(E.EntropyError, match="name must be one of"):
        E.load_paper_table("table9")


def test_strategy_settings():
    s = E.strategy_settings("Temp=0.8, top_k=10", seed=4)
    assert (s.temperature, s.top_k, s.top_p, s.seed) == (0.8, 10, None, 4)
    assert E.strategy_settings("Temp=0").greedy
    with pytest.raises(E.EntropyError, match="strategy must be one of"):
        E.strategy_settings("Temp=2")


# -- running a model ------------------------------------------------------------------------------


class EchoModel(Model):
    """Answers a prompt of ids with its last ``max_new_tokens`` ids; prompts starting
    with 99 get an API-style error."""

    backend = "echo"

    def _generate(self, requests):
        raise AssertionError("text generation is not used here")

    def _generate_ids(self, prompt_ids, settings):
        for i, ids in enumerate(prompt_ids):
            if ids[0] == 99:
                yield i, Answer(None, error="HTTP 503")
            else:
                yield i, Answer("x", meta={"ids": list(ids[-settings.max_new_tokens:])})

    def detokenize(self, ids):
        return [" ".join(map(str, x)) for x in ids]


def test_discoverable_scores_errors_and_caches(tmp_path):
    model = EchoModel("echo", cache=QueryCache(tmp_path / "q.sqlite"))
    pairs = pd.DataFrame({
        "prefix": [[1, 2, 3, 4], [5, 6, 7, 8], [99, 1, 2, 3]],
        "suffix": [[3, 4], [7, 0], [5, 5]],
    })
    out = E.discoverable(model, pairs, GenerationSettings(), "written")
    # responses are the last two prompt tokens: [3, 4] (verbatim), [7, 8] (one edit), error
    assert out["score"].iloc[0] == 0 and out["score"].iloc[1] == 1 and np.isnan(out["score"].iloc[2])
    assert out["error"].iloc[2] == "HTTP 503" and out["response"].iloc[2] is None
    assert list(out["lcs_ps"]) == [2, 1, 0] and list(out["trivial"]) == [True, True, False]
    assert list(out["suffix_text"]) == ["3 4", "7 0", "5 5"]
    kept = E.kept(out)
    assert kept.empty  # two trivial, one error: nothing is scored
    assert model.calls == 3
    again = E.discoverable(model, pairs, GenerationSettings(), "none")
    # the answers come from the cache; the error is retried (and fails again)
    assert model.calls == 4 and len(E.kept(again)) == 2
    with pytest.raises(E.EntropyError, match="set 'x'.*no pair survived"):
        E.analyse_set("x", out)
    with pytest.raises(E.EntropyError, match="same length"):
        uneven = pd.DataFrame({"prefix": [[1], [2]], "suffix": [[1], [1, 2]]})
        E.discoverable(model, uneven, GenerationSettings())


def test_text_only_backends_refuse_token_level_generation(tmp_path):
    class TextOnly(Model):
        backend = "text"

        def _generate(self, requests):
            yield from ()

    m = TextOnly("t", cache=QueryCache(tmp_path / "q.sqlite"))
    with pytest.raises(ModelError, match="token-level studies need a local model"):
        m.generate_ids([[1, 2]])
    with pytest.raises(ModelError, match="token-level studies need a local model"):
        m.tokenize(["a"])
    with pytest.raises(ModelError, match="at least one token"):
        m.generate_ids([[]])


def test_analyse_set_and_sample_size_on_a_synthetic_sample():
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(400):
        e = int(rng.integers(0, 9))
        # answers that score e draw from a vocabulary of 2 + 4e tokens: entropy grows with e
        rows.append({"prefix": [0], "suffix": list(rng.integers(0, 2 + 4 * e, 8)), "score": float(e),
                     "error": None, "trivial": False, "suffix_text": "t"})
    scored = pd.DataFrame(rows)
    res = E.analyse_set("s", scored, n_boot=50)
    assert res.pairs == 400 and len(res.levels) == 9
    assert res.fit.slope > 0 and res.fit.r > 0.9
    row = res.row()
    assert row["intercept lo"] <= row["intercept"] <= row["intercept hi"]
    sens = E.sample_size_sensitivity(scored, [100, 200, 1000], repeats=3)
    assert sorted(set(sens["size"])) == [100, 200]  # 1000 is more than the pool
    assert (sens.groupby("size").size() == 3).all()


def test_recentred_bootstrap_keeps_the_spread_and_moves_the_median():
    out = E.recentre([1.0, 2.0, 3.0, 10.0], 5.0)
    assert list(out) == [3.5, 4.5, 5.5, 12.5]  # median 2.5 moved to 5; differences kept
    # on a real sample the raw bootstrap intercepts sit below the estimate (repeated
    # pairs lower the plug-in entropy); the re-centred ones straddle it
    rng = np.random.default_rng(7)
    scored = pd.DataFrame([{"prefix": [0], "suffix": list(rng.integers(0, 3 + 6 * e, 8)), "score": float(e),
                            "error": None, "trivial": False, "suffix_text": "t"}
                           for e in rng.integers(0, 8, 300)])
    res = E.analyse_set("s", scored, n_boot=200)
    assert np.median(res.boot["intercept"]) < res.fit.intercept
    assert np.median(res.centred("intercept")) == pytest.approx(res.fit.intercept)
    assert np.std(res.centred("intercept")) == pytest.approx(np.std(res.boot["intercept"]))
