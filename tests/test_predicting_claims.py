"""The predicting chapter's claims, decided on small hand-computed fixtures: status, value, n and p."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.core.claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, REPRODUCED, from_json, to_json
from analysis.predicting import claims as C
from analysis.predicting import params as PA
from analysis.predicting import text as X

# -- labels ------------------------------------------------------------------------------------


def _long(reps=1):
    # two targets, controls (0 copies) and two inserted levels; (A, 4) and (B, 4) extract nothing
    rows = [
        ("A", 0, 0, 0.0), ("A", 0, 0, 0.05), ("A", 4, 0, 0.5), ("A", 4, 0, 0.6), ("A", 16, 1, 1.0),
        ("A", 16, 0, 0.9), ("B", 0, 0, 0.1), ("B", 0, 0, 0.15), ("B", 4, 0, 0.4), ("B", 4, 0, 0.7),
        ("B", 16, 1, 1.0), ("B", 16, 1, 1.0),
    ]
    return pd.DataFrame(rows * reps, columns=["target", "copies", "extract", "suffix_acc"])


PAPER_CONTROLS = pd.DataFrame({"target": ["x", "y", "z"], "controls_pos": [0, 66, 497]})


def test_controls_claim_needs_one_extracted_control_among_enough():
    # 10 copies of the toy: 40 controls, none extracted
    c = C.controls_claim(_long(10), PAPER_CONTROLS)
    assert (c.status, c.value, c.n, c.min_n) == (NOT_REPRODUCED, 0.0, 40, 30)
    assert c.source_value == "563 controls extracted in 2 of 3 sets" and c.section == "predicting-labels"
    leaky = _long(10)
    leaky.loc[[0, 1], "extract"] = 1
    c = C.controls_claim(leaky, PAPER_CONTROLS)
    assert (c.status, c.value, c.extra["extracted"]) == (REPRODUCED, 2 / 40, 2)
    # 4 controls, none extracted: too few to say the lab extracts none
    assert C.controls_claim(_long(), PAPER_CONTROLS).status == INCONCLUSIVE
    assert C.controls_claim(_long().query("copies > 0"), PAPER_CONTROLS).status == NOT_TESTABLE


def test_partial_learning_is_a_one_sided_mann_whitney_test():
    # cells with nothing extracted: suffix accuracy {0.5, 0.6, 0.4, 0.7}, mean 0.55; controls
    # {0, 0.05, 0.1, 0.15}, mean 0.075; every cell value is above every control, so the one-sided
    # p is 1 / C(8, 4) = 1/70, but 8 examples are below the minimum of 30
    c = C.partial_learning_claim(_long())
    assert c.value == pytest.approx(0.475) and c.p == pytest.approx(1 / 70) and c.n == 8
    assert c.status == INCONCLUSIVE and c.extra["n_cells"] == 2
    # four times as many: 16 cell values above 16 controls (tied, so scipy's normal approximation)
    c = C.partial_learning_claim(_long(4))
    assert c.status == REPRODUCED and c.n == 32 and c.p < 1e-5
    # the same accuracies on both sides: the difference equals the null
    flat = _long(4).assign(suffix_acc=[0.1, 0.2, 0.1, 0.2, 1.0, 0.9, 0.1, 0.2, 0.1, 0.2, 1.0, 1.0] * 4)
    assert C.partial_learning_claim(flat).status == NOT_REPRODUCED
    assert C.partial_learning_claim(_long().query("copies != 4")).status == NOT_TESTABLE
    assert C.partial_learning_claim(_long().query("copies != 0")).status == NOT_TESTABLE


# -- Experiment 1 ------------------------------------------------------------------------------


def _wide(rows: dict, targets):
    return pd.DataFrame(rows, index=targets, dtype=float).T


def test_exp1_three_tests_the_main_target_against_chance_on_its_test_set():
    paper = PA.load_paper_table("exp1_random").set_index("features")
    lab = _wide({PA.THREE: [0.907]}, ["8b-500b"])
    data = pd.DataFrame({"target": ["8b-500b"], "test_n": [46], "test_pos": [23]})
    c = C.exp1_three_claim(lab, paper, data, "8b-500b")
    # null sd sqrt(47 / (12 * 23 * 23)) = 0.0860; z = 0.407 / 0.0860 = 4.73
    assert c.status == REPRODUCED and c.n == 46 and c.p == pytest.approx(2.2e-6, rel=0.1)
    assert c.source_value == "0.883 (8b-500b)"
    # 0.40 on 100 + 100: z = 0.1 / sqrt(201 / 120000) = 2.44, p = 0.0146, below chance
    low = C.exp1_three_claim(_wide({PA.THREE: [0.40]}, ["8b-500b"]), paper,
                             data.assign(test_n=200, test_pos=100), "8b-500b")
    assert low.status == NOT_REPRODUCED and low.p == pytest.approx(0.0146, abs=5e-4)
    few = C.exp1_three_claim(lab, paper, data.assign(test_n=20, test_pos=10), "8b-500b")
    assert few.status == INCONCLUSIVE
    assert C.exp1_three_claim(None, paper, data, "8b-500b").status == NOT_TESTABLE


def test_exp1_inserted_claim_tests_the_source_direction_without_a_source_number():
    paper = PA.load_paper_table("exp1_random").set_index("features")
    lab = _wide({PA.THREE: [0.60]}, ["8b-500b"])
    data = pd.DataFrame({"target": ["8b-500b"], "test_n": [200], "test_pos": [100]})
    c = C.exp1_inserted_claim(lab, paper, data, "8b-500b")
    # 0.60 on 100 + 100: z = 0.1 / sqrt(201 / 120000) = 2.44, p = 0.0146, above chance
    assert (c.id, c.status, c.n) == ("e1_inserted_three", REPRODUCED, 200)
    assert c.p == pytest.approx(0.0146, abs=5e-4) and c.extra["src_all"] == pytest.approx(0.883)
    assert c.source_value == ("not printed (the source's out/fit_balanced_report.txt (subset=inserted)); "
                              "with every sequence 0.883 (8b-500b)")
    assert C.exp1_inserted_claim(_wide({PA.THREE: [0.45]}, ["8b-500b"]), paper, data,
                                 "8b-500b").status == NOT_REPRODUCED
    assert C.exp1_inserted_claim(None, paper, data, "8b-500b").status == NOT_TESTABLE


def test_exp1_freq_claim_is_a_sign_test_over_targets():
    paper = _wide({"log_freq": [0.9, 0.9, 0.6], "hardness": [0.5, 0.55, 0.77]}, ["a", "b", "c"])
    targets = [f"t{i}" for i in range(6)]
    lab = _wide({"log_freq": [0.9] * 6, "hardness": [0.6] * 6}, targets)
    c = C.exp1_freq_claim(lab, paper)
    # 6 of 6: two-sided binomial p = 2 / 2**6
    assert (c.status, c.value, c.n, c.p) == (REPRODUCED, 1.0, 6, pytest.approx(1 / 32))
    assert c.source_value == "2 of 3 targets" and c.extra["wins"] == 6
    one = C.exp1_freq_claim(lab.assign(t0=[0.5, 0.6], t1=[0.5, 0.6], t2=[0.5, 0.6], t3=[0.5, 0.6],
                                       t4=[0.5, 0.6]), paper)
    assert one.status == NOT_REPRODUCED and one.value == pytest.approx(1 / 6)  # 1 of 6, the other side
    # four targets with numbers, two without: below the minimum of 5
    some = lab.assign(t4=np.nan, t5=np.nan)
    assert C.exp1_freq_claim(some, paper).status == INCONCLUSIVE
    assert C.exp1_freq_claim(None, paper).status == NOT_TESTABLE


def test_exp1_spread_claim_allows_twice_the_source_sd():
    paper = _wide({"sd (3 features)": [0.002, 0.003, 0.05]}, ["a", "b", "c"])
    paper_d = pd.DataFrame({"n_examples": [300, 7052, 9072]})
    lab_d = pd.DataFrame({"n_examples": [10, 20, 30, 40, 50]})
    targets = [f"t{i}" for i in range(5)]

    def claim(sd):
        return C.exp1_spread_claim(_wide({"sd (3 features)": [sd] * 5}, targets), paper, lab_d, paper_d)

    far = claim(0.041)
    assert (far.status, far.value, far.n) == (NOT_REPRODUCED, 0.041, 5)
    assert far.extra["relation"] == "far more than"
    assert far.source_value == "0.003" and far.extra["lab_size"] == 30 and far.extra["src_size"] == 7052
    assert (claim(0.006).status, claim(0.006).extra["relation"]) == (REPRODUCED, "about as much as")
    assert (claim(0.001).status, claim(0.001).extra["relation"]) == (REPRODUCED, "less than")
    assert C.exp1_spread_claim(None, paper, pd.DataFrame(), paper_d).status == NOT_TESTABLE


# -- Experiment 2 ------------------------------------------------------------------------------


def _exp2_data(n_pairs):
    return pd.DataFrame({"pool": ["quarters"], "copies": ["all"], "n_pos": [n_pairs], "n_neg": [n_pairs]})


def test_exp2_recency_and_the_log_freq_claim_by_design():
    paper = PA.paper_exp2_tables()
    lab = {"quarters": _wide({"recency": [1.0], "log_freq": [0.5]}, ["pooled"])}
    rec = C.exp2_recency_claim(lab, paper, _exp2_data(54))
    assert (rec.status, rec.value, rec.n, rec.source_value) == (REPRODUCED, 1.0, 108, "0.996")
    assert C.exp2_recency_claim(lab, paper, _exp2_data(10)).status == INCONCLUSIVE  # 20 examples
    assert C.exp2_recency_claim({}, paper, _exp2_data(54)).status == NOT_TESTABLE
    freq = C.exp2_freq_claim(lab, paper, _exp2_data(54))
    assert (freq.status, freq.value, freq.by_design) == (REPRODUCED, 0.5, True)
    lab["quarters"].loc["log_freq", "pooled"] = 0.6
    assert C.exp2_freq_claim(lab, paper, _exp2_data(54)).status == NOT_REPRODUCED


def test_exp2_top_level_claim_needs_the_level_in_the_lab_plan():
    paper = PA.paper_exp2_tables()
    lab = {"quarters": _wide({"recency": [0.70]}, ["copies_256"])}
    data = pd.DataFrame({"pool": ["quarters"], "copies": ["256"], "n_pos": [50], "n_neg": [50]})
    # 0.70 on 50 + 50: null sd sqrt(101 / 30000) = 0.05802, z = 3.447, p = 5.7e-4
    c = C.exp2_top_level_claim(lab, paper, data, (0, 1, 4, 16, 64, 256))
    assert (c.id, c.status, c.n, c.source_value) == ("e2_recency_256", REPRODUCED, 100, "1.000")
    assert c.p == pytest.approx(5.67e-4, rel=0.02)
    none = C.exp2_top_level_claim(lab, paper, data, (64, 0, 16, 1, 4))
    assert none.status == NOT_TESTABLE
    assert none.reason == "the lab's plan has no 256-copy level (its levels: 0, 1, 4, 16, 64)"
    nopairs = C.exp2_top_level_claim({}, paper, data.iloc[:0], (0, 256))
    assert nopairs.status == NOT_TESTABLE and nopairs.reason == "no quarters pairs at 256 copies"


def _quarter_labels(extracting=("range-q4",), n=10, k=6):
    # n inserted sequences per quarter run; each run of ``extracting`` extracts the first k
    ends = {"range-q1": 0.25, "range-q2": 0.5, "range-q3": 0.75, "range-q4": 1.0}
    rows = [dict(seq_id=f"s{i}", run=r, copies=16, window_end=e, extract=int(r in extracting and i < k))
            for r, e in ends.items() for i in range(n)]
    return pd.DataFrame(rows)


QUARTERS = ("range-q1", "range-q2", "range-q3", "range-q4")


def test_exp2_order_claim_is_the_auc_of_the_window_end():
    source = PA.paper_pair_positives("quarters")
    c = C.exp2_order_claim(_quarter_labels(), QUARTERS, source)
    # positives: 6 at window end 1.0; negatives: 30 earlier and 4 at 1.0: (6 * 30 + 6 * 4 / 2) / (6 * 34)
    assert c.value == pytest.approx(192 / 204) and c.n == 40 and c.status == REPRODUCED
    assert c.extra["counts"] == [0, 0, 0, 6] and c.extra["rises"]
    assert c.extra["src_counts"] == [1, 2, 48, 4561]
    assert c.interval is not None and c.interval[0] < c.value < c.interval[1]
    early = C.exp2_order_claim(_quarter_labels(("range-q1",)), QUARTERS, source)
    assert early.status == NOT_REPRODUCED and early.value < 0.5 and not early.extra["rises"]
    none = C.exp2_order_claim(_quarter_labels(()), QUARTERS, source)
    assert none.status == INCONCLUSIVE and none.reason == "no quarter extracts anything"


def _late_counts(a, b):
    return pd.DataFrame({"pool": "late", "run": ["range-q4", "range-late"], "n_pos": [a, b], "n_neg": [b, a]})


def test_exp2_late_claim_is_a_binomial_test_in_the_source_direction():
    source = PA.paper_pair_positives("late")  # 907 against 780: the source's q4 run wins, p = 0.0021
    c = C.exp2_late_claim(_late_counts(3, 48), source)
    assert (c.status, c.n, c.value) == (NOT_REPRODUCED, 51, pytest.approx(3 / 51))
    assert c.extra["lean"] == "wide" and c.extra["src_lean"] == "q4"
    assert c.extra["src_p"] == pytest.approx(0.0021, abs=5e-5)
    # 30 of 30: p = 2 / 2**30
    won = C.exp2_late_claim(_late_counts(30, 0), source)
    assert (won.status, won.p, won.extra["lean"]) == (REPRODUCED, pytest.approx(2 / 2**30), "q4")
    assert C.exp2_late_claim(_late_counts(17, 0), source).status == INCONCLUSIVE  # 17 pairs, below 30
    assert C.exp2_late_claim(_late_counts(0, 0).iloc[:0], source).status == NOT_TESTABLE


# -- Experiment 3 ------------------------------------------------------------------------------


def _exp3_table(full, sfx, cross):
    index = pd.MultiIndex.from_tuples([(PA.THREE, "full sequence"), (PA.THREE, "suffix"),
                                       ("cross-model baseline", "—")], names=["features", "hardness"])
    return pd.DataFrame({"pooled": [full, sfx, cross]}, index=index)


def _paper3():
    return PA.load_paper_table("exp3_group").set_index(["features", "hardness"])


def test_exp3_aucs_below_chance_are_not_reproduced():
    full, sfx, cross, gap = C.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), 161, 161, _paired())
    # null sd sqrt(323 / (12 * 161**2)) = 0.03222: 0.424 is z = -2.36 (p = 0.018), 0.429 z = -2.20
    # (p = 0.028), 0.528 z = 0.87 (p = 0.38)
    assert (full.status, full.n, full.source_value) == (NOT_REPRODUCED, 322, "0.520")
    assert full.p == pytest.approx(0.0184, abs=2e-4) and sfx.p == pytest.approx(0.0276, abs=2e-4)
    assert sfx.status == NOT_REPRODUCED and sfx.source_value == "0.604"
    assert cross.status == INCONCLUSIVE and cross.p == pytest.approx(0.385, abs=2e-3)
    # an AUC of 0.42 with p = 0.01 (173 + 173: z = 0.08 / 0.03108 = 2.57) is not reproduced; the same
    # AUC on 12 + 12 examples, below the minimum of 30, is inconclusive
    low = C.exp3_auc_claim("e3_three_full", _exp3_table(0.42, 0.5, 0.5), _paper3(), 173, 173)
    assert low.status == NOT_REPRODUCED and low.p == pytest.approx(0.0100, abs=3e-4)
    small = C.exp3_auc_claim("e3_three_full", _exp3_table(0.42, 0.5, 0.5), _paper3(), 12, 12)
    assert (small.status, small.n, small.min_n) == (INCONCLUSIVE, 24, 30)
    above = C.exp3_auc_claim("e3_three_suffix", _exp3_table(0.5, 0.60, 0.5), _paper3(), 400, 400)
    assert above.status == REPRODUCED and above.value == 0.60
    assert C.exp3_auc_claim("e3_cross_model", None, _paper3(), 161, 161).status == NOT_TESTABLE
    assert gap.id == "e3_suffix_gap"


def _paired(gaps=(0.006, 0.004), se=(0.03, 0.04), sfx=(0.430, 0.428), n=322):
    sfx = np.asarray(sfx, float)
    return pd.DataFrame({"seed": range(len(gaps)), "suffix": sfx, "full": sfx - np.asarray(gaps),
                         "gap": gaps, "se": se, "n": n})


def test_exp3_gap_claim_is_a_paired_test_with_the_lab_gap_beside_the_source_gap():
    *_, gap = C.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), 161, 161, _paired())
    # mean gap (0.006 + 0.004) / 2 = 0.005; se sqrt((0.03² + 0.04²) / 2) = 0.035355, z = 0.1414,
    # p = 0.8875; interval 0.005 ± 1.96 × 0.035355 = -0.0643 to 0.0743: the source's 0.084 lies above it
    assert gap.value == pytest.approx(0.005) and gap.extra["src_gap"] == pytest.approx(0.084)
    assert gap.status == INCONCLUSIVE and gap.p == pytest.approx(0.8875, abs=2e-4) and gap.n == 322
    assert gap.interval == pytest.approx((-0.06430, 0.07430), abs=1e-4)
    assert gap.extra["src_side"] == "above" and gap.extra["sfx"] == pytest.approx(0.429)
    assert gap.source_value == "+0.084 (0.604 against 0.520)"
    # a wide gap of a fit above chance is reproduced (z = 5); a reversed one is not
    big = C.exp3_gap_claim(_paired((0.10, 0.10), (0.02, 0.02), (0.60, 0.60)), _paper3())
    assert big.status == REPRODUCED and big.extra["src_side"] == "inside"
    low = C.exp3_gap_claim(_paired((-0.10, -0.10), (0.02, 0.02), (0.45, 0.45)), _paper3())
    assert low.status == NOT_REPRODUCED and low.p == pytest.approx(5.7e-7, rel=0.01)
    # the same significant gap between two fits below chance is no evidence for the source
    under = C.exp3_gap_claim(_paired((0.10, 0.10), (0.02, 0.02), (0.45, 0.45)), _paper3())
    assert under.status == INCONCLUSIVE and "not above chance" in under.reason
    tiny = C.exp3_gap_claim(_paired(n=20), _paper3())
    assert tiny.status == INCONCLUSIVE and tiny.reason == "n = 20 is below the minimum of 30"
    assert C.exp3_gap_claim(_paired().iloc[:0], _paper3()).status == NOT_TESTABLE
    assert C.exp3_gap_claim(None, _paper3()).status == NOT_TESTABLE


def test_exp3_outcome_fails_when_a_claim_of_the_finding_fails():
    claims = C.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), 161, 161, _paired())
    assert C.exp3_outcome(claims) == NOT_REPRODUCED  # the suffix fit is below chance, p = 0.028
    ok = C.exp3_claims(_exp3_table(0.5, 0.60, 0.5), _paper3(), 400, 400,
                       _paired((0.10, 0.10), (0.02, 0.02), (0.60, 0.60)))
    assert C.exp3_outcome(ok) == REPRODUCED
    open_ = C.exp3_claims(_exp3_table(0.5, 0.60, 0.5), _paper3(), 400, 400, _paired(sfx=(0.6, 0.6)))
    assert C.exp3_outcome(open_) == INCONCLUSIVE
    assert C.exp3_outcome(C.exp3_claims(None, _paper3(), 0, 0, None)) == NOT_TESTABLE


def test_every_claim_has_a_statement_a_section_and_survives_json():
    claims = [
        *C.labels_claims(_long(10), PAPER_CONTROLS),
        *C.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), 161, 161, _paired()),
        C.exp2_late_claim(_late_counts(3, 48), PA.paper_pair_positives("late")),
        C.exp2_order_claim(_quarter_labels(), QUARTERS, PA.paper_pair_positives("quarters")),
    ]
    assert all(c.statement == X.STATEMENTS[c.id] and c.section.startswith("predicting-") for c in claims)
    assert from_json(to_json(claims)) == claims
    # the undecided order (nothing extracted) keeps plain values in its extra, too
    none = C.exp2_order_claim(_quarter_labels(()), QUARTERS, PA.paper_pair_positives("quarters"))
    assert from_json(to_json([none])) == [none]
    assert set(X.STATEMENTS) == {
        "controls_extracted", "partial_learning", "e1_three", "e1_freq_beats_hardness", "e1_seed_spread",
        "e2_recency", "e2_log_freq_constant", "e2_window_order", "e2_late_pool", *C.EXP3_ROWS,
        "e3_suffix_gap", "e1_inserted_three", "e2_recency_256"}
