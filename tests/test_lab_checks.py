"""The lab page's learned checks (analysis.book.lab_checks), on hand-made tables."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.book import lab_checks as L


def test_copies_bins_are_powers_of_four():
    got = L.copies_bin([0, 1, 3, 4, 15, 16, 64, 65, 256, 300]).astype(str).tolist()
    assert got == ["0", "1-3", "1-3", "4-15", "4-15", "16-64", "16-64", "65-256", "65-256", "257+"]


def test_auc_halfwidth_by_hand():
    # Hanley-McNeil at A = 0.5: Q1 = Q2 = 1/3, var = (0.25 + 2 * 101 * (1/3 - 1/4)) / (102 * 102)
    var = (0.25 + 2 * 101 * (1 / 3 - 0.25)) / (102 * 102)
    assert L.auc_halfwidth(102, 102) == pytest.approx(1.959964 * var ** 0.5)
    assert L.auc_halfwidth(102, 102) == pytest.approx(0.0794, abs=1e-4)
    # 18 non-members against 330 members (Lab v3's pooled design) is wider at one copy's 18 members
    assert L.auc_halfwidth(18, 18) > 0.18
    with pytest.raises(ValueError, match="members and non-members"):
        L.auc_halfwidth(0, 5)


def test_score_counts_by_hand():
    out = L.score_counts([0, 0, 1, 4, 5, 12, 16, 16, np.nan], 16)
    assert out["counts"][:6] == [2, 1, 0, 0, 1, 1] and out["counts"][12] == 1 and out["counts"][16] == 2
    assert len(out["counts"]) == 17 and sum(out["counts"]) == 8  # the NaN (an error) left out
    # low: scores 0..4 (2 + 1 + 1); high: 12..16 (1 + 2)
    assert (out["low"], out["high"]) == (4, 3) and out["low_high_ratio"] == pytest.approx(4 / 3)
    assert np.isnan(L.score_counts([0, 1], 16)["low_high_ratio"])


def test_extraction_levels_partial_and_monotone():
    table = pd.DataFrame({"run": "r", "copies": [0, 1, 4, 16, 24, 64],
                          "share": [0.0, 0.0, 0.05, 0.5, 0.8, 1.0]})
    out = L.extraction_levels(table, "r")
    assert out["partial"] == [16, 24] and out["monotone"]
    dip = table.assign(share=[0.0, 0.0, 0.05, 0.5, 0.95, 0.9])
    out = L.extraction_levels(dip, "r")
    assert out["partial"] == [16] and not out["monotone"]
    with pytest.raises(ValueError, match="no inserted levels"):
        L.extraction_levels(table, "other")


def test_membership_counts_and_ladder_span():
    inj = pd.DataFrame({"copies": [0, 0, 1, 4, 4, 4, 16]})
    assert L.membership_counts(inj) == {0: 2, 1: 1, 4: 3, 16: 1}
    runs = pd.DataFrame({"family": ["ladder-wide", "ladder-deep", "ablation"], "params": [1000, 40, 1]})
    assert L.ladder_span(runs) == 25.0  # the ablation is not on the ladder


class FakeModel:
    """Answers each prompt from a dict; a prompt it does not know is an error."""

    def __init__(self, answers):
        self.answers = answers

    def complete(self, prompts, settings, progress=None):
        return [SimpleNamespace(ok=p in self.answers, text=self.answers.get(p),
                                error=None if p in self.answers else "boom") for p in prompts]


def test_knowledge_probes_score_the_answer_and_the_swapped_control():
    know = pd.DataFrame({"question_id": [1, 2], "copies": [0, 9], "answer_count": [3, 9],
                         "answer": ["Paris", "Rome"], "swapped_answer": ["Rome", "Paris"],
                         "cloze": ["c1", "c2"], "prompt": ["q1", "q2"]})
    model = FakeModel({"c1": " Rome, of course", "c2": " rome.", "q1": "Paris"})  # q2 fails
    out = L.knowledge_probes({"m": model}, know)
    assert out[["probe", "question_id", "correct", "swapped_correct"]].values.tolist() == [
        ["cloze", 1, False, True], ["cloze", 2, True, False],
        ["question", 1, True, False], ["question", 2, False, False]]
    assert out["error"].isna().tolist() == [True, True, True, False] and out["error"].iloc[3] == "boom"
    assert pd.isna(out["response"].iloc[3])


def test_knowledge_learned_against_scipy():
    rng = np.random.default_rng(0)
    copies = np.concatenate([np.zeros(20, int), rng.integers(1, 65, size=80)])
    learn = rng.random(100) < copies / 70
    frame = pd.DataFrame({"run": "m", "question_id": np.tile(np.arange(100), 2),
                          "copies": np.tile(copies, 2), "probe": ["cloze"] * 100 + ["question"] * 100,
                          "correct": np.concatenate([learn, np.zeros(100, bool)]),
                          "swapped_correct": np.zeros(200, bool)})
    frame.loc[(frame["probe"] == "question") & (frame["copies"] >= 16), "correct"] = True
    out = L.knowledge_learned(frame, "m")
    ref = stats.spearmanr(copies, learn, alternative="greater")
    assert out["cloze_rho"] == pytest.approx(ref.statistic) and out["cloze_p"] == pytest.approx(ref.pvalue)
    assert out["cloze_p"] < 0.05 and out["facts"] == 100
    assert np.isnan(out["control_rho"])  # the control never answers: constant, no test
    assert out["top_bin"] == "16-64"  # copies drawn on 1..64
    assert out["question_top_bin"] == 1.0 and out["question_zero_bin"] == 0.0 and out["zero_facts"] == 20
    acc = L.knowledge_accuracy(frame)
    zero = acc[(acc["probe"] == "question") & (acc["bin"] == "0")].iloc[0]
    assert (zero["facts"], zero["correct"], zero["accuracy"]) == (20, 0, 0.0)
    with pytest.raises(ValueError, match="has no probes"):
        L.knowledge_learned(frame, "x")


def test_budget_sentence_reads_the_records(tmp_path):
    import json

    cold, comp = tmp_path / "lab_cold.json", tmp_path / "lab_compile.json"
    assert L.budget_sentence("default", cold, comp).startswith("**Not measured yet**")
    cold.write_text(json.dumps({"profile": "default", "minutes": 38.2, "cores": 2, "trainings": 27,
                                "workers": 2, "commit": "abc1234", "date": "2026-12-04T02:00Z"}))
    comp.write_text(json.dumps({"compile_qualifies": False, "why": "no arm was faster"}))
    text = L.budget_sentence("default", cold, comp)
    assert text == ("A cold build of this lab, in one process from an empty cache, took 38.2 minutes on 2 "
                    "cores (27 trainings, 2 side by side; commit `abc1234`, 2026-12-04T02:00Z; "
                    "`bench/results/lab_cold.json`). It trains eager: no arm was faster "
                    "(`bench/results/lab_compile.json`).")
    assert L.budget_sentence("smoke", cold, comp).startswith("**Not measured for the smoke lab**")


def test_number_says_undefined_for_a_test_that_could_not_run():
    assert L.number(8.7e-61) == "8.7e-61" and L.number(0.7654, ".2f") == "0.77"
    assert L.number(float("nan")) == "undefined" and L.number(None) == "undefined"


def test_learned_values_format_once_and_say_when_no_control_fired():
    learned = {"facts": 300, "cloze_rho": 0.7712, "cloze_p": 8.7e-61, "control_rho": float("nan"),
               "control_p": float("nan"), "top_bin": "16-64", "top_facts": 81, "zero_facts": 30,
               "cloze_top_bin": 0.989, "cloze_zero_bin": 0.0, "question_top_bin": 0.172,
               "question_zero_bin": 0.0}
    levels = {"partial": [16, 24], "monotone": True}
    extraction = pd.DataFrame({"run": ["range-q1", "range-q1", "range-q4", "range-q4"],
                               "copies": [0, 4, 0, 4], "extracted": [1, 0, 0, 13]})
    know = pd.DataFrame({"overlap_8": [False, True], "overlap_14": [False, False],
                         "prompt_overlap_8": [False, False]})
    counts = L.score_counts([0, 0, 0, 3, 5, 16], 16)
    membership = {0: 102, 1: 102, 4: 102}
    v = L.learned_values(learned, levels, extraction, membership, counts, know, 37.4, "pert-l2x")
    assert v["knowledge_cloze_text"] == "ρ = 0.77 (one-sided p = 8.7e-61)"
    assert (v["knowledge_cloze_rho"], v["knowledge_cloze_p"]) == ("0.77", "8.7e-61")
    assert v["knowledge_control_rho"] == v["knowledge_control_p"] == "undefined"
    assert v["knowledge_control_text"] == "no model output is ever another fact's answer (no ρ to test)"
    # the quarter runs count inserted sequences only (the q1 control extraction is not one)
    assert v["extraction_by_quarter"] == "q1 0, q4 13" and v["extraction_partial_list"] == "16/24"
    assert v["knowledge_decontaminated"] == "1" and v["lab_span"] == "37"
    assert v["mia_halfwidth_1"] == "0.079" and v["entropy_low_high_ratio"] == "4.00"  # 0, 0, 0, 3 against 16
    # scores 0..7: three verbatim, then 0 to 1 per score
    assert v["entropy_verbatim"] == "3" and v["entropy_middle"] == "0 to 1"
    regime = "do not fall steadily toward low scores: 3 pairs at e = 0 against 0"
    assert v["entropy_regime"].startswith(regime)
    steady = {"counts": [0, 1, 1, 2, 5]}
    assert L.regime_text(steady) == "fall steadily toward low scores, as in the source's regime"
    table = L.learned_table(v, "wide-128", "0 of 102")
    assert table["chapter"].tolist() == ["size", "distributional", "predicting", "entropy"]
    assert table.loc[2, "negative control"] == "never-inserted controls extracted: 0 of 102"
    assert "cloze ρ = 0.77" in table.loc[1, "learned (measured)"]


def test_rebuild_sentence_reads_the_record_and_says_when_there_is_none(tmp_path):
    import json

    from analysis.book import lab_checks
    assert "**not measured yet**" in lab_checks.rebuild_sentence(tmp_path / "none.json")
    rows = [{"run": "a", "final_loss_committed": 2.0, "final_loss_rebuilt": 2.0001, "loss_diff": 1e-4},
            {"run": "b", "final_loss_committed": 4.5, "final_loss_rebuilt": 4.48, "loss_diff": 0.02}]
    rec = {"cpu": "cpu X", "date": "2026-12-04", "commit": "abc", "reference_date": "2026-12-03",
           "reference_commit": "def", "identical": 0, "runs": 2, "within_tol": 1, "tol": 1e-3,
           "median_loss_diff": 0.01005, "max_loss_diff": 0.02, "rows": rows}
    path = tmp_path / "lab_rebuild.json"
    path.write_text(json.dumps(rec))
    text = lab_checks.rebuild_sentence(path)
    assert "0 of 2 runs have bit-identical weights" in text and "1 of 2 final losses lie within 0.001" in text
    # only the run beyond the tolerance is named
    assert "largest 0.02: b 4.500 → 4.480;" in text and "a 2.000" not in text


def test_score_counts_by_level_and_regime_reason_by_hand():
    from analysis.book.lab_checks import regime_reason, score_counts_by_level

    scored = pd.DataFrame({"source": ["popular"] * 5 + ["background"] * 4,
                           "copies": [2, 2, 2, 8, 8, 1, 1, 1, 1],
                           "score": [0, 0, 1, 0, 16, 16, 12, 1, np.nan]})
    lv = score_counts_by_level(scored, 16)
    assert lv[["source", "copies", "pairs", "verbatim", "e1", "partial", "high"]].values.tolist() == [
        ["background", 1, 3, 0, 1, 1, 2], ["popular", 2, 3, 2, 1, 1, 0], ["popular", 8, 2, 1, 0, 0, 1]]
    # every level is below the reading threshold at the default; with 1 pair enough, the background
    # level (more at e = 1 than at e = 0) could move a design toward the regime
    assert regime_reason(lv, min_pairs=1).startswith("1 of the 3 levels with at least 1 pairs")
    # without it every level read is verbatim-heavy, and no mixture of the levels can fall steadily
    assert regime_reason(lv[lv["source"] == "popular"], min_pairs=1).startswith("every one of the 2 levels")
    # at the default threshold of 10 every level is too thin to read: the thin ones are named
    text = regime_reason(lv)
    assert text.startswith("no level has 10 pairs at e = 0 or 1")
    assert "background at 1 copies 0 against 1" in text
    # a verbatim-heavy level read beside thin ones that lean the other way: the thin ones are named
    row = {"source": "popular", "copies": 16, "pairs": 40, "verbatim": 30, "e1": 2, "partial": 5, "high": 3}
    big = pd.concat([lv, pd.DataFrame([row])], ignore_index=True)
    text = regime_reason(big)
    assert text.startswith("every one of the 1 levels with at least 10 pairs")
    assert "only levels the sample barely sees" in text and "(background at 1 copies 0 against 1" in text
