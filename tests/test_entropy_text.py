"""The entropy chapter's English (:mod:`analysis.entropy.text`): a few exact wordings
(a claim's rendering, the setup and linearity paragraphs), and that each sentence
turns with the decision it reads from a claim rather than deciding again."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

from analysis.core import prose
from analysis.core.claims import INCONCLUSIVE, REPRODUCED, Claim, not_testable
from analysis.entropy import claims as K
from analysis.entropy import text as _text
from analysis.entropy import text_di as _text_di
from analysis.entropy.method_sets import Inference, Stream, di_table
from analysis.entropy.params import PARAMS, load_paper_table
from analysis.stats.lines import Fit
from entropy_fakes import fake_set, scored_frame

#: the chapter's English, both modules
T = types.SimpleNamespace(**vars(_text_di),
                          **{k: v for k, v in vars(_text).items() if k not in vars(_text_di)})
INST = {"entropy": Fit(0.1, 0.0, 0.2, 0.0, 100)}


def claim(id="pooling", value=0.5, **kw):
    """A claim of ``id`` with a chosen value and extras."""
    kw.setdefault("status", REPRODUCED)
    kw.setdefault("reason", "by hand")
    kw.setdefault("unit", "level sets")
    kw.setdefault("control_reason", "none applies")
    if id.startswith("mia_") or id == "score_over_size":
        kw.setdefault("kind", "extension")
        words = {"reproduced": "holds", "not reproduced": "does not hold"}
        kw["status"] = words.get(kw["status"], kw["status"])
    else:
        kw.setdefault("source_value", "the source's value")
    return Claim(id=id, chapter="entropy", statement=T.STATEMENTS[id], comparison="—", value=value, **kw)


def untestable(id):
    return not_testable(id, "entropy", T.STATEMENTS[id], "no line", unit="level sets",
                        source_value="the source's value")


# -- exact wording ---------------------------------------------------------------------------------


def test_a_claim_renders_its_status_evidence_source_and_reason():
    c = claim("em_linearity", 0.711, status="not testable here", reason="the source's r is on 1B–7B models",
              interval=(0.685, 0.733), p=0.0196, n=17, n_units=17, null_kind="permutation", null_value=0.52,
              source_value="r > 0.9 on every model; 0.926 to 0.944 (Table 4)")
    assert T.render(c) == (
        "**Not testable here**: the source's r is on 1B–7B models. Pooled into level sets, the entropy is "
        "linear in the memorization score, with Pearson r above 0.9 on every model (the EM Linearity). "
        "This run: r = 0.711 [0.685, 0.733]; the source: r > 0.9 on every model; 0.926 to 0.944 (Table 4). "
        "Evidence: 17 level sets; a permutation null at 0.52; no negative control (none applies).")
    di = claim("di_lab", 12 / 16, status=INCONCLUSIVE, p=0.0574, n=16, interval=(0.52, 0.92),
               extra={"right": 12, "decided": 15, "undecided": 1, "total": 16})
    assert ("This run: share called right = 75.0% [52.0%, 92.0%] (12 of 16 right; 1 undecided, counted as "
            "misses)") in T.render(di)
    by_design = claim("intercept_slope_opposed", -1.0, by_design=True, by_design_reason="any data")
    assert T.render(by_design).startswith("**Reproduced** (by design: any data): ")
    assert "This run: no value" in T.render(untestable("normalized_falls"))


def test_setup_sentences():
    t4 = load_paper_table("table4")
    assert T.setup_sentences(PARAMS.resolve("smoke"), t4) == (
        "The lab uses |p| + |s| = 8 + 8, a 1 : 1 split, where the source uses 2 : 1. "
        "The real models use 16 + 16 and decode greedily. "
        "The source's Table 4 finds nearly the same r greedily (0.933) as at its main temperature of 0.8 "
        "(0.926). The `paper` profile runs the real models at 100 + 50, at temperature 0.8, "
        "with 1,500 pairs per set.")
    assert "The real models use the same lengths" in T.setup_sentences(PARAMS.resolve("default"), t4)
    assert "finds a different r greedily (0.500)" in T.greedy_sentence(t4.assign(r=[0.5] + [0.9] * 5))


def test_linearity_sentences_read_the_linearity_and_zlib_claims():
    boot = {"slope": [0.5] * 4, "intercept": [2.0] * 4, "r": [0.91, 0.95, 0.95, 0.99]}
    main = fake_set("greedy", intercept=2.0, slope=-0.25, r=0.95, boot=boot)
    main.zlib_fit = Fit(0.1, 0.2, 0.97, 0.0, 3)
    other = fake_set("t", intercept=1.0, r=0.5)
    c = {"em_linearity": K._linearity(main, pd.DataFrame({"r_entropy": [0.5] * 200})),
         "entropy_beats_zlib": claim("entropy_beats_zlib", -0.02, extra={"stronger": "zlib"})}
    # r's bootstrap has median 0.95, the estimate, so re-centring keeps it; its 2.5% and 97.5% points
    # interpolate to 0.91 + 0.075 x 0.04 = 0.913 and 0.95 + 0.925 x 0.04 = 0.987
    text = T.linearity_sentences(main, "temperature 0.8", other, c["em_linearity"], c["entropy_beats_zlib"])
    assert text == (
        "Pooled into 3 level sets, the entropy falls with the score along a line with r = 0.950 "
        "(bootstrap 95% interval 0.913 to 0.987), above the 0.9 the source reports on every model. "
        "The line is M_ent(s_e) ≈ 2.00 − 0.250·e bits. Under temperature 0.8 decoding r = 0.500. "
        "The zlib ratio of the same level sets gives r = 0.970: by r, the zlib line is the stronger here.")
    low = fake_set("g", intercept=2.0, r=0.5)
    c = {"em_linearity": K._linearity(low, pd.DataFrame({"r_entropy": [0.5] * 200})),
         "entropy_beats_zlib": claim("entropy_beats_zlib", 0.0, extra={})}
    text = T.linearity_sentences(low, "x", other, c["em_linearity"], c["entropy_beats_zlib"])
    assert "r = 0.500 (no bootstrap interval), below the 0.9" in text
    none = fake_set("g", es=(4, 5))
    c = {"em_linearity": K._linearity(none, pd.DataFrame({"r_entropy": [0.5] * 200})),
         "entropy_beats_zlib": claim("entropy_beats_zlib", None, extra={})}
    text = T.linearity_sentences(none, "x", fake_set("t"), c["em_linearity"], c["entropy_beats_zlib"])
    assert text.startswith("The main sample falls into 2 level sets, too few for a line")
    assert text.endswith("by r, one of the two has no line, so they cannot be compared here.")


# -- sentences read the claims' decisions ---------------------------------------------------------


def test_low_scores_and_verbatim_sentences_turn_with_their_claims():
    stream = Stream(tokens={}, copies={}, left_out={}, source={"b": "background", "i": "injected"})
    scored = scored_frame([("i", 0, False), ("i", 1, False), ("b", 4, False), ("b", 4, False)])
    rarer = T.low_score_sentence(scored, stream, claim("low_scores_rarer", 0.4))
    assert rarer.startswith("2 of 4 kept pairs score below |s|/2 = 2 edits, and all of them come from the "
                            "inserted sequences.")
    assert rarer.endswith("Low scores are rarer than high ones, as in the source, where they are "
                          "exponentially rarer.")
    assert "Low scores are not rarer than high ones here" in T.low_score_sentence(
        scored, stream, claim("low_scores_rarer", 0.5))
    none = T.low_score_sentence(scored_frame([("b", 4, False)]), stream, claim("low_scores_rarer", 0.0))
    assert none.startswith("No kept pair scores below |s|/2 = 2 edits")
    greedy = scored_frame([("b", 0, False)] + [("b", 4, False)] * 19)  # 1 of 20: 5%, "some"
    assert T.verbatim_sentence({"greedy": greedy}).startswith(
        "The lab model reproduces some of its training stream verbatim: under greedy decoding 1 of 20 kept")
    nothing = T.verbatim_sentence({"t": scored_frame([("b", 4, False)])})
    assert nothing.startswith("The lab model reproduces nothing")


def test_the_set_size_and_normalized_sentences_turn_with_their_claims():
    size = claim("score_over_size", -0.56, extra={"r_size": 0.96, "r_score": 0.4, "closer": True})
    verbatim = claim("verbatim_rarer", 0.8, extra={"verbatim": 8, "low_min": 2, "low_max": 2, "low_top": 5})
    text = T.set_size_sentence(size, verbatim)
    assert "at r = 0.96, more closely than it follows the score (r = 0.400)" in text
    assert "The verbatim set (e = 0) holds 8 pairs and the sets at e = 1 to 5 hold 2 to 2 each" in text
    assert text.endswith("whereas in the source low scores are exponentially rarer than high ones.")
    rare = T.set_size_sentence(claim("score_over_size", 0.5, extra={"r_size": 0.4, "r_score": 0.99,
                                                                    "closer": False}),
                               claim("verbatim_rarer", 0.2, extra=verbatim.extra))
    assert "less closely than" in rare
    assert rare.endswith("verbatim answers are rarer than partly memorized ones.")
    none = T.set_size_sentence(untestable("score_over_size"), verbatim)
    assert none.startswith("With fewer than 3 level sets")
    assert "falls with e here (r = -0.800), as in the source" in T.normalized_sentence(
        claim("normalized_falls", -0.8, extra={"slope": -0.01}))
    rising = T.normalized_sentence(claim("normalized_falls", 0.6, extra={"slope": 0.02}))
    assert "does not fall with e here (r = 0.600, slope 0.0200), unlike the source" in rising
    assert T.normalized_sentence(untestable("normalized_falls")).startswith("The normalized entropy has no")


def test_the_length_strategy_and_sample_size_sentences_turn_with_their_claims():
    every = {"total": 3, "with_line": 2, "above": 1, "r_min": 0.85, "r_max": 0.95}
    assert T.length_r_sentence(claim("r_every_length", 0.85, extra=every)).startswith(
        "Across answer lengths, r ranges from 0.85 to 0.95 (1 of 3 lengths have no line): "
        "above 0.9 at 1 of 3 lengths.")
    all_above = claim("r_every_length", 0.91, extra={**every, "with_line": 3, "above": 3})
    assert ": above 0.9 at every length." in T.length_r_sentence(all_above)
    no_line = claim("r_every_length", None, extra={**every, "with_line": 0})
    assert T.length_r_sentence(no_line).startswith("No answer length gives a line here")
    table = pd.DataFrame({"set": ["|s| = 4", "|s| = 8"], "intercept": [1.0, 2.0]})
    for trend, words in T.TREND_WORDS.items():
        c = claim("intercept_grows_with_length", 1.0, extra={"trend": trend})
        assert T.intercept_trend_sentence(table, c) == f"{words}: 1.00 at |s| = 4, 2.00 at |s| = 8."
    assert T.intercept_trend_sentence(table, untestable("intercept_grows_with_length")).startswith(
        "Here the trend cannot be read")
    ends = {"lo": 3.0, "hi": 3.8, "missing": 1, "total": 3, "holds": True}
    holds = T.end_entropy_sentence(claim("same_end_entropy", 0.8, extra=ends))
    assert ("holds here too: the level set at e = |s| has 3.0 to 3.8 bits across lengths "
            "(1 of 3 lengths have no level set at e = |s|)") in holds
    fails = T.end_entropy_sentence(claim("same_end_entropy", 1.5, extra={**ends, "holds": False}))
    assert "does not hold here" in fails
    strategies = pd.DataFrame({"paper r": [0.933, 0.936]})
    one_line = claim("r_every_strategy", 0.95, extra={**every, "total": 2, "with_line": 1})
    text = T.strategy_sentence(strategies, one_line)
    assert text == ("On the lab model r ranges from 0.85 to 0.95 across the 2 strategies (1 of 2 have no "
                    "line): it is above 0.9 under 1 of 2, where the source's r is at least 0.933 under every "
                    "strategy.")
    sens = pd.DataFrame({"size": [10] * 11 + [20] * 11, "intercept": list(np.arange(11.0)) * 2})
    spread, lower = claim("small_samples_spread", 7.2), claim("small_samples_lower", -5.5)
    text = T.sample_size_sentence(sens, spread, lower)
    assert text.startswith("Small samples move the intercept more than large ones")
    assert "lower at the smallest size, as in the source, where it falls from a plateau towards −6" in text
    spread, lower = claim("small_samples_spread", -1.0), claim("small_samples_lower", 1.0)
    text = T.sample_size_sentence(sens, spread, lower)
    assert "Here small samples do not move" in text and "not lower at the smallest size, unlike" in text


def test_dataset_inference_sentences():
    slopes = np.linspace(0, 1, 101)  # a bootstrap 95% interval of width 0.95
    boot = {"slope": slopes, "intercept": 5 - 4 * slopes, "r": [0.9] * 101}
    a = fake_set("a", intercept=3.0, boot=boot, es=(2, 4, 6))  # mean score 4: 0.95 x 4 = 3.8 bits
    b = fake_set("b", intercept=1.0, boot=boot, es=(3, 4, 5, 8))
    table = pd.DataFrame({"kind": "lab", "role": ["reference", "candidate"], "correct": [1, 0],
                          "level sets": [3, 4]})
    inf = Inference("m", {"a": a, "b": b}, table)
    text = T.extrapolation_sentence([inf], table)
    assert text.startswith("Why the rule does no better here: in every lab set the lowest populated score "
                           "is 2")
    # "b" has mean score 5: 0.95 x 5 = 4.75; the median of 3.8 and 4.75 is 4.275
    assert text.endswith("moves the intercept by 4.3 bits (median over the lab's sets).")
    assert T.extrapolation_sentence([inf], table.assign(correct=1)).startswith("Right or wrong")
    opposed = claim("intercept_slope_opposed", -1.0, n=2, extra={"how": "opposite"})
    assert T.intercept_slope_sentence(opposed).startswith(
        "Within a set, the bootstrap's intercepts and slopes move in opposite directions "
        "(median r = -1.00 over 2 sets), as the source notes")
    together = claim("intercept_slope_opposed", 1.0, n=1, extra={"how": "together"})
    assert "move in the same direction" in T.intercept_slope_sentence(together)
    none = T.intercept_slope_sentence(untestable("intercept_slope_opposed"))
    assert none.startswith("No set has enough")
    pooled = T.pooling_sentence(claim("pooling", 0.73, extra={"r_instance": 0.2, "r_set": 0.93}))
    assert pooled.endswith("at r = 0.930: pooling strengthens the relation, as the source's central "
                           "contrast says.")
    weaker = T.pooling_sentence(claim("pooling", -0.1, extra={"r_instance": 0.2, "r_set": 0.1}))
    assert weaker.endswith("pooling does not strengthen the relation here, against the source's central "
                           "contrast.")
    no_line = not_testable("pooling", "entropy", "s", "w", extra={"r_instance": 0.2}, unit="level sets",
                           source_value="s")
    assert T.pooling_sentence(no_line).endswith("so pooling cannot be judged here.")


def test_counts_taus_and_model_lines():
    rows = pd.DataFrame({"model": ["m"] * 3 + ["n"] * 3, "set": ["ref", "x", "y"] * 2,
                         "role": ["reference", "candidate", "candidate"] * 2, "truth": [1, 0, 1] * 2,
                         "prediction": [1, 0, np.nan] * 2, "tau": [5.0] * 3 + [np.nan] * 3,
                         "agreement": [np.nan, 0.97, np.nan] * 2, "kind": ["lab"] * 3 + ["real"] * 3,
                         "r": [0.95, 0.9, np.nan] * 2, "intercept": [1.0, 2.0, np.nan] * 2,
                         "intercept lo": [0.5, 1.5, np.nan] * 2, "intercept hi": [1.5, 2.5, np.nan] * 2,
                         "level sets": [5, 4, 2] * 2})
    di = di_table([Inference("m", {}, rows.iloc[:3]), Inference("n", {}, rows.iloc[3:])])
    # an undecided set is counted apart in the tallies, never as wrong
    assert T.correct_count(di) == "2 of 4 (2 undecided, counted as misses)"
    assert T.correct_count(di, "lab") == "1 of 2 (1 undecided, counted as misses)"
    assert T.correct_count(di[di["prediction"].notna()], "lab") == "1 of 1"
    assert T.paper_correct_count(load_paper_table("table1")) == "8 of 10"
    assert T.tau_sentence(di) == ("This run's τ is 5.00 for m; undefined for n (its reference set has no "
                                  "line).")
    assert T.agreement_sentence(di).startswith("2 of 2 calls are made by at least 95%")
    lines = T.model_lines(di, "real")
    assert lines.startswith("**n**: ref: r = 0.95, intercept 1.00 [0.50, 1.50]")
    assert "y: no line (2 level sets)" in lines
    assert T.model_lines(di, "api") == "No model of this kind was run."


def test_the_methods_constants_and_small_phrases():
    c = T.method_constants()
    assert (c["paper_min_r"], c["paper_tau_pythia"], c["paper_tau_olmo"]) == ("0.9", "0", "3")
    assert (c["di_quantile"], c["di_coverage"], c["paper_min_di"]) == ("5th", "95%", "1,500")
    assert c["paper_small_intercept"] == "−6" and c["paper_table4_pairs"] == "28,000"
    assert [prose.ordinal(n) for n in (1, 2, 3, 5, 11, 12, 21)] == [
        "1st", "2nd", "3rd", "5th", "11th", "12th", "21st"]
    assert T.split_phrase(32, 16) == "the source's 2 : 1 split scaled down"
    assert T.split_phrase(100, 50) == "the source's own lengths"
    table = T.setup_table(PARAMS.resolve("smoke")).set_index("parameter")
    assert table.loc["decoding", "this run"] == "temperature 0; the lab also at temperature 0.8"
    assert table.loc["pairs for dataset inference", "this run"] == "60 (lab), 16 (real models)"
    assert [T.strength(r) for r in (0.1, -0.5, 0.95, 0.0, np.nan)] == [
        "weak positive", "moderate negative", "strong positive", "no", "undefined"]
    assert "a weak positive and a moderate negative correlation" in T.instance_sentence(
        {"entropy": Fit(1, 0, 0.123, 0, 9), "zlib": Fit(1, 0, -0.5, 0, 9)})
    assert T.stronger_line("zlib") == "the zlib line is the stronger"
    assert T.stronger_line(None).startswith("one of the two has no line")
    # the source's Figure 2, read in panel order: zlib 0.972, entropy 0.945
    assert T.paper_lines_sentence().endswith("although its text calls entropy the better approximator.")
    assert T.fit_value(Fit(0.25, 1.5, 0.9123, 0.0, 3), "r") == "0.912"
    assert T.fit_value(None, "r") == "undefined (fewer than 3 level sets)"
    intervals = pd.DataFrame({"r": [0.5, np.nan], "r lo": [0.25, np.nan], "r hi": [0.75, np.nan]})
    merged = T.merge_intervals(intervals, digits=2)
    assert list(merged.columns) == ["r"] and list(merged["r"]) == ["0.50 [0.25, 0.75]", "no line"]
    levels = pd.DataFrame({"e": [3, 5, 8], "pairs": [2, 10, 40], "token_space": [7, 30, 300]})
    assert T.token_space_sentence(levels).endswith("spans 300: the token space grows with the score.")
    stream = Stream(tokens={"b": [1, 2, 3], "i": [1, 2, 3], "j": [1, 2]},
                    copies={"b": 1, "i": 4, "j": 16},
                    source={"b": "background", "i": "injected", "j": "injected"}, left_out={"knowledge": 1})
    assert T.stream_sentence(stream) == (
        "The stream it is drawn from holds 1 background passages (one copy each) and 2 inserted sequences "
        "(4 to 16 copies). The run's other training documents (1 knowledge) are not sampled.")
    assert T.window_sentence(stream, 3).startswith(
        "The inserted sequences are 2 tokens long (median), so 1 of 2")


@pytest.mark.parametrize("id", list(T.STATEMENTS))
def test_every_claim_has_a_statement_and_a_way_to_read_its_value(id):
    assert T.STATEMENTS[id].endswith(".") and id in T.VALUES


def test_dataset_inference_calls_undecided_sets_and_the_sources_tau_in_words():
    calls = {"candidates": 2, "decided": 2, "called_members": 2, "right": 1, "members": 1, "nonmembers": 1,
             "nonmembers_called": ["smol: stories"], "members_missed": [], "undecided": []}
    calls["nonmembers_decided"] = 1
    assert T.di_calls_sentence(calls, "the real models") == (
        "On the real models the rule calls 2 of the 2 candidate sets it decides members, 1 of the 1 "
        "non-member sets it decides among them (smol: stories): it calls every set a member, non-members "
        "too, so on these sets it tells nothing apart.")
    # every decided set a member, but no non-member decided: nothing to say about telling them apart
    only = {**calls, "nonmembers_decided": 0, "nonmembers_called": []}
    assert T.di_calls_sentence(only, "the lab's models") == (
        "On the lab's models the rule calls 2 of the 2 candidate sets it decides members, 0 of the 0 "
        "non-member sets it decides among them.")
    assert T.undecided_sentence([calls]).startswith("The rule decides every candidate set")
    lab = {**calls, "undecided": [{"set": "m: held out", "truth": 0, "why": "1 level set (e = 16 (60 pairs)) "
                                   "of 60 kept pairs: a line needs 3"}]}
    assert T.undecided_sentence([lab, calls]).startswith(
        "The rule leaves 1 candidate set undecided: m: held out (non-member: 1 level set (e = 16 (60 pairs)) "
        "of 60 kept pairs: a line needs 3). With no intercept there is no call")
    rules = ["book", "source margin", "source value (Pythia)", "source value (OLMo-2)"]
    taus = pd.DataFrame({"rule": rules * 2, "decided": [3] * 8, "right": [2, 1, 3, 0, 1, 1, 1, 1]})
    text = T.tau_convention_sentence(taus, 0.724)
    assert "τ = 3 lies 0.724 bits below the intercept of its training set" in text
    assert ("that convention calls 2 of 6 candidate sets with a line right, against 3 of 6 for the book's "
            "τ") in text
    assert text.endswith("τ = 0 and 3, call 4 of 6 and 1 of 6 right.")
    assert T.claim_value(claim("mia_loss", 0.71234)) == "0.712"


def test_the_membership_inference_panel_in_words():
    c = claim("mia_real_shift", 0.8, extra={"auc": {"smol": 0.8, "gemma": 0.9}, "model": "smol",
                                            "texts": {"smol": 41, "gemma": 41}})
    text = T.shift_sentence(c, 0.52)
    assert ("0.80 (smol, 41 texts), 0.90 (gemma, 41 texts) on these pairs, against 0.52 on the lab's "
            "randomized panel, so the two groups differ as texts.") in text
    panel = pd.DataFrame({"scope": ["all"], "attack": ["minkpp"], "members": [3], "non-members": [2],
                          "auc": [0.75], "auc lo": [0.5], "auc hi": [1.0], "tpr": [np.nan],
                          "tpr lo": [np.nan], "tpr hi": [np.nan]})
    shown = T.panel_display(panel)
    assert shown.iloc[0].tolist() == ["all", "Min-K%++", 3, 2, "0.75 [0.50, 1.00]", "—", 0]


def test_copy_designs_sentence_reads_its_record_and_says_when_it_is_missing(tmp_path):
    import json

    from analysis.entropy.copy_designs import copy_designs_sentence

    record = {"profile": "default", "run": "pert-l2x", "commit": "abc1234", "date": "2026-12-02",
              "designs": [
        {"design": "geometric 2-64 (the lab)", "r": 0.66, "pairs_by_score": [2800, 27, 8, 20, 11, 13, 10]},
        {"design": "geometric 2-8", "r": 0.82, "pairs_by_score": [176, 9, 2, 13, 18, 12, 6, 9, 33]},
        {"design": "Zipf s=1.0 max=16", "r": 0.81, "pairs_by_score": [182, 6, 4, 10, 8, 4, 8, 4, 18]},
        {"design": "no line", "r": None, "pairs_by_score": [0] * 9},
    ]}
    path = tmp_path / "designs.json"
    path.write_text(json.dumps(record))
    text = copy_designs_sentence("default", "pert-l2x", path)
    # two other designs with a line; r from the lowest (0.66) to the best (0.82, geometric 2-8),
    # whose e = 1..7 counts run from 2 to 18
    assert "as 2 other designs" in text and "ranges from 0.66 to 0.82" in text
    assert "The best, geometric 2-8, still has 176 verbatim answers against 2 to 18" in text
    assert "resampled: 0.66" in text and "`abc1234`" in text
    assert copy_designs_sentence("default", "deep-40", path).startswith("**Not computed for `deep-40`")
    other = copy_designs_sentence("smoke", "pert-l2x", path)
    assert other.startswith("**Not computed for `pert-l2x` of the smoke")
    # a record of other weights of the run (a lab since rebuilt) is not shown
    assert copy_designs_sentence("default", "pert-l2x", path, weights="f00").startswith(
        "**Not computed for this lab's `pert-l2x`**")
    path.write_text(json.dumps({**record, "weights_sha256": "f00"}))
    assert copy_designs_sentence("default", "pert-l2x", path, weights="f00") == text
    missing = copy_designs_sentence("default", "pert-l2x", tmp_path / "none.json")
    assert missing.startswith("**Not computed yet**")
