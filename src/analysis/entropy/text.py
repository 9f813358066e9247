"""The entropy chapter's English: every sentence it glues, and the rendering of its claims.

The decisions are made in :mod:`analysis.entropy.claims`; a sentence here reads
them (a claim's status, value and ``extra``) and never decides again. The other
sentences describe numbers (the stream, the filter, the setup) without a verdict.
:data:`STATEMENTS` holds each claim's statement of the source's finding, and
:func:`render` words a claim for the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from analysis.core import claim_text
from analysis.core.claims import NOT_TESTABLE, Claim
from analysis.core.fmt import fmt_pct
from analysis.entropy.method import stronger
from analysis.entropy.method_sets import (
    Inference,
    SetResult,
    Stream,
    kept,
    sample_size_summary,
    stream_composition,
)
from analysis.entropy.mia import MINK_SHARE
from analysis.entropy.params import (
    AGREEMENT_LEVEL,
    DI_QUANTILE,
    LOW_SCORE_SHARE,
    PAPER_BINNINGS,
    PAPER_END_ENTROPY,
    PAPER_INSTANCE_MODEL,
    PAPER_INSTANCE_R,
    PAPER_LENGTH_R,
    PAPER_LENGTHS,
    PAPER_MIN_DI_SAMPLES,
    PAPER_MIN_R,
    PAPER_N_PAIRS,
    PAPER_PREFIX_TOKENS,
    PAPER_SET_MODEL,
    PAPER_SET_R,
    PAPER_SMALL_SAMPLE_INTERCEPT,
    PAPER_SUFFIX_TOKENS,
    PAPER_TABLE4_PAIRS,
    PAPER_TAU,
    PAPER_TEMPERATURE,
    PARAMS,
)
from analysis.entropy.run import other_temperature
from analysis.stats.lines import Fit
from analysis.stats.mia import LOW_FPR

# -- the claims ---------------------------------------------------------------------------------

#: each claim's statement of what the source found
STATEMENTS = {
    "low_scores_rarer": "Low memorization scores are rarer than high ones, exponentially so.",
    "instance_entropy": ("Instance by instance, an answer's entropy correlates positively, yet weakly, with "
                         "its memorization score."),
    "instance_zlib": ("Instance by instance, an answer's zlib ratio correlates positively, yet weakly, with "
                      "its memorization score."),
    "em_linearity": (f"Pooled into level sets, the entropy is linear in the memorization score, with Pearson "
                     f"r above {PAPER_MIN_R:g} on every model (the EM Linearity)."),
    "entropy_beats_zlib": ("At the set level, entropy approximates the memorization score better than the "
                           "zlib ratio does."),
    "pooling": ("Pooling answers into level sets makes the entropy track the score far more closely than "
                "instance by instance."),
    "normalized_falls": "The normalized entropy M_ent / log|T_e| falls linearly as the score rises.",
    "token_space_grows": ("Low scores draw on exponentially fewer distinct tokens: the token space |T_e| "
                          "grows exponentially with the score."),
    "score_over_size": ("The level-set entropy follows the memorization score more closely than the number "
                        "of pairs in each level set (a plug-in entropy grows with the tokens it is computed "
                        "on)."),
    "verbatim_rarer": "Verbatim answers (e = 0) are rarer than partly memorized ones.",
    "r_every_length": f"The EM Linearity holds at every answer length, with r above {PAPER_MIN_R:g}.",
    "intercept_grows_with_length": "The line's intercept grows with the answer length |s|.",
    "same_end_entropy": "Every answer length's line ends near the same entropy at e = |s|.",
    "r_every_strategy": (f"The EM Linearity holds under every sampling strategy, with r above "
                         f"{PAPER_MIN_R:g}."),
    "small_samples_spread": "Small samples move the line's intercept more than large ones.",
    "small_samples_lower": (f"Below about {PAPER_MIN_DI_SAMPLES:,} pairs the intercept falls from its "
                            "plateau."),
    "di_lab": ("A set is training data when its entropy line's intercept exceeds τ: on the lab's candidate "
               "sets, where membership is logged."),
    "di_real": ("A set is training data when its entropy line's intercept exceeds τ: on the real models' "
                "candidate sets, against the likely truth."),
    "r_real_models": (f"The EM Linearity (r above {PAPER_MIN_R:g}) holds on every model: here each real "
                      "model on each of its sets of texts."),
    "intercept_slope_opposed": ("For a fixed model and dataset, the line's intercept and slope move in "
                                "opposite directions."),
    "di_vs_loss": ("Beyond the source: the intercept rule infers membership of a set more accurately than "
                   "the mean loss alone, with its τ set by the same rule."),
    "di_vs_maini": ("The intercept rule infers membership of a set more accurately than Maini et al. "
                    "(2024)'s dataset inference, which aggregates membership-inference attacks."),
    "linearity_rarefied": ("Beyond the source: the level-set line is not a sample-size artefact: it survives "
                           "with every level set rarefied to the same number of pairs."),
    "linearity_miller_madow": ("Beyond the source: the level-set line is not a sample-size artefact: it "
                               "survives the Miller–Madow bias correction of each level set's entropy."),
    "r_every_binning": (f"The EM Linearity holds under coarse binning of the score into 3, 5 and 10 "
                        f"equal-width bins, with r above {PAPER_MIN_R:g}."),
    "intercept_slope_across_strategies": ("Across sampling strategies, the line's intercept rises as its "
                                          "slope falls."),
    "mia_loss": ("Beyond the source: where membership is randomized (the lab's injected sequences), the loss "
                 "attack tells members from non-members."),
    "mia_zlib": ("Beyond the source: where membership is randomized, the zlib-ratio attack tells members "
                 "from non-members."),
    "mia_mink": ("Beyond the source: where membership is randomized, Min-K% Prob tells members from "
                 "non-members."),
    "mia_minkpp": ("Beyond the source: where membership is randomized, Min-K%++ tells members from "
                   "non-members."),
    "mia_intercept": ("Beyond the source: the intercept of a set's entropy line ranks the lab's member sets "
                      "above its non-member sets."),
    "mia_real_shift": ("Beyond the source: popular texts against 2024–26 stories is a shifted split, so a "
                       "score that never sees the model already tells the two apart."),
}
#: how each claim's value reads: its name, its kind (r, a difference of r, a share, bits) and what n counts
VALUES = {
    "low_scores_rarer": ("share below |s|/2", "share", "kept pairs"),
    "instance_entropy": ("r", "r", "pairs"), "instance_zlib": ("r", "r", "pairs"),
    "em_linearity": ("r", "r", "level sets"),
    "entropy_beats_zlib": ("r (entropy) − r (zlib)", "r", "level sets"),
    "pooling": ("|r| by level set − |r| per answer", "r", "level sets"),
    "normalized_falls": ("r", "r", "level sets"), "token_space_grows": ("r", "r", "level sets"),
    "score_over_size": ("|r| with the score − |r| with the set size", "r", "level sets"),
    "verbatim_rarer": ("share at e = 0", "share", "pairs"),
    "r_every_length": ("lowest r", "r", "lengths with a line"),
    "intercept_grows_with_length": ("change of the intercept", "bits", "lengths"),
    "same_end_entropy": ("spread at e = |s|", "bits", "lengths"),
    "r_every_strategy": ("lowest r", "r", "strategies with a line"),
    "small_samples_spread": ("change of the 10–90 spread", "bits", "subsamples"),
    "small_samples_lower": ("change of the mean intercept", "bits", "subsamples"),
    "di_lab": ("share called right", "share", "decided sets"),
    "di_real": ("share called right", "share", "decided sets"),
    "r_real_models": ("lowest r", "r", "sets with a line"),
    "intercept_slope_opposed": ("median r", "r", "sets"),
    "di_vs_loss": ("share right (intercept) − share right (mean loss)", "share diff", "sets both decide"),
    "di_vs_maini": ("share right (intercept) − share right (Maini et al.)", "share diff", "sets both decide"),
    "linearity_rarefied": ("r, level sets rarefied", "r", "level sets"),
    "linearity_miller_madow": ("r, Miller–Madow", "r", "level sets"),
    "r_every_binning": ("lowest r", "r", "binnings with a line"),
    "intercept_slope_across_strategies": ("r of intercept and slope", "r", "strategies"),
    **{f"mia_{a}": ("AUC", "auc", "sequences") for a in ("loss", "zlib", "mink", "minkpp")},
    "mia_intercept": ("AUC over sets", "auc", "pairs of sets"),
    "mia_real_shift": ("AUC of the text's own zlib ratio, folded", "auc", "pairs"),
}


def _number(x: float, kind: str) -> str:
    if kind == "share":
        return fmt_pct(x)
    if kind == "share diff":
        return f"{100 * x:+.0f} points"
    return f"{x:.3f}" if kind in ("r", "auc") else f"{x:.2f}"


def value_text(claim: Claim) -> str:
    """This run's value and interval in words (the units, the null, the control and
    the status come from :func:`analysis.core.claim_text.render`)."""
    label, kind, _ = VALUES[claim.id]
    if claim.value is None:
        return "no value"
    text = f"{label} = {_number(claim.value, kind)}"
    if claim.interval:
        text += f" [{_number(claim.interval[0], kind)}, {_number(claim.interval[1], kind)}]"
    if kind == "bits":
        text += " bits"
    x = claim.extra
    if "decided" in x:
        text += f" ({x['right']} of {x['total']} right; {x['undecided']} undecided, counted as misses)"
    elif "above" in x:
        text += f" ({x['above']} of {x['total']} above {PAPER_MIN_R:g})"
    return text


def render(claim: Claim) -> str:
    """A claim for the page (Markdown), in the book's one voice
    (:func:`analysis.core.claim_text.render`) with this chapter's value words."""
    return claim_text.render(claim, value_text=value_text(claim))


# -- setup, stream and sentences ------------------------------------------------------------------


def _ordinal(n: int) -> str:
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def method_constants() -> dict[str, str]:
    """The source's and the method's constants as the chapter's prose states them
    (formatted for glue), so no number is typed by hand."""
    return {
        "paper_min_r": f"{PAPER_MIN_R:g}",
        "paper_tau_pythia": f"{PAPER_TAU['Pythia']:g}",
        "paper_tau_olmo": f"{PAPER_TAU['OLMo-2']:g}",
        "di_quantile": _ordinal(round(100 * DI_QUANTILE)),
        "di_coverage": f"{1 - DI_QUANTILE:.0%}",
        "paper_min_di": f"{PAPER_MIN_DI_SAMPLES:,}",
        "paper_suffix": str(PAPER_SUFFIX_TOKENS),
        "paper_table4_pairs": f"{PAPER_TABLE4_PAIRS:,}",
        "paper_instance_r": f"{PAPER_INSTANCE_R:g}",
        "paper_small_intercept": f"{PAPER_SMALL_SAMPLE_INTERCEPT:g}".replace("-", "−"),
        "mink_share": f"{MINK_SHARE:.0%}", "low_fpr": f"{LOW_FPR:.0%}",
        "paper_binnings": ", ".join(map(str, PAPER_BINNINGS[:-1])) + f" and {PAPER_BINNINGS[-1]}",
    }


def split_phrase(prefix_tokens: int, suffix_tokens: int) -> str:
    """How a run's ``|p| : |s|`` compares with the source's (100 : 50): its own
    lengths, its split scaled down (or up), or another split."""
    ours, paper = Fraction(prefix_tokens, suffix_tokens), Fraction(PAPER_PREFIX_TOKENS, PAPER_SUFFIX_TOKENS)
    theirs = f"{paper.numerator} : {paper.denominator}"
    if (prefix_tokens, suffix_tokens) == (PAPER_PREFIX_TOKENS, PAPER_SUFFIX_TOKENS):
        return "the source's own lengths"
    if ours == paper:
        return f"the source's {theirs} split scaled {'down' if prefix_tokens < PAPER_PREFIX_TOKENS else 'up'}"
    return f"a {ours.numerator} : {ours.denominator} split, where the source uses {theirs}"


def decoding_phrase(temperature: float) -> str:
    """``"greedily"`` at temperature 0, else ``"at temperature t"``."""
    return "greedily" if temperature == 0 else f"at temperature {temperature:g}"


def greedy_sentence(table4: pd.DataFrame) -> str:
    """What the source's Table 4 says about greedy decoding against its main
    temperature: nearly the same r (within 0.01) or not."""
    t4 = table4.set_index("strategy")["r"]
    greedy, main = float(t4["Temp=0"]), float(t4[f"Temp={PAPER_TEMPERATURE:g}"])
    how = "nearly the same r" if abs(greedy - main) < 0.01 else "a different r"
    return (f"The source's Table 4 finds {how} greedily ({greedy:.3f}) as at its main temperature of "
            f"{PAPER_TEMPERATURE:g} ({main:.3f}).")


def setup_table(params: Mapping) -> pd.DataFrame:
    """The Setup table: this run's lengths, sample sizes, decoding, filter and
    bootstrap beside the source's."""
    return pd.DataFrame({
        "parameter": ["prompt |p| / answer |s| (tokens)", "pairs per sample", "decoding", "trivial filter",
                      "entropy unit", "pairs for dataset inference", "bootstrap resamples"],
        "this run": [f"lab {params['lab_prefix_tokens']} / {params['lab_suffix_tokens']}; real models "
                     f"{params['prefix_tokens']} / {params['suffix_tokens']}",
                     f"lab {params['n_lab']:,} (main), {params['n_di_lab']:,} per set; real models "
                     f"{params['n_real']:,} per set",
                     f"temperature {params['temperature']:g}; the lab also "
                     f"{decoding_phrase(other_temperature(params['temperature']))}",
                     params["lcs_filter"], "bits",
                     f"{params['n_di_lab']:,} (lab), {params['n_real']:,} (real models)",
                     str(params["n_boot"])],
        "paper": [f"{PAPER_PREFIX_TOKENS} / {PAPER_SUFFIX_TOKENS}",
                  ", ".join(f"{n:,} ({m})" for m, n in PAPER_N_PAIRS.items()),
                  f"temperature {PAPER_TEMPERATURE:g}; Table 4 varies it", "written: LCS(p, s) ≥ |s|/2",
                  "not stated", f"at least {PAPER_MIN_DI_SAMPLES:,}", "none"],
    })


def setup_sentences(params: Mapping, table4: pd.DataFrame) -> str:
    """The Setup section's paragraph: this run's lengths and decoding against the
    source's, and what the ``paper`` profile runs."""
    P, S = params["lab_prefix_tokens"], params["lab_suffix_tokens"]
    p, s = params["prefix_tokens"], params["suffix_tokens"]
    same = (p, s) == (P, S)
    paper = PARAMS.profiles["paper"]
    lengths = "the same lengths" if same else f"{p} + {s}"
    return (f"The lab uses |p| + |s| = {P} + {S}, {split_phrase(P, S)}. The real models use {lengths} and "
            f"decode {decoding_phrase(params['temperature'])}. {greedy_sentence(table4)} The `paper` profile "
            f"runs the real models at {paper['prefix_tokens']} + {paper['suffix_tokens']}, "
            f"{decoding_phrase(paper['temperature'])}, with {paper['n_real']:,} pairs per set.")


_SOURCE_NOUNS = {"background": "background passages", "popular": "popular-text excerpts",
                 "injected": "inserted sequences"}


def _copies_phrase(fewest: int, most: int) -> str:
    if fewest == most:
        return "one copy each" if most == 1 else f"{most} copies each"
    return f"{fewest} to {most} copies"


def stream_sentence(stream: Stream) -> str:
    """What the lab's main sample is drawn from, with counts and copies."""
    comp = stream_composition(stream)
    parts = [f"{r.documents:,} {_SOURCE_NOUNS.get(r.source, r.source)} ({_copies_phrase(r.fewest, r.most)})"
             for r in comp.itertuples(index=False)]
    text = "The stream it is drawn from holds " + (", ".join(parts[:-1]) + " and " + parts[-1]
                                                   if len(parts) > 1 else parts[0]) + "."
    if stream.left_out:
        others = ", ".join(f"{n:,} {kind}" for kind, n in stream.left_out.items())
        text += f" The run's other training documents ({others}) are not sampled."
    return text


def window_sentence(stream: Stream, window: int) -> str:
    """How long the inserted sequences are, and how many hold a whole window of
    ``window = |p| + |s|`` tokens (a window never crosses a document)."""
    lengths = [len(t) for k, t in stream.tokens.items() if stream.source[k] == "injected"]
    if not lengths:
        return "This run inserts no sequences: every pair comes from the base corpus."
    fits = sum(n >= window for n in lengths)
    return (f"The inserted sequences are {np.median(lengths):.0f} tokens long (median), so {fits} of "
            f"{len(lengths)} hold a whole window of |p| + |s| = {window} tokens.")


def low_score_sentence(scored: pd.DataFrame, stream: Stream, claim: Claim) -> str:
    """Where the low scores (below ``LOW_SCORE_SHARE · |s|`` edits) come from, and
    whether they are rarer than high ones, as in the source (``claim`` is
    ``low_scores_rarer``: a share below one half)."""
    k = kept(scored)
    if k.empty:
        return "No pair survives the errors and the trivial filter, so there are no scores to trace."
    cut = LOW_SCORE_SHARE * len(k["suffix"].iloc[0])
    low = k[k["score"] < cut]
    n_low, n = len(low), len(k)
    if n_low == 0:
        return (f"No kept pair scores below |s|/2 = {cut:g} edits, so there is no low score to trace to "
                "its source: low scores are absent here, and in the source they are exponentially rarer than "
                "high ones.")
    n_inj = int((low["doc_id"].map(stream.source) == "injected").sum())
    where = ("all of them" if n_inj == n_low else "almost all of them" if n_inj >= 0.8 * n_low else
             "most of them" if n_inj > 0.5 * n_low else f"only {n_inj} of them" if n_inj else "none of them")
    rarity = ("Low scores are rarer than high ones, as in the source, where they are exponentially rarer."
              if claim.value < 0.5 else
              "Low scores are not rarer than high ones here, unlike the source, where they are exponentially "
              "rarer.")
    return (f"{n_low} of {n:,} kept pairs score below |s|/2 = {cut:g} edits, and {where} come from the "
            f"inserted sequences. {rarity}")


def verbatim_sentence(scored_by_decoding: Mapping[str, pd.DataFrame]) -> str:
    """How much the model reproduces verbatim (score 0) under each decoding, and the
    median score; the lead says "nothing", "little" (under 5% of kept answers),
    "some" (under 25%) or "much", by the first decoding."""
    parts, lead = [], None
    for label, scored in scored_by_decoding.items():
        k = kept(scored)
        if k.empty:
            parts.append(f"under {label} decoding no answer is kept")
            lead = lead or "nothing that can be scored"
            continue
        n0 = int((k["score"] == 0).sum())
        share = n0 / len(k)
        lead = lead or ("nothing" if n0 == 0 else "little" if share < 0.05 else
                        "some" if share < 0.25 else "much")
        parts.append(f"under {label} decoding {n0:,} of {len(k):,} kept answers come back verbatim and the "
                     f"median score is {k['score'].median():.0f} edits out of "
                     f"|s| = {len(k['suffix'].iloc[0])}")
    return f"The lab model reproduces {lead} of its training stream verbatim: " + "; ".join(parts) + "."


def fit_value(fit: Fit | None, field: str, digits: int = 3) -> str:
    """A fitted value for prose, or a plain statement that there is no line."""
    return f"{getattr(fit, field):.{digits}f}" if fit is not None else "undefined (fewer than 3 level sets)"


def merge_intervals(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """For display: merge each ``x``, ``x lo``, ``x hi`` triple of columns into one
    ``x`` column reading ``"v [lo, hi]"`` (``"no line"`` where ``v`` is NaN)."""
    out = table.copy()
    for col in [c for c in table.columns if f"{c} lo" in table.columns and f"{c} hi" in table.columns]:
        out[col] = [f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(v) else "no line"
                    for v, lo, hi in zip(table[col], table[f"{col} lo"], table[f"{col} hi"])]
        out = out.drop(columns=[f"{col} lo", f"{col} hi"])
    return out


def strength(r: float) -> str:
    """A correlation in words: weak (|r| < 0.3), moderate (< 0.7) or strong,
    positive or negative."""
    if not np.isfinite(r):
        return "undefined"
    if r == 0:
        return "no"
    size = "weak" if abs(r) < 0.3 else "moderate" if abs(r) < 0.7 else "strong"
    return f"{size} {'positive' if r > 0 else 'negative'}"


def instance_sentence(fits: Mapping[str, Fit]) -> str:
    """Algorithm 2's result in words, beside the source's "positive, yet weak" r."""
    e, z = fits["entropy"].r, fits["zlib"].r
    words = (f"a {strength(e)} correlation for both" if strength(e) == strength(z) else
             f"a {strength(e)} and a {strength(z)} correlation")
    return (f"Instance by instance, Pearson r is {e:.2f} for entropy and {z:.2f} for the zlib ratio: "
            f"{words}. The source finds “a positive, yet weak” r of about {PAPER_INSTANCE_R:g} on "
            f"{PAPER_INSTANCE_MODEL}.")


def stronger_line(which: str | None) -> str:
    """Which set-level line is the stronger by r (:func:`~analysis.entropy.method.stronger`), in words."""
    return {None: "one of the two has no line, so they cannot be compared",
            "equal": "the two lines are equally strong", "entropy": "the entropy line is the stronger",
            "zlib": "the zlib line is the stronger"}[which]


def paper_lines_sentence() -> str:
    """The source's Figure 2 in words: both r, and which line is the stronger by r."""
    e, z = PAPER_SET_R["entropy"], PAPER_SET_R["zlib"]
    both = "both are strong" if min(e, z) > PAPER_MIN_R else "not both are strong"
    verdict = stronger_line(stronger(e, z))
    text = (f"In the source, on {PAPER_SET_MODEL}, {both}: its Figure 2 gives r = {z:.3f} and {e:.3f} for "
            f"the zlib and entropy panels, in that order (its Appendix C gives {e:.3f} for the same entropy "
            f"line), so by r {verdict} there")
    return text + (", although its text calls entropy the better approximator." if "zlib line" in verdict
                   else ", as its text says.")


def linearity_sentences(main: SetResult, other_label: str, other: SetResult, linearity: Claim,
                        zlib: Claim) -> str:
    """The set-level result in words: the entropy line's direction, r against the
    source's 0.9 with its bootstrap interval (``linearity``: the ``em_linearity``
    claim), the equation, r under the other decoding, and the zlib line against
    the entropy line (``zlib``: the ``entropy_beats_zlib`` claim)."""
    if main.fit is None:
        text = (f"The main sample falls into {len(main.levels)} level sets, too few for a line (a line needs "
                "3), so this run has no entropy line to test.")
    else:
        f = main.fit
        direction = "rises" if f.slope > 0 else "falls" if f.slope < 0 else "stays flat"
        ci = (f"bootstrap 95% interval {linearity.interval[0]:.3f} to {linearity.interval[1]:.3f}"
              if linearity.interval else "no bootstrap interval")
        side = "above" if linearity.value > PAPER_MIN_R else "below"
        sign = "+" if f.slope >= 0 else "−"
        text = (f"Pooled into {len(main.levels)} level sets, the entropy {direction} with the score along a "
                f"line with r = {f.r:.3f} ({ci}), {side} the {PAPER_MIN_R:g} the source reports on every "
                f"model. The line is M_ent(s_e) ≈ {f.intercept:.2f} {sign} {abs(f.slope):.3f}·e bits.")
    verdict = stronger_line(zlib.extra.get("stronger"))
    text += (f" Under {other_label} decoding r = {fit_value(other.fit, 'r')}. The zlib ratio of the same "
             f"level sets gives r = {fit_value(main.zlib_fit, 'r')}: by r, {verdict} here.")
    return text


def token_space_sentence(levels: pd.DataFrame) -> str:
    """The token space |T_e| of the lowest and highest level set, and whether it
    grows with the score."""
    if levels.empty:
        return "There are no level sets."
    lo, hi = levels.iloc[0], levels.iloc[-1]
    if len(levels) == 1:
        return (f"The main sample has one level set (e = {int(lo['e'])}), spanning "
                f"{int(lo['token_space']):,} tokens.")
    trend = ("grows with the score" if hi["token_space"] > lo["token_space"] else
             "shrinks as the score grows" if hi["token_space"] < lo["token_space"] else
             "is the same at both ends")
    return (f"The lowest level set here (e = {int(lo['e'])}, {int(lo['pairs']):,} pairs) spans "
            f"{int(lo['token_space']):,} distinct tokens and the highest (e = {int(hi['e'])}, "
            f"{int(hi['pairs']):,} pairs) spans {int(hi['token_space']):,}: the token space {trend}.")


def set_size_sentence(size: Claim, verbatim: Claim) -> str:
    """Whether the level sets' entropy follows their sizes more closely than their
    scores (``size``: the ``score_over_size`` claim), with the sizes of the
    verbatim set and of the sets below ``|s|/2`` (``verbatim``: the
    ``verbatim_rarer`` claim)."""
    if size.status == NOT_TESTABLE:
        return "With fewer than 3 level sets, the entropy's dependence on set size is not measured here."
    x = size.extra
    closer = "more closely than" if x["closer"] else "less closely than"
    text = (f"Across the level sets the entropy follows log₂ of the number of pairs in each set at "
            f"r = {x['r_size']:.2f}, {closer} it follows the score (r = {x['r_score']:.3f}).")
    if verbatim.status != NOT_TESTABLE:
        v = verbatim.extra
        compare = ("so verbatim answers are commoner here than partly memorized ones, whereas in the source "
                   "low scores are exponentially rarer than high ones" if verbatim.value > 0.5 else
                   "so here, as in the source, verbatim answers are rarer than partly memorized ones")
        text += (f" The verbatim set (e = 0) holds {v['verbatim']:,} pairs and the sets at e = 1 to "
                 f"{v['low_top']} hold {v['low_min']:,} to {v['low_max']:,} each: {compare}.")
    return text


def normalized_sentence(claim: Claim) -> str:
    """The normalized-entropy line (the ``normalized_falls`` claim) against the source's decreasing one."""
    if claim.status == NOT_TESTABLE:
        return ("The normalized entropy has no line here (fewer than 3 level sets with more than one "
                "distinct token); the source reports a decreasing one.")
    if claim.extra["slope"] < 0:
        return (f"The normalized entropy falls with e here (r = {claim.value:.3f}), as in the source, which "
                "reports a decreasing line.")
    return (f"The normalized entropy does not fall with e here (r = {claim.value:.3f}, slope "
            f"{claim.extra['slope']:.4f}), unlike the source, which reports a decreasing line.")


def length_r_sentence(claim: Claim) -> str:
    """r across answer lengths (the ``r_every_length`` claim), beside the source's
    range, and at how many lengths r is above the source's 0.9."""
    x = claim.extra
    paper = (f"In the source it ranges from {PAPER_LENGTH_R[0]:g} to {PAPER_LENGTH_R[1]:g} for "
             f"{PAPER_LENGTHS[0]} to {PAPER_LENGTHS[-1]} tokens.")
    if not x["with_line"]:
        return f"No answer length gives a line here (each has fewer than 3 level sets). {paper}"
    n = x["total"]
    missing = f" ({n - x['with_line']} of {n} lengths have no line)" if x["with_line"] < n else ""
    verdict = (f"above {PAPER_MIN_R:g} at every length" if x["above"] == n else
               f"above {PAPER_MIN_R:g} at {x['above']} of {n} lengths")
    return (f"Across answer lengths, r ranges from {x['r_min']:.2f} to {x['r_max']:.2f}{missing}: {verdict}. "
            f"{paper}")


#: how the intercept moves across answer lengths (the claim's ``trend``), in words
TREND_WORDS = {
    "flat": "Here it hardly moves", "rises": "Here it grows too, at every step",
    "rises overall": "Here it grows from the shortest to the longest answers, though not at every step",
    "falls": "Here it goes the other way",
}


def intercept_trend_sentence(table: pd.DataFrame, claim: Claim) -> str:
    """Whether the intercept grows with |s| as in the source (the
    ``intercept_grows_with_length`` claim's trend: it "hardly moves", "grows" at
    every step or only overall, or "goes the other way"); then each length's
    intercept."""
    values = table["intercept"].to_numpy(dtype=float)
    listing = ", ".join(f"{v:.2f} at {s}" if np.isfinite(v) else f"no line at {s}"
                        for v, s in zip(values, table["set"]))
    if claim.status == NOT_TESTABLE:
        return f"Here the trend cannot be read, since not every length has a line: {listing}."
    return f"{TREND_WORDS[claim.extra['trend']]}: {listing}."


def end_entropy_sentence(claim: Claim) -> str:
    """Whether every line ends near the same entropy at e = |s| (the
    ``same_end_entropy`` claim: within ``SAME_END_BITS``), as the source's M(s_50) ≈ 11."""
    lead = (f"The source's other observation, that every line ends near the same entropy at e = |s| (about "
            f"{PAPER_END_ENTROPY:g} bits for OLMo-2),")
    if claim.status == NOT_TESTABLE:
        return f"{lead} cannot be checked here: no answer length has a level set at e = |s|."
    x = claim.extra
    holds = "holds here too" if x["holds"] else "does not hold here"
    note = f" ({x['missing']} of {x['total']} lengths have no level set at e = |s|)" if x["missing"] else ""
    return (f"{lead} {holds}: the level set at e = |s| has {x['lo']:.1f} to {x['hi']:.1f} bits "
            f"across lengths{note}.")


def strategy_sentence(table: pd.DataFrame, claim: Claim) -> str:
    """Whether r stays above the source's 0.9 under every strategy, on this run (the
    ``r_every_strategy`` claim) and in the source's Table 4 (``table``'s ``paper r``)."""
    x = claim.extra
    paper_min = float(table["paper r"].min())
    paper = (f"the source's r is at least {paper_min:.3f} under every strategy" if paper_min > PAPER_MIN_R
             else f"the source's r falls to {paper_min:.3f}")
    if not x["with_line"]:
        return f"No strategy gives a line on the lab model (each has fewer than 3 level sets), where {paper}."
    n, high = x["total"], x["above"]
    missing = f" ({n - x['with_line']} of {n} have no line)" if x["with_line"] < n else ""
    verdict = (f"it stays above {PAPER_MIN_R:g} under every one, as in the source, where {paper}" if high == n
               else f"it is above {PAPER_MIN_R:g} under {high} of {n}, where {paper}")
    return (f"On the lab model r ranges from {x['r_min']:.2f} to {x['r_max']:.2f} across the {n} strategies"
            f"{missing}: {verdict}.")


def sample_size_sentence(sens: pd.DataFrame, spread: Claim, lower: Claim) -> str:
    """Appendix E.1 in words: whether small samples move the intercept more than
    large ones (``spread``: the ``small_samples_spread`` claim), and whether the
    mean intercept is lower at the smallest size (``lower``: the
    ``small_samples_lower`` claim), as the source's falls towards −6."""
    paper = (f"the source, where it falls from a plateau towards {PAPER_SMALL_SAMPLE_INTERCEPT:g} below "
             f"about {PAPER_MIN_DI_SAMPLES:,} pairs").replace("-", "−")
    if sens.empty:
        return ("No subsample has a line (each has fewer than 3 level sets), so the sample-size check says "
                "nothing here.")
    s = sample_size_summary(sens)
    small, large = s.iloc[0], s.iloc[-1]
    if len(s) == 1:
        return (f"Only subsamples of {int(small['size']):,} pairs have a line; between their 10th and 90th "
                f"percentile the intercept spans {small['spread']:.2f} bits.")
    verdict = ("Small samples move the intercept more than large ones" if spread.value > 0
               else "Here small samples do not move the intercept more than large ones")
    lower = (f"lower at the smallest size, as in {paper}" if lower.value < 0 else
             f"not lower at the smallest size, unlike {paper}")
    return (f"{verdict}: between the 10th and 90th percentile of subsamples it spans {small['spread']:.2f} "
            f"bits at {int(small['size']):,} pairs and {large['spread']:.2f} at {int(large['size']):,}. The "
            f"mean intercept goes from {small['mean']:.2f} to {large['mean']:.2f}: {lower}.")


def correct_count(table: pd.DataFrame, kind: str | None = None) -> str:
    """Candidate sets called right (of kind ``"lab"`` or ``"real"``, or all) among
    ALL candidate sets, an undecided set counting as a miss (the rule made no call):
    ``"k of n"``, with ``"(u undecided, counted as misses)"`` where it leaves some."""
    c = table[table["role"] == "candidate"]
    if kind is not None:
        c = c[c["kind"] == kind]
    right, d, n = int(c["correct"].sum()), int(c["correct"].notna().sum()), len(c)
    return f"{right} of {n}" + (f" ({n - d} undecided, counted as misses)" if d < n else "")


def paper_correct_count(table1: pd.DataFrame) -> str:
    """``"k of n"`` rows of the source's Table 1 whose prediction matches the ground truth."""
    return f"{int((table1['prediction'] == table1['ground_truth']).sum())} of {len(table1)}"


def extrapolation_sentence(inferences: Sequence[Inference], table: pd.DataFrame) -> str:
    """Why the lab's calls rest on a thin base: how far the intercept is
    extrapolated (the lowest populated score), how many level sets a set holds,
    and how many bits the slope's bootstrap interval moves the intercept. The lead
    reads "Why the rule does no better here" below 75% correct lab calls."""
    lab = [i for i in inferences if i.table["kind"].eq("lab").all()]
    cands = table[(table["kind"] == "lab") & (table["role"] == "candidate")]
    if not lab or cands.empty:
        return "No lab model was decided."
    lead = ("Why the rule does no better here:" if cands["correct"].mean() < 0.75 else
            "Right or wrong, the lab's calls rest on a thin base:")
    results = [res for i in lab for res in i.results.values()]
    lowest = min(int(res.levels["e"].min()) for res in results)
    levels = f"{int(cands['level sets'].min())} to {int(cands['level sets'].max())}"
    if lowest == 0:
        return (f"{lead} some lab set reaches e = 0, so its intercept rests on a measured level set; a set "
                f"has {levels} level sets.")
    shifts = [(res.row()["slope hi"] - res.row()["slope lo"]) * res.levels["e"].mean()
              for res in results if res.fit is not None]
    shifts = [s for s in shifts if np.isfinite(s)]
    shift = (f" The line passes through the mean score of its level sets, so moving the slope across its "
             f"bootstrap 95% interval moves the intercept by {np.median(shifts):.1f} bits (median over the "
             "lab's sets)." if shifts else "")
    return (f"{lead} in every lab set the lowest populated score is {lowest} or more, and a set has {levels} "
            "level sets. The intercept is the line's value at e = 0, so it is an extrapolation across every "
            f"score that no answer reached.{shift}")


def intercept_slope_sentence(claim: Claim) -> str:
    """Whether a set's intercept and slope move against each other, as the source
    notes for a fixed model and dataset (Appendix C.7): the ``intercept_slope_opposed``
    claim's median r over sets ("in opposite directions", "together" or "loosely")."""
    if claim.status == NOT_TESTABLE:
        return "No set has enough bootstrap lines to say how its intercept and slope move."
    how = claim.extra["how"]
    words = {"opposite": "move in opposite directions", "together": "move in the same direction",
             "loose": "are only loosely tied"}[how]
    agree = "as" if how == "opposite" else "where"
    source = "notes" if how == "opposite" else "sees the intercept rise as the slope falls"
    return (f"Within a set, the bootstrap's intercepts and slopes {words} (median r = {claim.value:.2f} over "
            f"{claim.n} sets), {agree} the source {source} for a fixed model and dataset (Appendix C.7).")


def tau_sentence(table: pd.DataFrame) -> str:
    """Each model's τ in this run."""
    taus = table.groupby("model", sort=False)["tau"].first()
    parts = [f"{t:.2f} for {m}" if np.isfinite(t) else f"undefined for {m} (its reference set has no line)"
             for m, t in taus.items()]
    return "This run's τ is " + "; ".join(parts) + "."


def model_lines(table: pd.DataFrame, kind: str = "real") -> str:
    """One Markdown paragraph per model of ``kind``: each set's r and intercept with
    its bootstrap interval."""
    sub = table[table["kind"] == kind]
    if sub.empty:
        return "No model of this kind was run."
    lines = []
    for model, rows in sub.groupby("model", sort=False):
        lines.append(f"**{model}**: " + "; ".join(
            f"{r.set}: no line ({r['level sets']} level sets)" if not np.isfinite(r.r) else
            f"{r.set}: r = {r.r:.2f}, intercept {r.intercept:.2f} "
            f"[{r['intercept lo']:.2f}, {r['intercept hi']:.2f}]"
            for _, r in rows.iterrows()) + ".")
    return "\n\n".join(lines)


def pooling_sentence(claim: Claim) -> str:
    """The source's central contrast (the ``pooling`` claim): does pooling into level
    sets strengthen the relation of entropy to the score (a larger |r| than
    instance by instance)?"""
    ri = claim.extra["r_instance"]
    head = f"On the lab model, entropy taken one answer at a time correlates with the score at r = {ri:.2f}"
    if claim.status == NOT_TESTABLE:
        return head + "; the level sets are too few for a line, so pooling cannot be judged here."
    verdict = ("pooling strengthens the relation, as the source's central contrast says" if claim.value > 0
               else "pooling does not strengthen the relation here, against the source's central contrast")
    return f"{head}; pooled into level sets, at r = {claim.extra['r_set']:.3f}: {verdict}."


def agreement_sentence(table: pd.DataFrame) -> str:
    """How many candidate calls at least ``AGREEMENT_LEVEL`` of the re-centred
    resamples make too, and so how many a different sample could flip."""
    c = table[(table["role"] == "candidate") & table["agreement"].notna()]
    if c.empty:
        return "No candidate set was decided, so there is no call for a resample to flip."
    stable = int((c["agreement"] >= AGREEMENT_LEVEL).sum())
    return (f"{stable} of {len(c)} calls are made by at least {AGREEMENT_LEVEL:.0%} of the re-centred "
            f"resamples; a different sample of the same size could flip the other {len(c) - stable}.")
