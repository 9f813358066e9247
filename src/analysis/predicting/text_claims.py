"""The predicting chapter's sentence for each claim: one function per claim id, read by
:func:`analysis.predicting.text.render` through :data:`_RENDER`.

Each renderer words a :class:`~analysis.core.claims.Claim` of
:mod:`analysis.predicting.claims` (or :mod:`analysis.predicting.claims_exp3`): this
run's numbers beside the source's, then its status, marks and reason in the book's
one voice (:func:`analysis.core.claim_text.verdict`). Nothing here decides.
"""

from __future__ import annotations

from analysis.core.claim_text import verdict
from analysis.core.claims import HOLDS, NOT_TESTABLE, REPRODUCED, Claim
from analysis.predicting.params import PAPER_INSERTED_ONLY
from analysis.predicting.text_words import _copies_text, and_list


def _status(c: Claim) -> str:
    """The claim's status, marks and reason, in the one voice of :func:`analysis.core.claim_text.verdict`."""
    return verdict(c)


def _side(c: Claim) -> str:
    """Where an AUC lies against its null: its permutation null's median where computed (which a
    balanced, split fit puts below 0.5), else 0.5. A value is "above" or "below" only when the
    claim's test says so; otherwise it is "not told from" the null."""
    null = c.null_value if c.null_value is not None else 0.5
    where = "chance" if c.null_kind != "permutation" else f"its permutation null ({null:.3f})"
    significant = c.p is not None and c.p < 0.05
    if not significant or c.value == null:
        return f"not told from {where}"
    return f"above {where}" if c.value > null else f"below {where}"


def _controls(c: Claim) -> str:
    e = c.extra
    src = (f"the source's targets extract controls in {e['src_sets']} of its {e['src_n_sets']} Experiment 1 "
           f"sets ({e['src_lo']:,} to {e['src_hi']:,} each)")
    if c.status == NOT_TESTABLE:
        return f"The lab's targets have no never-inserted controls, whereas {src}."
    if not e["extracted"]:
        bound = (f" ({c.interval[1]:.0%} at most of the {c.n_units} control sequences, at 95%; the source's "
                 f"targets extract about {e['src_rate']:.1%} of theirs)"
                 if c.interval and e.get("src_rate") is not None else "")
        return f"No lab model reproduces a sequence it never saw{bound}, whereas {src}. {_status(c)}"
    return (f"{e['extracted']} never-inserted controls are extracted: text the models could predict without "
            f"seeing it, as {src}. {_status(c)}")


def _partial(c: Claim) -> str:
    e = c.extra
    if "acc" not in e:
        return ("Every inserted (target, copies) cell extracts some sequence, so partial learning below the "
                "label's all-tokens threshold cannot be seen apart from it.")
    head = (f"In the {e['n_cells']} inserted (target, copies) cells where nothing is extracted, the mean "
            f"suffix accuracy is {e['acc']:.3f}")
    if "ctrl_acc" not in e:
        return head + "; with no never-inserted controls, there is nothing to compare it with."
    head += f", against {e['ctrl_acc']:.3f} for the never-inserted controls (one-sided Mann–Whitney test)"
    if c.status in (REPRODUCED, HOLDS):
        return (head + ": below the label's all-tokens threshold, the models have learned part of each "
                f"suffix. {_status(c)}")
    return head + f": no sign that the models learned part of the suffixes they do not extract. {_status(c)}"


def _e1_three(c: Claim) -> str:
    target = c.extra.get("target", "the main target")
    if c.status == NOT_TESTABLE:
        return f"The lab has no 3-feature AUC for its stand-in for {target} (source {c.source_value})."
    return (f"For the lab's stand-in for {target}, the three features reach {c.value:.3f} on the random "
            f"split, {_side(c)}, where the source finds {c.source_value}. {_status(c)}")


def _e1_inserted(c: Claim) -> str:
    target = c.extra.get("target", "the main target")
    src = (f"The source prints no numbers for its inserted-only tables (they are in its "
           f"{PAPER_INSERTED_ONLY})")
    if "src_all" in c.extra:
        src += f"; with every sequence it finds {c.extra['src_all']:.3f} for {target}"
    if c.status == NOT_TESTABLE:
        return f"The lab has no inserted-only 3-feature AUC for its stand-in for {target}. {src}."
    return (f"With the never-inserted controls removed before balancing, the three features rank the lab's "
            f"stand-in for {target} at {c.value:.3f} on the random split, {_side(c)}. {src}. "
            f"{_status(c)}")


def _e2_top(c: Claim) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        return (f"Recency alone ranks the source's {e['pool']} pairs at {e['level']} copies at "
                f"{c.source_value}; this run cannot test that: {c.reason}.")
    return (f"At {e['level']} copies, recency alone ranks the lab's {e['pool']} pairs at {c.value:.3f}, "
            f"{_side(c)}, where the source's reach {c.source_value}. {_status(c)}")


def _e1_freq(c: Claim) -> str:
    e = c.extra
    src = (f"{e['src_wins']} of {e['src_n']} targets, with hardness alone at {e['src_hard_lo']:.3f} to "
           f"{e['src_hard_hi']:.3f}")
    if c.status == NOT_TESTABLE:
        return ("No target has enough positives for this experiment on this lab, so it cannot compare "
                "frequency with hardness; in the source, log_freq alone ranks better than hardness alone for "
                f"{src}.")
    return (f"log_freq alone ranks better than hardness alone for {e['wins']} of the {c.n} targets with "
            f"numbers (a sign test), where the source finds it for {src}. {_status(c)}")


def _e1_spread(c: Claim) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        head = ("The lab has no target with both classes" if e.get("lab_size") is None
                else "The lab's AUCs rest on one seed")
        return f"{head}, so no sd over seeds to compare with the source's median {e['src_sd']:.3f}."
    return (f"The lab's sets hold a median of {e['lab_size']:,.0f} examples per target, the source's "
            f"{e['src_size']:,.0f}, so the lab's 3-feature AUC moves between seeds {e['relation']} the "
            f"source's (median sd {c.value:.3f} against {e['src_sd']:.3f}; the sd row). {_status(c)}")


def _e2_recency(c: Claim) -> str:
    if c.status == NOT_TESTABLE:
        return f"The lab has no quarters pairs for recency to rank (source {c.source_value})."
    return (f"Recency alone ranks the lab's quarters pairs at {c.value:.3f}, {_side(c)}, where the "
            f"source's reach {c.source_value}. {_status(c)}")


def _e2_freq(c: Claim) -> str:
    if c.status == NOT_TESTABLE:
        return "The lab has no quarters pairs for log_freq to rank."
    return (f"log_freq alone ranks them at {c.value:.3f} (source {c.source_value}): both runs of a pair see "
            f"the same copies, so it cannot tell them apart. {_status(c)}")


def _e2_order(c: Claim) -> str:
    e = c.extra
    src = (f"the source, whose first quarter's run is the positive of {e['src_counts'][0]:,} of its seed-0 "
           f"pairs and the last quarter's of {e['src_counts'][-1]:,}")
    counts = and_list(e["counts"])
    if c.value is None:
        return (f"The order by window cannot be seen ({counts} sequences extracted), against {src}. "
                f"{_status(c)}")
    lead = ("The later the window, the more is extracted" if e["rises"]
            else "The extraction does not grow steadily with the window's end")
    return f"{lead} ({counts} sequences; AUC {c.value:.3f} for the window's end), against {src}. {_status(c)}"


_LEANS = {
    "q4": "the run whose copies come in the last quarter wins more pairs, as recency predicts",
    "wide": ("copies spread over the second half of training are extracted more often than the same copies "
             "crowded into its last quarter"),
    "even": "the split is too close to call either way",
}


def _e2_late(c: Claim) -> str:
    e = c.extra
    src = (f"the source's two runs are the positive of {e['src_q4']:,} and {e['src_wide']:,} of its "
           f"{e['src_q4'] + e['src_wide']:,} pairs (binomial p = {e['src_p']:.2g})")
    if c.status == NOT_TESTABLE:
        return f"The lab has no late pairs to compare, where {src}."
    return (f"Of the lab's {c.n} late pairs, {e['q4']} is the positive of {e['lab_q4']} and {e['wide']} of "
            f"{e['lab_wide']}, where {src}. In the lab, {_LEANS[e['lean']]}. {_status(c)}")


_EXP3_LABELS = {"e3_three_full": "The whole-sequence fit", "e3_three_suffix": "The suffix fit",
                "e3_cross_model": "The cross-model baseline"}


def _e3_auc(c: Claim) -> str:
    label = _EXP3_LABELS[c.id]
    if c.status == NOT_TESTABLE:
        return f"{label} is not computed: {c.reason} (source {c.source_value})."
    return (f"{label} ranks the pooled matched set at {c.value:.3f}, {_side(c)}, where the source's "
            f"reaches {c.source_value}. {_status(c)}")


def _e3_gap(c: Claim) -> str:
    e = c.extra
    ahead = "ahead of" if e["src_gap"] > 0 else "behind"
    src = (f"Once frequency and recency are fixed, the source's feature sets reach AUC {e['src_lo']:.2f} to "
           f"{e['src_hi']:.2f}, with the suffix hardness {ahead} the whole-sequence one by "
           f"{e['src_gap']:+.3f} ({e['src_sfx']:.3f} against {e['src_full']:.3f} pooled).")
    if c.status == NOT_TESTABLE:
        return src + " The lab's matched set does not hold both classes, so it cannot test this."
    lo, hi = e["delong_lo"], e["delong_hi"]
    where = {"above": "above that interval", "below": "below that interval", "inside": "inside that interval"}
    return (f"{src} The lab's gap is {c.value:+.3f} ({e['sfx']:.3f} against {e['full']:.3f}, mean over "
            f"{e['n_seeds']} seeds of {c.n} examples from {c.n_units} sequences), against a permutation "
            f"null of {c.null_value:+.3f} (p = {c.p:.2g}). DeLong's paired 95% interval, {lo:+.3f} to "
            f"{hi:+.3f}, takes the rows as independent though a sequence is a row of several cells, so the "
            f"source's gap, {where[e['src_side']]}, is not held against it. {_status(c)}")


def _e3_task(c: Claim) -> str:
    label = _EXP3_LABELS[c.id.replace("_task", "")]
    label = label[0].lower() + label[1:]
    if c.status == NOT_TESTABLE:
        return f"Leaving one task out, {label} is not computed: {c.reason} (source {c.source_value})."
    side = ("not told from 0.5" if c.p is None or c.p >= 0.05 else
            "above 0.5" if c.value > 0.5 else "below 0.5")
    ctrl = (f"; log_freq, constant within every cell, scores {c.control_value:.3f}"
            if c.control_value is not None else "")
    return (f"Leaving one task out, where chance is exactly 0.5{ctrl}, {label} ranks "
            f"the pooled matched set at {c.value:.3f}, {side} (permutation p = {c.p:.2g}), where the "
            f"source's reaches {c.source_value}. {_status(c)}")


def _e1_gap(c: Claim, what: str) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        return (f"The lab has no AUCs for its stand-in for {e['target']} to compare {what} "
                f"(source {c.source_value}).")
    ci = f" (95% interval {c.interval[0]:+.3f} to {c.interval[1]:+.3f} over {c.n_units} sequences)" \
        if c.interval else ""
    return (f"For the lab's stand-in for {e['target']}, the three features minus {what} is "
            f"{c.value:+.3f}{ci}, where the source's is {c.source_value}. {_status(c)}")


def _e1_hardness(c: Claim) -> str:
    return _e1_gap(c, "log_freq + recency")


def _e1_cross(c: Claim) -> str:
    return _e1_gap(c, "the cross-model baseline")


def _e2_level(c: Claim) -> str:
    e = c.extra
    if c.status == NOT_TESTABLE:
        return f"At {_copies_text(e['level'])} the lab has no {e['pool']} pairs to rank: {c.reason}."
    ci = f" (95% interval {c.interval[0]:.3f} to {c.interval[1]:.3f})" if c.interval else ""
    return (f"At {_copies_text(e['level'])}, recency alone ranks the lab's {e['n_pos']} {e['pool']} pairs at "
            f"{c.value:.3f}{ci}, {_side(c)}, where the source's reach {c.source_value}. {_status(c)}")


_RENDER = {"controls_extracted": _controls, "partial_learning": _partial, "e1_three": _e1_three,
           "e1_inserted_three": _e1_inserted, "e2_recency_256": _e2_top,
           "e1_freq_beats_hardness": _e1_freq, "e1_seed_spread": _e1_spread, "e2_recency": _e2_recency,
           "e2_log_freq_constant": _e2_freq, "e2_window_order": _e2_order, "e2_late_pool": _e2_late,
           "e3_three_full": _e3_auc, "e3_three_suffix": _e3_auc, "e3_cross_model": _e3_auc,
           "e3_suffix_gap": _e3_gap, "e3_task_three_full": _e3_task, "e3_task_three_suffix": _e3_task,
           "e1_hardness_adds_little": _e1_hardness, "e1_three_vs_cross_model": _e1_cross}
