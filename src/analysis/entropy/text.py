"""The entropy chapter's English: each claim's statement and rendering, and the sentences on the setup,
the lab's sample, the lines and dataset inference. This module gathers the numbers and the claims'
decisions; ``sentences.j2`` words them (:mod:`analysis.core.prose`) and never decides again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from analysis.core import claim_text, prose
from analysis.core.claims import HOLDS, NOT_TESTABLE, Claim
from analysis.entropy import params as C
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
from analysis.entropy.run import other_temperature
from analysis.stats.lines import Fit
from analysis.stats.mia import LOW_FPR

#: the chapter's sentences (``sentences.j2``), for this module, :mod:`.text_di` and :mod:`.text_robust`
S = prose.sentences("entropy", **prose.constants(C), NOT_TESTABLE=NOT_TESTABLE, HOLDS=HOLDS, LOW_FPR=LOW_FPR)

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
#: each claim's statement of what the source found
STATEMENTS = {id: S.statement(id=id) for id in VALUES}
#: how the intercept moves across answer lengths (the claim's ``trend``), in words
TREND_WORDS = {t: S.trend(trend=t) for t in ("flat", "rises", "rises overall", "falls")}


def value_text(claim: Claim) -> str:
    """This run's value and interval in words (the rest: :func:`analysis.core.claim_text.render`)."""
    label, kind, _ = VALUES[claim.id]
    return S.value(claim=claim, label=label, kind=kind)


def render(claim: Claim) -> str:
    """A claim for the page (Markdown), in the book's one voice with this chapter's value words."""
    return claim_text.render(claim, value_text=value_text(claim))


def method_constants() -> dict[str, str]:
    """The source's and the method's constants as the chapter's prose states them (for glue)."""
    return {"paper_min_r": f"{C.PAPER_MIN_R:g}", "paper_tau_pythia": f"{C.PAPER_TAU['Pythia']:g}",
            "paper_tau_olmo": f"{C.PAPER_TAU['OLMo-2']:g}", "paper_min_di": f"{C.PAPER_MIN_DI_SAMPLES:,}",
            "di_quantile": prose.ordinal(round(100 * C.DI_QUANTILE)), "mink_share": f"{MINK_SHARE:.0%}",
            "paper_suffix": str(C.PAPER_SUFFIX_TOKENS), "paper_table4_pairs": f"{C.PAPER_TABLE4_PAIRS:,}",
            "paper_instance_r": f"{C.PAPER_INSTANCE_R:g}", "di_coverage": f"{1 - C.DI_QUANTILE:.0%}",
            "paper_small_intercept": prose.minus(f"{C.PAPER_SMALL_SAMPLE_INTERCEPT:g}"),
            "low_fpr": f"{LOW_FPR:.0%}", "paper_binnings": prose.and_join(C.PAPER_BINNINGS)}


def split_phrase(prefix_tokens: int, suffix_tokens: int) -> str:
    """How a run's ``|p| : |s|`` compares with the source's (100 : 50)."""
    return S.split(p=prefix_tokens, s=suffix_tokens, ours=Fraction(prefix_tokens, suffix_tokens),
                   paper=Fraction(C.PAPER_PREFIX_TOKENS, C.PAPER_SUFFIX_TOKENS))


def decoding_phrase(temperature: float) -> str:
    """``"greedily"`` at temperature 0, else ``"at temperature t"``."""
    return S.decoding(t=temperature)


def greedy_sentence(table4: pd.DataFrame) -> str:
    """What the source's Table 4 says about greedy decoding against its main temperature."""
    t4 = table4.set_index("strategy")["r"]
    return S.greedy(greedy=float(t4["Temp=0"]), main=float(t4[f"Temp={C.PAPER_TEMPERATURE:g}"]))


def setup_table(params: Mapping) -> pd.DataFrame:
    """The Setup table: this run's lengths, sample sizes, decoding, filter and bootstrap, and the source's."""
    p = params
    return pd.DataFrame({
        "parameter": ["prompt |p| / answer |s| (tokens)", "pairs per sample", "decoding", "trivial filter",
                      "entropy unit", "pairs for dataset inference", "bootstrap resamples"],
        "this run": [f"lab {p['lab_prefix_tokens']} / {p['lab_suffix_tokens']}; real models "
                     f"{p['prefix_tokens']} / {p['suffix_tokens']}",
                     f"lab {p['n_lab']:,} (main), {p['n_di_lab']:,} per set; real models "
                     f"{p['n_real']:,} per set",
                     f"temperature {p['temperature']:g}; the lab also "
                     f"{decoding_phrase(other_temperature(p['temperature']))}",
                     p["lcs_filter"], "bits", f"{p['n_di_lab']:,} (lab), {p['n_real']:,} (real models)",
                     str(p["n_boot"])],
        "paper": [f"{C.PAPER_PREFIX_TOKENS} / {C.PAPER_SUFFIX_TOKENS}",
                  ", ".join(f"{n:,} ({m})" for m, n in C.PAPER_N_PAIRS.items()),
                  f"temperature {C.PAPER_TEMPERATURE:g}; Table 4 varies it", "written: LCS(p, s) ≥ |s|/2",
                  "not stated", f"at least {C.PAPER_MIN_DI_SAMPLES:,}", "none"],
    })


def setup_sentences(params: Mapping, table4: pd.DataFrame) -> str:
    """The Setup section's paragraph: this run's lengths and decoding against the source's."""
    return S.setup(p=params, paper=C.PARAMS.profiles["paper"], greedy=greedy_sentence(table4),
                   split=split_phrase(params["lab_prefix_tokens"], params["lab_suffix_tokens"]))


def stream_sentence(stream: Stream) -> str:
    """What the lab's main sample is drawn from, with counts and copies."""
    return S.stream(parts=stream_composition(stream).to_dict("records"), left_out=stream.left_out)


def window_sentence(stream: Stream, window: int) -> str:
    """How many inserted sequences hold a whole window of ``window = |p| + |s|`` tokens."""
    lengths = [len(t) for k, t in stream.tokens.items() if stream.source[k] == "injected"]
    return S.window(n=len(lengths), median=np.median(lengths) if lengths else None, window=window,
                    fits=sum(n >= window for n in lengths))


def low_score_sentence(scored: pd.DataFrame, stream: Stream, claim: Claim) -> str:
    """Where the low scores come from, and whether they are rarer (``claim``: ``low_scores_rarer``)."""
    k = kept(scored)
    cut = C.LOW_SCORE_SHARE * len(k["suffix"].iloc[0]) if len(k) else 0
    low = k[k["score"] < cut]
    injected = int((low["doc_id"].map(stream.source) == "injected").sum())
    return S.low_score(n=len(k), low=len(low), cut=cut, injected=injected, claim=claim)


def verbatim_sentence(scored_by_decoding: Mapping[str, pd.DataFrame]) -> str:
    """How much the model reproduces verbatim (score 0) under each decoding, and the median score."""
    ks = {label: kept(scored) for label, scored in scored_by_decoding.items()}
    return S.verbatim(rows=[dict(label=label, n=len(k), n0=int((k["score"] == 0).sum()),
                                 median=k["score"].median(), s=len(k["suffix"].iloc[0]) if len(k) else 0)
                            for label, k in ks.items()])


def fit_value(fit: Fit | None, field: str, digits: int = 3) -> str:
    """A fitted value for prose, or a plain statement that there is no line."""
    return S.fit_value(x=getattr(fit, field) if fit is not None else None, digits=digits)


def merge_intervals(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """For display: merge each ``x``, ``x lo``, ``x hi`` triple of columns into one ``x`` column reading
    ``"v [lo, hi]"`` (``"no line"`` where ``v`` is NaN)."""
    out = table.copy()
    for col in [c for c in table.columns if f"{c} lo" in table.columns and f"{c} hi" in table.columns]:
        out[col] = [f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]" if np.isfinite(v) else "no line"
                    for v, lo, hi in zip(table[col], table[f"{col} lo"], table[f"{col} hi"])]
        out = out.drop(columns=[f"{col} lo", f"{col} hi"])
    return out


def strength(r: float) -> str:
    """A correlation in words: weak (|r| < 0.3), moderate (< 0.7) or strong, positive or negative."""
    return S.strength(r=r)


def instance_sentence(fits: Mapping[str, Fit]) -> str:
    """Algorithm 2's result in words, beside the source's "positive, yet weak" r."""
    return S.instance(e=fits["entropy"].r, z=fits["zlib"].r)


def stronger_line(which: str | None) -> str:
    """Which set-level line is the stronger by r (:func:`~analysis.entropy.method.stronger`), in words."""
    return S.stronger_line(which=which)


def paper_lines_sentence() -> str:
    """The source's Figure 2 in words: both r, and which line is the stronger by r."""
    return S.paper_lines(which=stronger(C.PAPER_SET_R["entropy"], C.PAPER_SET_R["zlib"]))


def linearity_sentences(main: SetResult, other_label: str, other: SetResult, linearity: Claim,
                        zlib: Claim) -> str:
    """The set-level line against the source's 0.9 (``linearity``: ``em_linearity``), r under the other
    decoding, and the zlib line against the entropy line (``zlib``: ``entropy_beats_zlib``)."""
    return S.linearity(levels=len(main.levels), fit=main.fit, claim=linearity, other_label=other_label,
                       other_r=getattr(other.fit, "r", None), zlib_r=getattr(main.zlib_fit, "r", None),
                       which=zlib.extra.get("stronger"))


def token_space_sentence(levels: pd.DataFrame) -> str:
    """The token space |T_e| of the lowest and highest level set, and whether it grows with the score."""
    ends = levels[["e", "pairs", "token_space"]].astype(int).iloc[[0, -1]] if len(levels) else levels
    return S.token_space(n=len(levels), ends=ends.to_dict("records"))


def set_size_sentence(size: Claim, verbatim: Claim) -> str:
    """Whether the level sets' entropy follows their sizes more closely than their scores (``size``:
    ``score_over_size``), with the sizes of the low sets (``verbatim``: ``verbatim_rarer``)."""
    return S.set_size(size=size, verbatim=verbatim)


def normalized_sentence(claim: Claim) -> str:
    """The normalized-entropy line (the ``normalized_falls`` claim) against the source's decreasing one."""
    return S.normalized(claim=claim)


def length_r_sentence(claim: Claim) -> str:
    """r across answer lengths (the ``r_every_length`` claim) beside the source's range."""
    return S.length_r(x=claim.extra)


def intercept_trend_sentence(table: pd.DataFrame, claim: Claim) -> str:
    """Whether the intercept grows with |s| as in the source (``intercept_grows_with_length``), then
    each length's intercept."""
    values = table["intercept"].to_numpy(dtype=float)
    return S.intercept_trend(claim=claim, points=list(zip(values, table["set"])))


def end_entropy_sentence(claim: Claim) -> str:
    """Whether every line ends near the same entropy at e = |s| (the ``same_end_entropy`` claim)."""
    return S.end_entropy(claim=claim)


def strategy_sentence(table: pd.DataFrame, claim: Claim) -> str:
    """Whether r stays above 0.9 under every strategy (``r_every_strategy``) and in the source's Table 4."""
    return S.strategy(x=claim.extra, paper_min=float(table["paper r"].min()))


def sample_size_sentence(sens: pd.DataFrame, spread: Claim, lower: Claim) -> str:
    """Appendix E.1 in words (``spread``: ``small_samples_spread``; ``lower``: ``small_samples_lower``)."""
    sizes = sample_size_summary(sens).to_dict("records") if not sens.empty else []
    return S.sample_size(sizes=sizes, spread=spread, lower=lower)


def correct_count(table: pd.DataFrame, kind: str | None = None) -> str:
    """Candidate sets (of ``kind``, or all) called right among all of them, an undecided set a miss."""
    c = table[(table["role"] == "candidate") & ((table["kind"] == kind) if kind is not None else True)]
    return S.correct_count(right=int(c["correct"].sum()), decided=int(c["correct"].notna().sum()), n=len(c))


def paper_correct_count(table1: pd.DataFrame) -> str:
    """``"k of n"`` rows of the source's Table 1 whose prediction matches the ground truth."""
    return f"{int((table1['prediction'] == table1['ground_truth']).sum())} of {len(table1)}"


def extrapolation_sentence(inferences: Sequence[Inference], table: pd.DataFrame) -> str:
    """Why the lab's calls rest on a thin base: how far the intercept is extrapolated, how many level
    sets a set holds, and how far the slope's bootstrap interval moves the intercept."""
    cands = table[(table["kind"] == "lab") & (table["role"] == "candidate")]
    results = [res for i in inferences if i.table["kind"].eq("lab").all() for res in i.results.values()]
    shifts = [(res.row()["slope hi"] - res.row()["slope lo"]) * res.levels["e"].mean()
              for res in results if res.fit is not None]
    shifts = [s for s in shifts if np.isfinite(s)]
    lowest = min((int(res.levels["e"].min()) for res in results), default=None) if len(cands) else None
    levels = cands["level sets"].agg(["min", "max"]).astype(int).tolist() if len(cands) else None
    return S.extrapolation(lowest=lowest, share=cands["correct"].mean(), levels=levels,
                           shift=np.median(shifts) if shifts else None)


def intercept_slope_sentence(claim: Claim) -> str:
    """Whether a set's intercept and slope move against each other (``intercept_slope_opposed``)."""
    return S.intercept_slope(claim=claim)


def tau_sentence(table: pd.DataFrame) -> str:
    """Each model's τ in this run."""
    return S.tau(taus=list(table.groupby("model", sort=False)["tau"].first().items()))


def model_lines(table: pd.DataFrame, kind: str = "real") -> str:
    """One Markdown paragraph per model of ``kind``: each set's r and intercept with its interval."""
    by_model = table[table["kind"] == kind].groupby("model", sort=False)
    return S.model_lines(models=[(m, rows.to_dict("records")) for m, rows in by_model])


def pooling_sentence(claim: Claim) -> str:
    """The source's central contrast (the ``pooling`` claim): does pooling strengthen the relation?"""
    return S.pooling(claim=claim)


def agreement_sentence(table: pd.DataFrame) -> str:
    """How many candidate calls at least ``AGREEMENT_LEVEL`` of the re-centred resamples make too."""
    c = table[(table["role"] == "candidate") & table["agreement"].notna()]
    return S.agreement(stable=int((c["agreement"] >= C.AGREEMENT_LEVEL).sum()), n=len(c))
