"""A sample's level sets analysed (:mod:`analysis.entropy.method_sets`) and the candidate
sets of dataset inference (:mod:`analysis.entropy.candidates`): lines, bootstraps,
tables and the membership decision, on synthetic samples and hand-computed values."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.entropy import candidates as C
from analysis.entropy import method_sets as S
from analysis.entropy.method import recentre
from analysis.entropy.params import EntropyError, load_paper_table
from entropy_fakes import fake_set, scored_frame


def test_analyse_set_and_sample_size_on_a_synthetic_sample():
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(400):
        e = int(rng.integers(0, 9))
        # answers that score e draw from a vocabulary of 2 + 4e tokens: entropy grows with e
        rows.append({"prefix": [0], "suffix": list(rng.integers(0, 2 + 4 * e, 8)), "score": float(e),
                     "error": None, "trivial": False, "suffix_text": "t"})
    scored = pd.DataFrame(rows)
    res = S.analyse_set("s", scored, n_boot=50)
    assert res.pairs == 400 and len(res.levels) == 9
    assert res.fit.slope > 0 and res.fit.r > 0.9
    row = res.row()
    assert row["intercept lo"] <= row["intercept"] <= row["intercept hi"]
    sens = S.sample_size_sensitivity(scored, [100, 200, 1000], repeats=3)
    assert sorted(set(sens["size"])) == [100, 200]  # 1000 is more than the pool
    assert (sens.groupby("size").size() == 3).all()


def test_recentred_bootstrap_keeps_the_spread_and_moves_the_median():
    out = recentre([1.0, 2.0, 3.0, 10.0], 5.0)
    assert list(out) == [3.5, 4.5, 5.5, 12.5]  # median 2.5 moved to 5; differences kept
    # on a real sample the raw bootstrap intercepts sit below the estimate (repeated
    # pairs lower the plug-in entropy); the re-centred ones straddle it
    rng = np.random.default_rng(7)
    scored = pd.DataFrame([{"prefix": [0], "suffix": list(rng.integers(0, 3 + 6 * e, 8)), "score": float(e),
                            "error": None, "trivial": False, "suffix_text": "t"}
                           for e in rng.integers(0, 8, 300)])
    res = S.analyse_set("s", scored, n_boot=200)
    assert np.median(res.boot["intercept"]) < res.fit.intercept
    assert np.median(res.centred("intercept")) == pytest.approx(res.fit.intercept)
    assert np.std(res.centred("intercept")) == pytest.approx(np.std(res.boot["intercept"]))



def test_fit_and_strategy_tables():
    a = fake_set("a", intercept=1.0, boot={"slope": [0.5] * 3, "intercept": [1.0] * 3, "r": [0.95] * 3})
    a.zlib_fit = S.Fit(0.1, 0.2, 0.8, 0.0, 3)
    t = S.fit_table({"a": a, "b": fake_set("b")}, other_lines=True)
    assert list(t["set"]) == ["a", "b"] and t.loc[0, "zlib r"] == 0.8
    assert np.isnan(t.loc[0, "normalized r"]) and np.isnan(t.loc[1, "r"]) and t.loc[1, "level sets"] == 3
    assert "zlib r" not in S.fit_table({"a": a})
    t4 = load_paper_table("table4")
    results = {"Temp=0": fake_set("Temp=0", intercept=1.5, slope=0.2, r=0.95, pairs=40),
               "Temp=0.5": fake_set("Temp=0.5", pairs=40)}
    table = S.strategy_table(results, t4)
    assert list(table.columns) == ["strategy", "pairs", "r", "intercept", "slope", "paper r",
                                   "paper intercept", "paper slope"]
    assert table.iloc[0][["r", "intercept", "slope", "paper r", "paper intercept"]].tolist() == [
        0.95, 1.5, 0.2, 0.933, 5.490]
    assert np.isnan(table.loc[1, "r"]) and table.loc[1, "paper slope"] == 0.106


def test_sample_size_summary():
    sens = pd.DataFrame({"size": [10] * 11 + [20] * 11, "repeat": list(range(11)) * 2,
                         "intercept": list(np.arange(11.0)) + list(10 + np.arange(11) / 10), "slope": 0.0,
                         "r": 0.9})
    s = S.sample_size_summary(sens)
    assert s["size"].tolist() == [10, 20] and s["subsamples"].tolist() == [11, 11]
    assert s["mean"].tolist() == [5.0, 10.5] and s["spread"].round(6).tolist() == [8.0, 0.8]


def test_source_table_and_stream_composition():
    stream = S.Stream(tokens={"b": [1, 2, 3], "p": [4, 5], "i": [6, 7, 8, 9]},
                      copies={"b": 1, "p": 4, "i": 16}, left_out={},
                      source={"b": "background", "p": "popular", "i": "injected"})
    scored = scored_frame([("b", 4, False), ("b", 3, False), ("b", 1, True), ("p", 4, False),
                           ("i", 0, False), ("i", 1, False), ("i", 4, False)])
    table = S.source_table(scored, stream)
    # the trivial background pair is drawn, not kept, and its score not counted
    assert table.to_dict("list") == {"source": ["background", "popular", "injected"],
                                     "pairs drawn": [3, 1, 3], "pairs kept": [2, 1, 3],
                                     "mean score": [3.5, 4.0, 5 / 3], "median score": [3.5, 4.0, 1.0]}
    comp = S.stream_composition(stream)
    assert comp.to_dict("list") == {"source": ["background", "popular", "injected"],
                                    "documents": [1, 1, 1],
                                    "fewest": [1, 4, 16], "most": [1, 4, 16], "tokens": [3, 2, 4],
                                    "tokens in stream": [3, 8, 64]}


def test_size_tracking_r():
    # entropy exactly linear in log2(pairs): pairs 1, 2, 4, 8 -> log2 0, 1, 2, 3
    levels = pd.DataFrame({"e": [0, 1, 2, 3], "pairs": [1, 2, 4, 8], "entropy": [5.0, 6.0, 7.0, 8.0]})
    assert S.size_tracking_r(levels) == pytest.approx(1.0)
    # x = log2([8, 2, 2, 8]) = [3, 1, 1, 3], y = [4, 1, 2, 4]; centred x = [1, -1, -1, 1],
    # centred y = [1.25, -1.75, -0.75, 1.25]; r = 5 / sqrt(4 * 6.75) = 0.9623
    bowl = pd.DataFrame({"e": [0, 3, 5, 16], "pairs": [8, 2, 2, 8], "entropy": [4.0, 1.0, 2.0, 4.0]})
    assert S.size_tracking_r(bowl) == pytest.approx(5 / (4 * 6.75) ** 0.5)
    # x = log2([1, 8, 2, 4]) = [0, 3, 1, 2] against y = [5, 6, 7, 8]: r = 2 / sqrt(5 * 5) = 0.4
    assert S.size_tracking_r(levels.assign(pairs=[1, 8, 2, 4])) == pytest.approx(0.4)
    assert np.isnan(S.size_tracking_r(levels.head(2)))  # fewer than 3 level sets
    assert np.isnan(S.size_tracking_r(levels.assign(pairs=3)))  # every set the same size
    assert np.isnan(S.size_tracking_r(levels.assign(entropy=2.0)))  # a constant entropy


def test_instance_fits_need_three_pairs():
    rows = scored_frame([("b", 1, False), ("b", 2, False)])
    with pytest.raises(EntropyError, match="instance level: a line needs at least 3 pairs, got 2"):
        S.instance_fits(rows)


def test_candidate_sets():
    doc = SimpleNamespace
    corpus = SimpleNamespace(
        documents=[doc(doc_id=f"background-{i}", text=f"b{i}", copies=1, kind="background") for i in range(5)]
        + [doc(doc_id="popular-x", text="p", copies=4, kind="popular")],
        heldout=[doc(doc_id="h-pop", text="hp", source="popular"),
                 doc(doc_id="h-new", text="hn", source="baseline")])
    sets = C.lab_candidate_sets(corpus)
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
    assert [c.label for c in C.lab_candidate_sets(corpus, popular_sets=1, heldout_sets=1)] == [
        c.label for c in sets]
    real = C.real_candidate_sets({"c": "C", "a": "A", "b": "B"}, {"s": "S"})
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
    sets = C.lab_candidate_sets(corpus, popular_sets=2, heldout_sets=2)
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
    by_pop = C.lab_candidate_sets(corpus, popular_sets=2, heldout_sets=2, reference="popular")
    assert by_pop[0].label == "training: popular excerpts (32 to 128 copies) (reference)"
    assert by_pop[0].reference and sum(c.reference for c in by_pop) == 1
    assert by_pop[1].label == "training: background A"
    for bad in (dict(popular_sets=6), dict(heldout_sets=0), dict(popular_sets=True)):
        with pytest.raises(EntropyError, match="must be an integer from 1"):
            C.lab_candidate_sets(corpus, **bad)
    with pytest.raises(EntropyError, match="reference must be one of"):
        C.lab_candidate_sets(corpus, reference="stories")
    # windows per set, from token lengths (here one token per character)
    table = C.candidate_windows(sets[:3], lambda texts: [list(t) for t in texts], window=2)
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
    sets = [C.CandidateSet("ref", {}, 1, "known", reference=True), C.CandidateSet("high", {}, 0, "x"),
            C.CandidateSet("low", {}, 0, "y"), C.CandidateSet("flat", {}, 1, "z")]
    table = S.decide_membership({"ref": ref, "high": high, "low": low, "flat": flat}, sets, "m")
    # tau: the 5th percentile of 0..100 (re-centred on 50, their median) = 5
    assert table["tau"].tolist() == [5.0] * 4
    assert table["role"].tolist() == ["reference", "candidate", "candidate", "candidate"]
    assert table["prediction"].tolist()[:3] == [1, 1, 0] and np.isnan(table["prediction"].iloc[3])
    # "high": 0..10 re-centred on 6 is 1..11; 6 of 11 resamples are above tau = 5, as is the call
    assert table.loc[1, "agreement"] == pytest.approx(6 / 11)
    assert np.isnan(table.loc[2, "agreement"]) and np.isnan(table.loc[3, "agreement"])
    with pytest.raises(EntropyError, match="exactly one set must be the reference"):
        S.decide_membership({"high": high}, [C.CandidateSet("high", {}, 0, "x")], "m")
    no_ref_line = S.decide_membership({"ref": flat, "high": high, "low": low, "flat": flat}, sets, "m")
    assert no_ref_line["tau"].isna().all() and no_ref_line["prediction"].isna().all()

    table["kind"] = ["lab", "lab", "lab", "lab"]
    other = table.assign(kind="real", model="n")
    di = S.di_table([S.Inference("m", {}, table), S.Inference("n", {}, other)])
    # an undecided set is neither right nor wrong: NaN, counted apart
    assert di["correct"].tolist()[:3] == [1, 0, 1] and np.isnan(di["correct"].iloc[3])
    # why: "flat" has three level sets in fake_set (e = 2, 4, 6) but no line; "ref" and the others have one
    assert table["undecided"].iloc[:3].isna().all()
    assert table.loc[3, "undecided"] == ("3 level sets (e = 2 (10 pairs), e = 4 (10 pairs), "
                                         "e = 6 (10 pairs)) of 30 kept pairs: a line needs 3")
    assert no_ref_line.loc[1, "undecided"] == "its model's reference set has no line, so there is no τ"
    one = fake_set("one", es=(16,), pairs=60)
    assert S.undecided_reason(one, 5.0) == "1 level set (e = 16 (10 pairs)) of 60 kept pairs: a line needs 3"
    assert S.lowest_score([S.Inference("m", {"ref": ref, "high": high}, table)]) == 2
