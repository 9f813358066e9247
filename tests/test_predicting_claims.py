"""The predicting chapter's claims, decided on small hand-computed fixtures: status, value, n and p."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.core.claim_text import counts_sentence
from analysis.core.claims import (
    HOLDS,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    from_json,
    to_json,
)
from analysis.predicting import claims as C
from analysis.predicting import claims_exp3 as C3
from analysis.predicting import params as PA
from analysis.predicting import text as X
from analysis.stats.result import Estimate

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


def test_controls_claim_zero_extracted_is_inconclusive_unless_the_interval_excludes_the_source():
    # 10 copies of the toy: 40 controls (rows are the units here: no seq_id), none extracted;
    # Clopper-Pearson's 95% upper bound on 0 of 40 is 1 - 0.025 ** (1 / 40) = 0.0881
    c = C.controls_claim(_long(10), PAPER_CONTROLS)
    assert (c.status, c.value, c.n, c.n_units, c.min_n) == (INCONCLUSIVE, 0.0, 40, 40, 30)
    assert c.interval == pytest.approx((0.0, 1 - 0.025 ** (1 / 40)), abs=1e-6)
    assert c.source_value == "563 controls extracted in 2 of 3 sets" and c.section == "predicting-labels"
    assert c.control_reason and c.null_kind == "analytic" and c.unit == "sequences"
    # the source's rate, estimated from its table (1b-100b: 301 / (301 + 1798 * 76978 / 3526)), is held
    # against the interval: 0 of 4,000 controls (upper bound 0.00092) excludes the smallest, 0.0017
    paper = PA.load_paper_table("exp1_dataset")
    assert C.source_control_rate(paper.iloc[:1]) == pytest.approx(301 / (301 + 1798 * 76978 / 3526))
    many = C.controls_claim(_long(1000), paper)
    assert many.status == NOT_REPRODUCED and "excludes the source's" in many.reason
    # 0 of 40 does not exclude 0.0017: inconclusive, not "not reproduced"
    assert C.controls_claim(_long(10), paper).status == INCONCLUSIVE
    leaky = _long(10)
    leaky.loc[[0, 1], "extract"] = 1
    c = C.controls_claim(leaky, PAPER_CONTROLS)
    assert (c.status, c.value, c.extra["extracted"]) == (REPRODUCED, 2 / 40, 2)
    # the control sequences are the units: 4 sequences scored under 10 targets are 4 units
    per_seq = _long(10).assign(seq_id=lambda f: "s" + (f.index % 12).astype(str))
    assert C.controls_claim(per_seq, PAPER_CONTROLS).n_units == 4
    assert C.controls_claim(_long().query("copies > 0"), PAPER_CONTROLS).status == NOT_TESTABLE


def test_partial_learning_is_an_extension_against_a_permutation_null_and_the_twin_control():
    # 4 reps: 16 unextracted-cell values {0.4..0.7} all above 16 control values {0..0.15}; rows are
    # the units (no seq_id). Difference of means 0.55 - 0.075 = 0.475, above every permuted draw:
    # the two-sided p is 2 / 201
    c = C.partial_learning_claim(_long(4))
    assert c.kind == "extension" and c.status == HOLDS and c.value == pytest.approx(0.475)
    assert c.p == pytest.approx(2 / 201) and c.null_kind == "permutation" and abs(c.null_value) < 0.2
    assert (c.n, c.n_units) == (32, 32) and c.control_reason
    # two reps: 16 units, below the minimum of 30
    assert C.partial_learning_claim(_long(2)).status == INCONCLUSIVE
    # a standard twin with the same accuracies shows the same effect: mechanical
    twin = _long(4).assign(twin_suffix_acc=lambda f: f["suffix_acc"])
    m = C.partial_learning_claim(twin)
    assert m.status == INCONCLUSIVE and m.mechanical and m.control_value == pytest.approx(0.475)
    flat = _long(4).assign(twin_suffix_acc=0.3)
    assert C.partial_learning_claim(flat).status == HOLDS
    assert C.partial_learning_claim(_long().query("copies != 4")).status == NOT_TESTABLE
    assert C.partial_learning_claim(_long().query("copies != 0")).status == NOT_TESTABLE


# -- Experiment 1 ------------------------------------------------------------------------------


def _wide(rows: dict, targets):
    return pd.DataFrame(rows, index=targets, dtype=float).T


def _null(value, median, p, n=300, n_units=None):
    return Estimate(value, median - 0.05, median + 0.05, p=p, n=n, n_units=n_units or n, method="permutation",
                    null_value=median, n_null=200)


def test_exp1_three_is_held_against_its_permutation_null_with_the_random_baseline_as_control():
    paper = PA.load_paper_table("exp1_random").set_index("features")
    lab = _wide({PA.THREE: [0.907], "random baseline": [0.52]}, ["8b-500b"])
    data = pd.DataFrame({"target": ["8b-500b"], "test_n": [46], "test_pos": [23]})
    c = C.exp1_three_claim(lab, paper, data, "8b-500b", _null(0.907, 0.5, 2 / 201))
    assert (c.status, c.n, c.n_units, c.null_kind, c.null_value) == (REPRODUCED, 46, 46, "permutation", 0.5)
    assert c.source_value == "0.883 (8b-500b)" and c.control_value == pytest.approx(0.52)
    # a random baseline far above chance (0.95 on 23 + 23: p < 1e-6) shows the effect: mechanical
    leaky = C.exp1_three_claim(lab.assign(**{"8b-500b": [0.907, 0.95]}), paper, data, "8b-500b",
                               _null(0.907, 0.5, 2 / 201))
    assert leaky.status == INCONCLUSIVE and leaky.mechanical
    # below the null but not significant: inconclusive, not "not reproduced"
    low = C.exp1_three_claim(_wide({PA.THREE: [0.45]}, ["8b-500b"]), paper, data, "8b-500b",
                             _null(0.45, 0.5, 0.3))
    assert low.status == INCONCLUSIVE
    few = C.exp1_three_claim(lab, paper, data.assign(test_n=20, test_pos=10), "8b-500b",
                             _null(0.9, 0.5, 0.01))
    assert few.status == INCONCLUSIVE
    assert C.exp1_three_claim(None, paper, data, "8b-500b", None).status == NOT_TESTABLE


def test_exp1_inserted_claim_tests_the_source_direction_without_a_source_number():
    paper = PA.load_paper_table("exp1_random").set_index("features")
    lab = _wide({PA.THREE: [0.60]}, ["8b-500b"])
    data = pd.DataFrame({"target": ["8b-500b"], "test_n": [200], "test_pos": [100]})
    c = C.exp1_inserted_claim(lab, paper, data, "8b-500b", _null(0.6, 0.5, 0.01))
    assert (c.id, c.status, c.n) == ("e1_inserted_three", REPRODUCED, 200)
    assert c.extra["src_all"] == pytest.approx(0.883) and c.control_reason
    assert c.source_value == ("not printed (the source's out/fit_balanced_report.txt (subset=inserted)); "
                              "with every sequence 0.883 (8b-500b)")
    assert C.exp1_inserted_claim(_wide({PA.THREE: [0.40]}, ["8b-500b"]), paper, data, "8b-500b",
                                 _null(0.4, 0.5, 0.01)).status == NOT_REPRODUCED
    assert C.exp1_inserted_claim(None, paper, data, "8b-500b", None).status == NOT_TESTABLE


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
    # 1 of 6 lies on the other side, but p = 14 / 64 = 0.22 is not significant: inconclusive
    assert one.status == INCONCLUSIVE and one.value == pytest.approx(1 / 6)
    assert one.p == pytest.approx(14 / 64)
    assert (one.null_kind, one.unit, one.n_units) == ("analytic", "targets", 6)
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
    null = {"recency": _null(1.0, 0.5, 2 / 201, n=108, n_units=54), "log_freq": _null(0.5, 0.5, 1.0, n=108)}
    rec = C.exp2_recency_claim(lab, paper, _exp2_data(54), null)
    assert (rec.status, rec.value, rec.n, rec.n_units) == (REPRODUCED, 1.0, 108, 54)
    assert rec.source_value == "0.996"
    assert rec.control_value == 0.5 and rec.null_kind == "permutation"
    small = {"recency": _null(1.0, 0.5, 2 / 201, n=20, n_units=10)}
    assert C.exp2_recency_claim(lab, paper, _exp2_data(10), small).status == INCONCLUSIVE  # 10 sequences
    assert C.exp2_recency_claim({}, paper, _exp2_data(54), null).status == NOT_TESTABLE
    freq = C.exp2_freq_claim(lab, paper, _exp2_data(54))
    assert (freq.status, freq.value, freq.by_design) == (REPRODUCED, 0.5, True)
    assert "constant within every pair" in freq.by_design_reason and freq.null_kind == "target"
    lab["quarters"].loc["log_freq", "pooled"] = 0.6
    assert C.exp2_freq_claim(lab, paper, _exp2_data(54)).status == NOT_REPRODUCED  # exact: no sampling error


def test_exp2_top_level_claim_needs_the_level_in_the_lab_plan():
    paper = PA.paper_exp2_tables()
    lab = {"quarters": _wide({"recency": [0.70]}, ["copies_256"])}
    data = pd.DataFrame({"pool": ["quarters"], "copies": ["256"], "n_pos": [50], "n_neg": [50]})
    c = C.exp2_top_level_claim(lab, paper, data, (0, 1, 4, 16, 64, 256),
                               null={"recency": _null(0.7, 0.5, 0.005, n=100, n_units=50)})
    assert (c.id, c.status, c.n, c.n_units) == ("e2_recency_256", REPRODUCED, 100, 50)
    assert c.source_value == "1.000"
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


def test_exp2_order_claim_is_the_auc_of_the_window_end_against_a_within_sequence_null():
    from analysis.predicting.nulls import window_null

    source = PA.paper_pair_positives("quarters")
    labels = _quarter_labels(n=40, k=24)
    null = window_null(labels, QUARTERS)
    c = C.exp2_order_claim(labels, QUARTERS, source, null)
    # positives: 24 at window end 1.0; negatives: 120 earlier and 16 at 1.0:
    # (24 * 120 + 24 * 16 / 2) / (24 * 136)
    assert c.value == pytest.approx(3072 / 3264) and (c.n, c.n_units) == (160, 40) and c.status == REPRODUCED
    assert c.null_kind == "permutation" and c.null_value < 0.6 and c.p == pytest.approx(2 / 201)
    assert c.extra["counts"] == [0, 0, 0, 24] and c.extra["rises"]
    assert c.extra["src_counts"] == [1, 2, 48, 4561]
    assert c.interval is not None and c.interval[0] <= c.value <= c.interval[1]
    assert "never-inserted" in c.control_reason
    early = _quarter_labels(("range-q1",), n=40, k=24)
    e = C.exp2_order_claim(early, QUARTERS, source, window_null(early, QUARTERS))
    assert e.status == NOT_REPRODUCED and e.value < 0.5 and not e.extra["rises"]
    none = C.exp2_order_claim(_quarter_labels(()), QUARTERS, source, None)
    assert none.status == NOT_TESTABLE and none.reason == "no quarter extracts anything"


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


def _null3(full=(0.406, 0.39, 0.6), sfx=(0.424, 0.39, 0.4), cross=(0.541, 0.39, 0.02),
           log_freq=(0.392, 0.39, 0.95), gap=(0.018, 0.0, 0.6), n=230, n_units=60):
    out = {k: _null(*v, n=n, n_units=n_units) for k, v in
           dict(full=full, suffix=sfx, cross=cross, log_freq=log_freq, gap=gap).items()}
    out["n_cells"] = Estimate(10.0, n=n, n_units=n_units)
    return out


def _paired(gaps=(0.006, 0.004), se=(0.03, 0.04), sfx=(0.430, 0.428), n=322):
    sfx = np.asarray(sfx, float)
    return pd.DataFrame({"seed": range(len(gaps)), "suffix": sfx, "full": sfx - np.asarray(gaps),
                         "gap": gaps, "se": se, "n": n})


def _cells(n_seq=24, seed=1):
    # two targets x two copy levels; log_freq is constant within every cell, the other features noise
    rng = np.random.default_rng(seed)
    rows = [dict(target=t, copies=c, seq_id=f"s{i}", task=f"k{i % 3}", extract=int(rng.random() < 0.5),
                 last_step=int(rng.integers(0, 100)), T=100, log_freq=np.log1p(c), recency=rng.random(),
                 hardness=rng.normal(), hardness_sfx=rng.normal(), cross_model=rng.random())
            for t in ("A", "B") for i in range(n_seq) for c in [(16, 24)[i % 2]]]
    return pd.DataFrame(rows)


def test_a_constant_feature_lands_below_half_under_the_group_split_and_is_not_below_chance():
    from analysis.predicting import nulls as N
    from analysis.predicting import steps as ST

    cells, bins = _cells(), {"A": 50, "B": 50}
    # the fast matcher draws what match_cells draws
    m = N._Matcher(cells, bins)
    for s in (0, 1):
        ref = ST.match_cells(cells, bins, s)
        got = m.cells.iloc[m.rows(cells["extract"].to_numpy(), s)]
        assert list(ref["seq_id"] + ref["target"]) == list(got["seq_id"] + got["target"])
    null = N.exp3_null(cells, bins, seeds=[0])
    table = ST.exp3_aucs(cells, bins, [0], splits=("group",))["group"]["pooled"]
    table = table.set_index(["features", "hardness"])
    # the observed statistics are the table's
    assert null["full"].value == pytest.approx(table.loc[(PA.THREE, "full sequence"), "auc"])
    assert null["log_freq"].value == pytest.approx(table.loc[("log_freq", "—"), "auc"])
    # log_freq carries no signal within a balanced cell, yet its pooled out-of-fold AUC and its null sit
    # below 0.5: the folds of a balanced set are unbalanced the other way
    assert null["log_freq"].value < 0.5 and null["log_freq"].null_value < 0.5
    assert null["full"].null_value < 0.5
    assert null["full"].n_null == 200
    assert null["full"].n_units == ST.match_cells(cells, bins, 0)["seq_id"].nunique()
    # a claim at log_freq's value is held against the null's median, not 0.5: not "below chance"
    lf = null["log_freq"]
    as_full = dict(null, full=Estimate(lf.value, lf.lo, lf.hi, p=lf.p, n=lf.n, n_units=30,
                                       method="permutation",
                                       null_value=lf.null_value, n_null=lf.n_null))
    c = C3.exp3_auc_claim("e3_three_full", _exp3_table(lf.value, 0.5, 0.5), _paper3(), as_full)
    assert lf.p > 0.05 and c.status == INCONCLUSIVE and c.null_value == lf.null_value
    assert c.status != NOT_REPRODUCED and "below chance" not in X.render(c)


def test_exp3_aucs_are_held_against_their_permutation_null():
    full, sfx, cross, gap = C3.exp3_claims(_exp3_table(0.406, 0.424, 0.541), _paper3(), _paired(), _null3())
    # 0.406 and 0.424 lie above a null of 0.39, not significantly: inconclusive, not "below chance"
    assert (full.status, full.n, full.n_units, full.source_value) == (INCONCLUSIVE, 230, 60, "0.520")
    assert full.null_kind == "permutation" and full.null_value == 0.39 and full.control_value == 0.392
    assert sfx.status == INCONCLUSIVE and sfx.source_value == "0.604"
    assert "below chance" not in X.render(full) and "not told from its permutation null" in X.render(full)
    # 0.541 with p = 0.02: above its null; log_freq (0.392, p = 0.95) does not show it
    assert cross.status == REPRODUCED and not cross.mechanical
    # a control significantly above the null in the same direction makes the claim mechanical
    mech = C3.exp3_auc_claim("e3_cross_model", _exp3_table(0.5, 0.5, 0.541), _paper3(),
                            _null3(log_freq=(0.47, 0.39, 0.01)))
    assert mech.status == INCONCLUSIVE and mech.mechanical and mech.control_value == 0.47
    below = C3.exp3_auc_claim("e3_three_full", _exp3_table(0.30, 0.5, 0.5), _paper3(),
                             _null3(full=(0.3, 0.39, 0.01)))
    assert below.status == NOT_REPRODUCED
    small = C3.exp3_auc_claim("e3_three_full", _exp3_table(0.6, 0.5, 0.5), _paper3(), _null3(n_units=12))
    assert (small.status, small.n_units, small.min_n) == (INCONCLUSIVE, 12, 30)
    assert C3.exp3_auc_claim("e3_cross_model", None, _paper3(), _null3()).status == NOT_TESTABLE
    assert gap.id == "e3_suffix_gap"


def test_exp3_gap_claim_is_against_its_permutation_null_with_delong_beside_it():
    *_, gap = C3.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), _paired(), _null3())
    # mean gap (0.006 + 0.004) / 2 = 0.005; DeLong: se sqrt((0.03² + 0.04²) / 2) = 0.035355, interval
    # 0.005 ± 1.96 × 0.035355 = -0.0643 to 0.0743, shown but not held against the source's 0.084
    assert gap.value == pytest.approx(0.005) and gap.extra["src_gap"] == pytest.approx(0.084)
    assert gap.status == INCONCLUSIVE and gap.p == 0.6 and gap.null_value == 0.0 and gap.n_units == 60
    assert (gap.extra["delong_lo"], gap.extra["delong_hi"]) == pytest.approx((-0.06430, 0.07430), abs=1e-4)
    assert gap.extra["src_side"] == "above" and gap.extra["sfx"] == pytest.approx(0.429)
    assert gap.source_value == "+0.084 (0.604 against 0.520)"
    big = C3.exp3_gap_claim(_paired((0.10, 0.10), (0.02, 0.02), (0.60, 0.60)), _paper3(),
                           _null3(gap=(0.1, 0.0, 0.005)))
    assert big.status == REPRODUCED
    low = C3.exp3_gap_claim(_paired((-0.10, -0.10), (0.02, 0.02), (0.45, 0.45)), _paper3(),
                           _null3(gap=(-0.1, 0.0, 0.005)))
    assert low.status == NOT_REPRODUCED
    assert C3.exp3_gap_claim(_paired(), _paper3(), _null3(n_units=20)).status == INCONCLUSIVE
    assert C3.exp3_gap_claim(_paired().iloc[:0], _paper3(), _null3()).status == NOT_TESTABLE
    assert C3.exp3_gap_claim(None, _paper3(), None).status == NOT_TESTABLE


def test_exp3_outcome_and_the_source_counts():
    claims = C3.exp3_claims(_exp3_table(0.30, 0.30, 0.5), _paper3(), _paired(),
                           _null3(sfx=(0.30, 0.39, 0.01)))
    assert C3.exp3_outcome(claims) == NOT_REPRODUCED
    ok = C3.exp3_claims(_exp3_table(0.5, 0.60, 0.5), _paper3(),
                       _paired((0.10, 0.10), (0.02, 0.02), (0.60, 0.60)),
                       _null3(sfx=(0.6, 0.39, 0.005), gap=(0.1, 0.0, 0.005)))
    assert C3.exp3_outcome(ok) == REPRODUCED
    assert C3.exp3_outcome(C3.exp3_claims(_exp3_table(0.406, 0.424, 0.541), _paper3(), _paired(), _null3())) \
        == INCONCLUSIVE
    assert C3.exp3_outcome(C3.exp3_claims(None, _paper3(), None, None)) == NOT_TESTABLE
    text = counts_sentence(ok + [C.partial_learning_claim(_long(4))])  # the extension counted apart
    assert text.startswith("Of this chapter's 4 claims a source makes, 3 reproduced, 0 not reproduced, "
                           "1 inconclusive, 0 not testable here; besides, 1 claim of the book's own: ")


def test_every_claim_has_a_statement_a_section_a_unit_and_survives_json():
    claims = [
        *C.labels_claims(_long(10), PAPER_CONTROLS),
        *C3.exp3_claims(_exp3_table(0.424, 0.429, 0.528), _paper3(), _paired(), _null3()),
        C.exp2_late_claim(_late_counts(3, 48), PA.paper_pair_positives("late")),
        C.exp2_order_claim(_quarter_labels(), QUARTERS, PA.paper_pair_positives("quarters")),
    ]
    assert all(c.statement == X.STATEMENTS[c.id] and c.section.startswith("predicting-") for c in claims)
    assert all(c.unit and (c.control_value is not None or c.control_reason) for c in claims)
    assert from_json(to_json(claims)) == claims
    assert set(X.STATEMENTS) == {
        "controls_extracted", "partial_learning", "e1_three", "e1_freq_beats_hardness", "e1_seed_spread",
        "e2_recency", "e2_log_freq_constant", "e2_window_order", "e2_late_pool", *C3.EXP3_ROWS,
        "e3_suffix_gap", "e1_inserted_three", "e2_recency_256", *C3.EXP3_TASK_ROWS, "e1_hardness_adds_little",
        "e1_three_vs_cross_model"}
