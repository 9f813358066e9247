"""The entropy chapter's computations, on toy token lists with hand-computed values."""

from __future__ import annotations

import math
import zlib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis import entropy as E
from analysis.core.cache import QueryCache
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

    def _generate_ids(self, prompt_ids, settings, seeds=None):
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


# -- the chapter's steps: settings, stream, sentences ------------------------------------------


def fake_set(name="s", intercept=None, slope=0.5, r=0.95, boot=None, es=(2, 4, 6), pairs=30, norm=None):
    """A SetResult with a chosen line, level sets at scores ``es`` and a chosen bootstrap."""
    fit = E.Fit(slope, intercept, r, 0.0, len(es)) if intercept is not None else None
    levels = pd.DataFrame({"e": list(es), "pairs": [10] * len(es),
                           "token_space": [4 * (i + 1) for i in range(len(es))],
                           "entropy": [1.0 + i for i in range(len(es))]})
    boot = pd.DataFrame(boot if boot is not None else {}, columns=["slope", "intercept", "r"])
    return E.SetResult(name, levels, fit, None, norm, boot, pairs)


def test_method_constants_and_setup_sentences():
    c = E.method_constants()
    assert (c["paper_min_r"], c["paper_tau_pythia"], c["paper_tau_olmo"]) == ("0.9", "0", "3")
    assert (c["di_quantile"], c["di_coverage"], c["paper_min_di"]) == ("5th", "95%", "1,500")
    assert c["paper_small_intercept"] == "−6" and c["paper_table4_pairs"] == "28,000"
    assert [E._ordinal(n) for n in (1, 2, 3, 5, 11, 12, 21)] == [
        "1st", "2nd", "3rd", "5th", "11th", "12th", "21st"]
    assert E.split_phrase(32, 16) == "the source's 2 : 1 split scaled down"
    assert E.split_phrase(100, 50) == "the source's own lengths"
    assert E.split_phrase(8, 8) == "a 1 : 1 split, where the source uses 2 : 1"
    t4 = E.load_paper_table("table4")
    assert E.greedy_sentence(t4) == ("The source's Table 4 finds nearly the same r greedily (0.933) as at "
                                     "its "
                                     "main temperature of 0.8 (0.926).")
    far = t4.assign(r=[0.5, 0.9, 0.9, 0.9, 0.9, 0.9])
    assert "finds a different r greedily (0.500)" in E.greedy_sentence(far)
    smoke = E.PARAMS.resolve("smoke")
    assert E.setup_sentences(smoke, t4) == (
        "The lab uses |p| + |s| = 8 + 8, a 1 : 1 split, where the source uses 2 : 1. The real models use 16 "
        "+ 16 "
        "and decode greedily. The source's Table 4 finds nearly the same r greedily (0.933) as at its main "
        "temperature of 0.8 (0.926). The `paper` profile runs the real models at 100 + 50, at temperature "
        "0.8, "
        "with 1,500 pairs per set.")
    assert "The real models use the same lengths" in E.setup_sentences(E.PARAMS.resolve("default"), t4)
    table = E.setup_table(smoke).set_index("parameter")
    assert table.loc["decoding", "this run"] == "temperature 0; the lab also at temperature 0.8"
    assert table.loc["pairs per sample", "paper"] == "240,000 (OLMo-1B), 300,000 (OLMo-2-1124-7B)"
    assert table.loc["pairs for dataset inference", "this run"] == "60 (lab), 16 (real models)"


def test_lab_decodings_use_the_other_temperature():
    d = E.lab_decodings(0.0, seed=3)
    assert list(d) == ["greedy", "temperature 0.8"]
    assert (d["greedy"].temperature, d["temperature 0.8"].temperature, d["greedy"].seed) == (0.0, 0.8, 3)
    assert list(E.lab_decodings(0.8)) == ["temperature 0.8", "greedy"]
    assert list(E.lab_decodings(0.5)) == ["temperature 0.5", "temperature 0.8"]


class WordLengths:
    """Tokenizes a text into the lengths of its words."""

    name = "lab:toy"

    def tokenize(self, texts):
        return [[len(w) for w in t.split()] for t in texts]


def toy_lab(inject=True, max_copies=None):
    doc = SimpleNamespace
    corpus = SimpleNamespace(
        documents=[doc(doc_id="background-0", text="a bb ccc", copies=1, kind="background"),
                   doc(doc_id="knowledge-0", text="k", copies=8, kind="knowledge"),
                   doc(doc_id="popular-x", text="dddd e", copies=4, kind="popular"),
                   doc(doc_id="background-1", text="ff g", copies=1, kind="background"),
                   doc(doc_id="reasoning-0", text="r", copies=1, kind="reasoning")],
        injections=[SimpleNamespace(seq_id="qa-000-0", text="never", copies=0),
                    SimpleNamespace(seq_id="qa-004-0", text="x yy zzz wwww", copies=4),
                    SimpleNamespace(seq_id="qa-016-0", text="x yy", copies=16)])
    run = SimpleNamespace(inject=inject, max_copies=max_copies)
    return SimpleNamespace(corpus=corpus, profile=SimpleNamespace(run=lambda name: run))


def test_training_stream_holds_what_the_run_saw():
    s = E.training_stream(toy_lab(), "pert", WordLengths())
    # background first, then popular, then the injections with at least one copy
    assert list(s.tokens) == ["background-0", "background-1", "popular-x", "qa-004-0", "qa-016-0"]
    assert s.tokens["background-0"] == [1, 2, 3] and s.tokens["qa-004-0"] == [1, 2, 3, 4]
    assert s.copies == {"background-0": 1, "background-1": 1, "popular-x": 4, "qa-004-0": 4, "qa-016-0": 16}
    assert s.source["popular-x"] == "popular" and s.source["qa-016-0"] == "injected"
    assert s.left_out == {"knowledge": 1, "reasoning": 1}
    assert list(E.training_stream(toy_lab(max_copies=4), "r", WordLengths()).tokens)[-1] == "qa-004-0"
    assert "qa-004-0" not in E.training_stream(toy_lab(inject=False), "std", WordLengths()).tokens
    comp = E.stream_composition(s)
    assert comp.to_dict("list") == {"source": ["background", "popular", "injected"], "documents": [2, 1, 2],
                                    "fewest": [1, 4, 4], "most": [1, 4, 16], "tokens": [5, 2, 6],
                                    "tokens in stream": [5, 8, 48]}
    assert E.stream_sentence(s) == (
        "The stream it is drawn from holds 2 background passages (one copy each), 1 popular-text excerpts "
        "(4 copies each) and 2 inserted sequences (4 to 16 copies). The run's other training documents "
        "(1 knowledge, 1 reasoning) are not sampled.")
    assert E.window_sentence(s, 3) == ("The inserted sequences are 3 tokens long (median), so 1 of 2 hold a "
                                       "whole window of |p| + |s| = 3 tokens.")
    no_inj = E.training_stream(toy_lab(inject=False), "std", WordLengths())
    assert E.window_sentence(no_inj, 3).startswith("This run inserts no sequences")


def scored_frame(rows):
    """Scored pairs from (doc_id, score, trivial) triples, answers of 4 tokens."""
    return pd.DataFrame([{"doc_id": d, "prefix": [0], "suffix": [1, 2, 3, 4], "score": float(sc),
                          "error": None,
                          "trivial": t, "suffix_text": "t"} for d, sc, t in rows])


def test_source_table_and_low_scores():
    stream = E.Stream(tokens={}, copies={}, left_out={},
                      source={"b": "background", "p": "popular", "i": "injected"})
    scored = scored_frame([("b", 4, False), ("b", 3, False), ("b", 1, True), ("p", 4, False),
                           ("i", 0, False), ("i", 1, False), ("i", 4, False)])
    table = E.source_table(scored, stream)
    assert table.to_dict("list") == {"source": ["background", "popular", "injected"],
                                     "pairs drawn": [3, 1, 3],
                                     "pairs kept": [2, 1, 3], "mean score": [3.5, 4.0, 5 / 3],
                                     "median score": [3.5, 4.0, 1.0]}
    # |s| = 4: low is below 2 edits; the trivial background pair with score 1 does not count
    assert E.low_score_sentence(scored, stream) == (
        "2 of 6 kept pairs score below |s|/2 = 2 edits, and all of them come from the inserted sequences. "
        "Low scores are rarer than high ones, as in the source, where they are exponentially rarer.")
    mixed = scored_frame([("b", 0, False), ("i", 1, False), ("p", 1, False), ("b", 4, False)])
    assert E.low_score_sentence(mixed, stream) == (
        "3 of 4 kept pairs score below |s|/2 = 2 edits, and only 1 of them come from the inserted sequences. "
        "Low scores are not rarer than high ones here, unlike the source, where they are exponentially "
        "rarer.")
    assert E.low_score_sentence(scored_frame([("b", 4, False)]), stream) == (
        "No kept pair scores below |s|/2 = 2 edits, so there is no low score to trace to its source: low "
        "scores are absent here, and in the source they are exponentially rarer than high ones.")


def test_verbatim_sentence_leads_with_the_first_decoding():
    greedy = scored_frame([("b", 0, False)] + [("b", 4, False)] * 19)  # 1 of 20: 5%, "some"
    sampled = scored_frame([("b", 3, False), ("b", 4, False), ("b", 0, True)])
    assert E.verbatim_sentence({"greedy": greedy, "temperature 0.8": sampled}) == (
        "The lab model reproduces some of its training stream verbatim: under greedy decoding 1 of 20 kept "
        "answers come back verbatim and the median score is 4 edits out of |s| = 4; under temperature 0.8 "
        "decoding 0 of 2 kept answers come back verbatim and the median score is 4 edits out of |s| = 4.")
    assert E.verbatim_sentence({"t": sampled}).startswith("The lab model reproduces nothing of")
    assert E.verbatim_sentence({"t": scored_frame([("b", 0, False)] + [("b", 4, False)] * 20)}).startswith(
        "The lab model reproduces little of")


def test_fit_formatting_and_tables():
    fit = E.Fit(0.25, 1.5, 0.9123, 0.0, 3)
    assert E.fit_value(fit, "r") == "0.912" and E.fit_value(fit, "intercept", 2) == "1.50"
    assert E.fit_value(None, "r") == "undefined (fewer than 3 level sets)"
    table = pd.DataFrame({"set": ["a", "b"], "r": [0.5, np.nan], "r lo": [0.25, np.nan],
                          "r hi": [0.75, np.nan],
                          "pairs": [3, 4]})
    merged = E.merge_intervals(table, digits=2)
    assert list(merged.columns) == ["set", "r", "pairs"]
    assert list(merged["r"]) == ["0.50 [0.25, 0.75]", "no line"]
    a = fake_set("a", intercept=1.0, boot={"slope": [0.5] * 3, "intercept": [1.0] * 3, "r": [0.95] * 3})
    a.zlib_fit = E.Fit(0.1, 0.2, 0.8, 0.0, 3)
    t = E.fit_table({"a": a, "b": fake_set("b")}, other_lines=True)
    assert list(t["set"]) == ["a", "b"] and t.loc[0, "zlib r"] == 0.8
    assert np.isnan(t.loc[0, "normalized r"]) and np.isnan(t.loc[1, "r"]) and t.loc[1, "level sets"] == 3
    assert "zlib r" not in E.fit_table({"a": a})


def test_correlation_words_and_which_line_is_stronger():
    assert [E.strength(r) for r in (0.1, -0.5, 0.95, 0.0, np.nan)] == [
        "weak positive", "moderate negative", "strong positive", "no", "undefined"]
    fits = {"entropy": E.Fit(1, 0, 0.123, 0, 9), "zlib": E.Fit(1, 0, -0.5, 0, 9)}
    assert E.instance_sentence(fits) == (
        "Instance by instance, Pearson r is 0.12 for entropy and -0.50 for the zlib ratio: a weak positive "
        "and a moderate negative correlation. The source finds “a positive, yet weak” r of about 0.6 on "
        "OLMo-1B.")
    same = {"entropy": E.Fit(1, 0, 0.1, 0, 9), "zlib": E.Fit(1, 0, 0.2, 0, 9)}
    assert "zlib ratio: a weak positive correlation for both. The source" in E.instance_sentence(same)
    assert E.stronger_line(0.97, 0.95) == "the entropy line is the stronger"
    assert E.stronger_line(0.9, 0.95) == "the zlib line is the stronger"
    assert E.stronger_line(0.9, 0.9001) == "the two lines are equally strong"
    assert E.stronger_line(np.nan, 0.9).startswith("one of the two has no line")
    # the source's Figure 2, read in panel order: zlib 0.972, entropy 0.945
    assert E.paper_lines_sentence().endswith(
        "so by r the zlib line is the stronger there, although its text calls entropy the better "
        "approximator.")


def test_linearity_sentences_with_and_without_a_line():
    boot = {"slope": [0.5] * 4, "intercept": [2.0] * 4, "r": [0.91, 0.95, 0.95, 0.99]}
    main = fake_set("greedy", intercept=2.0, slope=-0.25, r=0.95, boot=boot)
    main.zlib_fit = E.Fit(0.1, 0.2, 0.97, 0.0, 3)
    other = fake_set("t", intercept=1.0, r=0.5)
    # r's bootstrap has median 0.95, the estimate, so re-centring keeps it; its 2.5% and 97.5% points
    # interpolate to 0.91 + 0.075 x 0.04 = 0.913 and 0.95 + 0.925 x 0.04 = 0.987
    assert E.linearity_sentences(main, "temperature 0.8", other) == (
        "Pooled into 3 level sets, the entropy falls with the score along a line with r = 0.950 (bootstrap "
        "95% "
        "interval 0.913 to 0.987), above the 0.9 the source reports on every model. The line is "
        "M_ent(s_e) ≈ 2.00 − 0.250·e bits. Under temperature 0.8 decoding r = 0.500. The zlib ratio of the "
        "same "
        "level sets gives r = 0.970: by r, the zlib line is the stronger here.")
    low = fake_set("g", intercept=2.0, r=0.5)
    assert "r = 0.500 (no bootstrap interval), below the 0.9" in E.linearity_sentences(low, "x", other)
    none = E.linearity_sentences(fake_set("g", es=(4, 5)), "x", fake_set("t"))
    assert none.startswith("The main sample falls into 2 level sets, too few for a line")
    assert none.endswith("r = undefined (fewer than 3 level sets): by r, one of the two has no line, so they "
                         "cannot be compared here.")


def test_token_space_and_normalized_entropy_sentences():
    levels = pd.DataFrame({"e": [3, 5, 8], "pairs": [2, 10, 40], "token_space": [7, 30, 300]})
    assert E.token_space_sentence(levels) == (
        "The lowest level set here (e = 3, 2 pairs) spans 7 distinct tokens and the highest (e = 8, 40 "
        "pairs) "
        "spans 300: the token space grows with the score.")
    shrinking = levels.assign(token_space=[300, 30, 7])
    assert E.token_space_sentence(shrinking).endswith("shrinks as the score grows.")
    assert E.normalized_sentence(E.Fit(-0.01, 1, -0.8, 0, 5)) == (
        "The normalized entropy falls with e here (r = -0.800), as in the source, which reports a "
        "decreasing line.")
    assert E.normalized_sentence(E.Fit(0.02, 1, 0.6, 0, 5)).startswith(
        "The normalized entropy does not fall with e here (r = 0.600, slope 0.0200), unlike the source")
    assert E.normalized_sentence(None).startswith("The normalized entropy has no line here")


def test_answer_length_sentences():
    table = pd.DataFrame({"set": ["|s| = 4", "|s| = 8", "|s| = 16"], "r": [0.95, 0.85, np.nan],
                          "intercept": [1.0, 2.0, np.nan]})
    assert E.length_r_sentence(table) == (
        "Across answer lengths, r ranges from 0.85 to 0.95 (1 of 3 lengths have no line): above 0.9 at 1 of "
        "3 "
        "lengths. In the source it ranges from 0.92 to 0.98 for 10 to 50 tokens.")
    assert E.length_r_sentence(table.assign(r=[0.91, 0.95, 0.99])).startswith(
        "Across answer lengths, r ranges from 0.91 to 0.99: above 0.9 at every length.")
    assert E.intercept_trend_sentence(table) == (
        "Here the trend cannot be read, since not every length has a line: 1.00 at |s| = 4, 2.00 at |s| = 8, "
        "no line at |s| = 16.")
    assert E.intercept_trend_sentence(table.assign(intercept=[1.0, 2.0, 3.0])) == (
        "Here it grows too, at every step: 1.00 at |s| = 4, 2.00 at |s| = 8, 3.00 at |s| = 16.")
    assert E.intercept_trend_sentence(table.assign(intercept=[1.0, 3.0, 2.0])).startswith(
        "Here it grows from the shortest to the longest answers, though not at every step")
    flat = table.assign(intercept=[1.0, 0.9, 1.3])
    assert E.intercept_trend_sentence(flat).startswith("Here it hardly moves")
    assert E.intercept_trend_sentence(table.assign(intercept=[3.0, 2.0, 1.0])).startswith(
        "Here it goes the other way")
    # level sets at e = 4 and e = 8 (the lengths), one missing at 16
    a = fake_set(es=(1, 4)).levels.assign(entropy=[0.5, 3.0])
    b = fake_set(es=(2, 8)).levels.assign(entropy=[0.5, 3.8])
    c = fake_set(es=(3, 9)).levels
    results = {k: E.SetResult(k, lv, None, None, None, pd.DataFrame(), 1)
               for k, lv in zip(["a", "b", "c"], [a, b, c])}
    assert E.end_entropy_sentence(results, [4, 8, 16]) == (
        "The source's other observation, that every line ends near the same entropy at e = |s| (about 11 "
        "bits "
        "for OLMo-2), holds here too: the level set at e = |s| has 3.0 to 3.8 bits across lengths (1 of 3 "
        "lengths have no level set at e = |s|).")
    b2 = E.SetResult("b", b.assign(entropy=[0.5, 4.5]), None, None, None, pd.DataFrame(), 1)
    assert "does not hold here: the level set at e = |s| has 3.0 to 4.5 bits" in E.end_entropy_sentence(
        {"a": results["a"], "b": b2}, [4, 8])
    assert "cannot be checked here" in E.end_entropy_sentence({"c": results["c"]}, [16])


def test_strategy_table_and_sentence():
    t4 = E.load_paper_table("table4")
    results = {"Temp=0": fake_set("Temp=0", intercept=1.5, slope=0.2, r=0.95, pairs=40),
               "Temp=0.5": fake_set("Temp=0.5", pairs=40)}
    table = E.strategy_table(results, t4)
    assert list(table.columns) == ["strategy", "pairs", "r", "intercept", "slope", "paper r",
                                   "paper intercept",
                                   "paper slope"]
    assert table.iloc[0][["r", "intercept", "slope", "paper r", "paper intercept"]].tolist() == [
        0.95, 1.5, 0.2, 0.933, 5.490]
    assert np.isnan(table.loc[1, "r"]) and table.loc[1, "paper slope"] == 0.106
    assert E.strategy_sentence(table) == (
        "On the lab model r ranges from 0.95 to 0.95 across the 2 strategies (1 of 2 have no line): it is "
        "above 0.9 under 1 of 2, where the source's r is at least 0.933 under every strategy.")
    both = table.assign(r=[0.95, 0.91])
    assert E.strategy_sentence(both).endswith(
        "it stays above 0.9 under every one, as in the source, where the source's r is at least 0.933 under "
        "every strategy.")
    assert E.strategy_sentence(table.assign(r=np.nan)).startswith("No strategy gives a line on the lab model")


def test_sample_size_summary_and_sentence():
    sens = pd.DataFrame({"size": [10] * 11 + [20] * 11, "repeat": list(range(11)) * 2,
                         "intercept": list(np.arange(11.0)) + list(10 + np.arange(11) / 10), "slope": 0.0,
                         "r": 0.9})
    s = E.sample_size_summary(sens)
    assert s["size"].tolist() == [10, 20] and s["subsamples"].tolist() == [11, 11]
    assert s["mean"].tolist() == [5.0, 10.5] and s["spread"].round(6).tolist() == [8.0, 0.8]
    assert E.sample_size_sentence(sens) == (
        "Small samples move the intercept more than large ones: between the 10th and 90th percentile of "
        "subsamples it spans 8.00 bits at 10 pairs and 0.80 at 20. The mean intercept goes from 5.00 to "
        "10.50: "
        "lower at the smallest size, as in the source, where it falls from a plateau towards −6 below about "
        "1,500 pairs.")
    flipped = sens.assign(size=sens["size"].map({10: 20, 20: 10}))
    assert E.sample_size_sentence(flipped).startswith(
        "Here small samples do not move the intercept more than large ones")
    assert "not lower at the smallest size, unlike the source" in E.sample_size_sentence(flipped)
    assert E.sample_size_sentence(sens.iloc[:0]).startswith("No subsample has a line")


def test_candidate_sets():
    doc = SimpleNamespace
    corpus = SimpleNamespace(
        documents=[doc(doc_id=f"background-{i}", text=f"b{i}", copies=1, kind="background") for i in range(5)]
        + [doc(doc_id="popular-x", text="p", copies=4, kind="popular")],
        heldout=[doc(doc_id="h-pop", text="hp", source="popular"),
                 doc(doc_id="h-new", text="hn", source="baseline")])
    sets = E.lab_candidate_sets(corpus)
    assert [c.label for c in sets] == ["training: background A (reference)", "training: background B",
                                       "training: popular excerpts (4 copies)",
                                       "held out: popular-text windows",
                                       "held out: 2024–26 stories"]
    assert list(sets[0].docs) == ["background-0", "background-2", "background-4"]
    assert list(sets[1].docs) == ["background-1", "background-3"]
    assert [c.truth for c in sets] == [1, 1, 1, 0, 0]
    assert [c.balance for c in sets] == [False] * 3 + [True] * 2
    assert [c.reference for c in sets] == [True] + [False] * 4
    assert sets[3].docs == {"h-pop": "hp"} and "12-word shingles" in sets[4].assumption
    assert [c.label for c in E.lab_candidate_sets(corpus, popular_sets=1, heldout_sets=1)] == [
        c.label for c in sets]
    real = E.real_candidate_sets({"c": "C", "a": "A", "b": "B"}, {"s": "S"})
    assert [list(c.docs) for c in real] == [["a", "c"], ["b"], ["s"]]
    assert [c.truth for c in real] == [1, 1, 0] and all(c.balance for c in real) and real[0].reference


def test_candidate_sets_split_by_copies_and_windows():
    doc = SimpleNamespace
    copies = {"p-a": 2, "p-b": 128, "p-c": 8, "p-d": 32, "p-e": 2}
    corpus = SimpleNamespace(
        documents=[doc(doc_id=f"background-{i}", text=f"b{i}", copies=1, kind="background") for i in range(4)]
        + [doc(doc_id=k, text=k, copies=c, kind="popular") for k, c in copies.items()]
        + [doc(doc_id="fact", text="f", copies=9, kind="knowledge")],
        heldout=[doc(doc_id=f"h-{i}", text=f"h{i}", source="popular") for i in (3, 1, 0, 2, 4)]
        + [doc(doc_id="h-new", text="hn", source="baseline")])
    sets = E.lab_candidate_sets(corpus, popular_sets=2, heldout_sets=2)
    assert [c.label for c in sets] == [
        "training: background A (reference)", "training: background B",
        "training: popular excerpts (2 to 8 copies)", "training: popular excerpts (32 to 128 copies)",
        "held out: popular-text windows A", "held out: popular-text windows B", "held out: 2024–26 stories"]
    # excerpts by copies then id, cut into contiguous bands, the larger band first
    assert list(sets[2].docs) == ["p-a", "p-e", "p-c"] and list(sets[3].docs) == ["p-d", "p-b"]
    # held-out windows by id, dealt round-robin
    assert list(sets[4].docs) == ["h-0", "h-2", "h-4"] and list(sets[5].docs) == ["h-1", "h-3"]
    assert [c.truth for c in sets] == [1, 1, 1, 1, 0, 0, 0]
    assert [c.reference for c in sets] == [True] + [False] * 6
    # the most-copied band as the reference, listed first
    by_pop = E.lab_candidate_sets(corpus, popular_sets=2, heldout_sets=2, reference="popular")
    assert by_pop[0].label == "training: popular excerpts (32 to 128 copies) (reference)"
    assert by_pop[0].reference and sum(c.reference for c in by_pop) == 1
    assert by_pop[1].label == "training: background A"
    for bad in (dict(popular_sets=6), dict(heldout_sets=0), dict(popular_sets=True)):
        with pytest.raises(E.EntropyError, match="must be an integer from 1"):
            E.lab_candidate_sets(corpus, **bad)
    with pytest.raises(E.EntropyError, match="reference must be one of"):
        E.lab_candidate_sets(corpus, reference="stories")
    # windows per set, from token lengths (here one token per character)
    table = E.candidate_windows(sets[:3], lambda texts: [list(t) for t in texts], window=2)
    assert table["set"].tolist() == [c.label for c in sets[:3]]
    assert table["documents"].tolist() == [2, 2, 3]
    assert table["tokens"].tolist() == [4, 4, 9] and table["windows"].tolist() == [2, 2, 6]
    assert table["reference"].tolist() == [True, False, False]


def test_decide_membership_sets_tau_from_the_reference():
    ref = fake_set("ref", intercept=50.0, boot={"slope": [0.1] * 101, "intercept": np.arange(101.0),
                                                "r": [0.9] * 101})
    high = fake_set("high", intercept=6.0, boot={"slope": [0.1] * 11, "intercept": np.arange(11.0),
                                                 "r": [0.9] * 11})
    low = fake_set("low", intercept=4.0)
    flat = fake_set("flat")
    sets = [E.CandidateSet("ref", {}, 1, "known", reference=True), E.CandidateSet("high", {}, 0, "x"),
            E.CandidateSet("low", {}, 0, "y"), E.CandidateSet("flat", {}, 1, "z")]
    table = E.decide_membership({"ref": ref, "high": high, "low": low, "flat": flat}, sets, "m")
    # tau: the 5th percentile of 0..100 (re-centred on 50, their median) = 5
    assert table["tau"].tolist() == [5.0] * 4
    assert table["role"].tolist() == ["reference", "candidate", "candidate", "candidate"]
    assert table["prediction"].tolist()[:3] == [1, 1, 0] and np.isnan(table["prediction"].iloc[3])
    # "high": 0..10 re-centred on 6 is 1..11; 6 of 11 resamples are above tau = 5, as is the call
    assert table.loc[1, "agreement"] == pytest.approx(6 / 11)
    assert np.isnan(table.loc[2, "agreement"]) and np.isnan(table.loc[3, "agreement"])
    with pytest.raises(E.EntropyError, match="exactly one set must be the reference"):
        E.decide_membership({"high": high}, [E.CandidateSet("high", {}, 0, "x")], "m")
    no_ref_line = E.decide_membership({"ref": flat, "high": high, "low": low, "flat": flat}, sets, "m")
    assert no_ref_line["tau"].isna().all() and no_ref_line["prediction"].isna().all()

    table["kind"] = ["lab", "lab", "lab", "lab"]
    other = table.assign(kind="real", model="n")
    di = E.di_table([E.Inference("m", {}, table), E.Inference("n", {}, other)])
    assert di["correct"].tolist() == [1, 0, 1, 0] * 2  # an undecided set counts as wrong
    assert E.correct_count(di) == "2 of 6" and E.correct_count(di, "lab") == "1 of 3"
    assert E.correct_count(di.iloc[:0], "real") == "0 of 0"
    assert E.paper_correct_count(E.load_paper_table("table1")) == "8 of 10"
    assert E.tau_sentence(di) == "This run's τ is 5.00 for m; 5.00 for n."
    assert E.tau_sentence(no_ref_line.assign(model="m")) == (
        "This run's τ is undefined for m (its reference set has no line).")
    assert E.agreement_sentence(di) == (
        "0 of 2 calls are made by at least 95% of the re-centred resamples; a different sample of the same "
        "size "
        "could flip the other 2.")
    assert E.agreement_sentence(di.assign(agreement=np.nan)).startswith("No candidate set was decided")
    lines = E.model_lines(di, "real")
    assert lines.startswith("**n**: ref: r = 0.95, intercept 50.00 [")
    assert "flat: no line (3 level sets)" in lines
    assert E.model_lines(di, "api") == "No model of this kind was run."


def test_extrapolation_and_intercept_slope_sentences():
    slopes = np.linspace(0, 1, 101)  # a bootstrap 95% interval of width 0.95
    boot = {"slope": slopes, "intercept": 5 - 4 * slopes, "r": [0.9] * 101}
    a = fake_set("a", intercept=3.0, boot=boot, es=(2, 4, 6))  # mean score 4: 0.95 x 4 = 3.8 bits
    b = fake_set("b", intercept=1.0, boot=boot, es=(3, 4, 5, 8))
    table = pd.DataFrame({"kind": "lab", "role": ["reference", "candidate"], "correct": [1, 0],
                          "level sets": [3, 4]})
    inf = E.Inference("m", {"a": a, "b": b}, table)
    assert E.lowest_score([inf]) == 2
    text = E.extrapolation_sentence([inf], table)
    assert text.startswith("Why the rule does no better here: in every lab set the lowest populated score "
                           "is 2 "
                           "or more, and a set has 4 to 4 level sets.")
    # "b" has mean score 5: 0.95 x 5 = 4.75; the median of 3.8 and 4.75 is 4.275
    assert text.endswith("moves the intercept by 4.3 bits (median over the lab's sets).")
    good = table.assign(correct=1)
    assert E.extrapolation_sentence([inf], good).startswith(
        "Right or wrong, the lab's calls rest on a thin base:")
    zero = E.Inference("m", {"a": fake_set("a", intercept=3.0, es=(0, 1, 2))}, table)
    assert "some lab set reaches e = 0" in E.extrapolation_sentence([zero], table)
    assert E.extrapolation_sentence([E.Inference("n", {}, table.assign(kind="real"))], table) == (
        "No lab model was decided.")
    assert E.intercept_slope_sentence([a, b]) == (
        "Within a set, the bootstrap's intercepts and slopes move in opposite directions (median r = -1.00 "
        "over "
        "2 sets), as the source notes for a fixed model and dataset (Appendix C.7).")
    together = fake_set("c", intercept=1.0, boot={"slope": slopes, "intercept": slopes, "r": [0.9] * 101})
    assert E.intercept_slope_sentence([together]).startswith(
        "Within a set, the bootstrap's intercepts and slopes move in the same direction (median r = 1.00 "
        "over 1 "
        "sets), where the source sees the intercept rise as the slope falls")
    assert E.intercept_slope_sentence([fake_set("d")]).startswith("No set has enough bootstrap lines")


def test_pooling_sentence():
    inst = {"entropy": E.Fit(0.1, 0.0, 0.2, 0.0, 100)}
    assert E.pooling_sentence(inst, fake_set(intercept=1.0, r=0.93)) == (
        "On the lab model, entropy taken one answer at a time correlates with the score at r = 0.20; pooled "
        "into "
        "level sets, at r = 0.930: pooling strengthens the relation, as the source's central contrast says.")
    assert E.pooling_sentence(inst, fake_set(intercept=1.0, r=-0.1)).endswith(
        "pooling does not strengthen the relation here, against the source's central contrast.")
    assert E.pooling_sentence(inst, fake_set()).endswith("so pooling cannot be judged here.")


class EchoTokens(EchoModel):
    """EchoModel with a tokenizer: a text's words as integers."""

    def tokenize(self, texts):
        return [[int(w) for w in t.split()] for t in texts]


def test_runs_over_lengths_strategies_and_sets(tmp_path):
    model = EchoTokens("lab:echo", cache=QueryCache(tmp_path / "q.sqlite"))
    pairs = pd.DataFrame({"prefix": [[1, 2, 3, 4], [5, 6, 7, 8]], "suffix": [[9, 9, 9], [8, 8, 8]]})
    by_len = E.by_suffix_length(model, pairs, [1, 3], GenerationSettings(), "none", n_boot=5)
    assert list(by_len) == ["|s| = 1", "|s| = 3"]
    assert [r.pairs for r in by_len.values()] == [2, 2]
    # the echo answers the last |s| prompt tokens: with |s| = 1, 4 vs 9 and 8 vs 8
    assert sorted(by_len["|s| = 1"].levels["e"]) == [0, 1]
    by_s = E.by_strategy(model, pairs, ["Temp=0", "Temp=0.5"], "none", n_boot=5)
    assert list(by_s) == ["Temp=0", "Temp=0.5"]
    docs = {str(k): " ".join(str(10 * k + i) for i in range(12)) for k in range(1, 4)}
    sets = [E.CandidateSet("A", docs, 1, "known", reference=True), E.CandidateSet("B", docs, 0, "new")]
    inf = E.dataset_inference(model, sets, 4, 2, 5, GenerationSettings(), "none", n_boot=5, seed=0,
                              sample_seed=7)
    assert inf.model == "echo" and list(inf.results) == ["A", "B"]
    assert inf.table["kind"].tolist() == ["lab", "lab"] and inf.table["set"].tolist() == ["A", "B"]
    tokens = dict(zip(docs, model.tokenize(list(docs.values()))))
    # set k is sampled with seed sample_seed + k
    assert inf.results["B"].pairs == len(E.sample_pairs(tokens, 4, 2, 5, seed=8))


def test_size_tracking_r_and_the_set_size_sentence():
    # entropy exactly linear in log2(pairs): pairs 1, 2, 4, 8 -> log2 0, 1, 2, 3
    levels = pd.DataFrame({"e": [0, 1, 2, 3], "pairs": [1, 2, 4, 8], "entropy": [5.0, 6.0, 7.0, 8.0]})
    assert E.size_tracking_r(levels) == pytest.approx(1.0)
    # hand-computed: x = log2([8, 2, 2, 8]) = [3, 1, 1, 3], y = [4, 1, 2, 4]; centred x = [1, -1, -1, 1],
    # centred y = [1.25, -1.75, -0.75, 1.25]; r = 5 / sqrt(4 * 6.75) = 0.9623
    bowl = pd.DataFrame({"e": [0, 3, 5, 16], "pairs": [8, 2, 2, 8], "entropy": [4.0, 1.0, 2.0, 4.0]})
    assert E.size_tracking_r(bowl) == pytest.approx(5 / (4 * 6.75) ** 0.5)
    assert np.isnan(E.size_tracking_r(levels.head(2)))
    assert np.isnan(E.size_tracking_r(levels.assign(pairs=3)))
    main = E.SetResult("m", bowl, E.Fit(0.1, 2.0, 0.4, 0.1, 4), None, None, pd.DataFrame(), 20)
    assert E.set_size_sentence(main, 16) == (
        "Across the level sets the entropy follows log₂ of the number of pairs in each set at r = 0.96, "
        "more closely than it follows the score (r = 0.400). The verbatim set (e = 0) holds 8 pairs and the "
        "sets at e = 1 to 5 hold 2 to 2 each: so verbatim answers are commoner here than partly memorized "
        "ones, whereas in the source low scores are exponentially rarer than high ones.")
    # x = log2([1, 8, 2, 4]) = [0, 3, 1, 2] against y = [5, 6, 7, 8]: r = 2 / sqrt(5 * 5) = 0.4
    rising = levels.assign(pairs=[1, 8, 2, 4])
    assert E.size_tracking_r(rising) == pytest.approx(0.4)
    rare = E.SetResult("m", rising, E.Fit(1.0, 5.0, 0.99, 0.0, 4), None, None, pd.DataFrame(), 15)
    text = E.set_size_sentence(rare, 16)
    assert "at r = 0.40, less closely than it follows the score (r = 0.990)" in text
    assert text.endswith("so here, as in the source, verbatim answers are rarer than partly memorized ones.")
    assert E.set_size_sentence(fake_set("g", es=(4, 5)), 16).startswith("With fewer than 3 level sets")
