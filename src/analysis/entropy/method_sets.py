"""A sample's level sets analysed: its lines, bootstrap and tables, and the
dataset-inference decision over sets.

:func:`analyse_set` turns a scored sample into a :class:`SetResult` (level sets,
the entropy, zlib and normalized-entropy lines, the bootstrap);
:func:`decide_membership` applies the source's rule with this chapter's τ to a
model's sets. Pure functions over data frames: no model, no English. The one
costly step, the bootstrap of a set's line, is computed once per sample and
settings and then read from the artifact cache (:func:`set_bootstrap`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.core.cache import memoized
from analysis.entropy.candidates import CandidateSet
from analysis.entropy.method import (
    bootstrap_fits,
    di_predict,
    fit_levels,
    instance_metrics,
    level_set_table,
    recentre,
    reference_threshold,
    trivial,
)
from analysis.entropy.params import EntropyError
from analysis.stats.lines import Fit, fit_line, percentile_interval
from analysis.stats.result import StatsError


def kept(scored: pd.DataFrame) -> pd.DataFrame:
    """The pairs that count: answered without error and not trivial."""
    return scored[scored["error"].isna() & ~scored["trivial"]]


def filter_summary(scored: pd.DataFrame) -> pd.DataFrame:
    """How many answered pairs each reading of the LCS filter drops."""
    ok = scored[scored["error"].isna()]
    rows = []
    for label, mode in (("written: LCS(p, s) ≥ |s|/2", "written"),
                        ("described: LCS(p, r) ≥ |s|/2", "described"), ("none", "none")):
        dropped = trivial(ok, mode)
        rows.append({"filter": label, "pairs": len(ok), "dropped": int(dropped.sum()),
                     "share dropped": float(dropped.mean()) if len(ok) else np.nan})
    return pd.DataFrame(rows)


@dataclass
class SetResult:
    """One sample's level sets, entropy line, zlib line and bootstrap; ``sample``
    keeps the kept pairs' ``score`` and ``suffix`` (for the rarefied and
    bias-corrected lines of :mod:`analysis.entropy.robust`), None where not kept."""

    name: str
    levels: pd.DataFrame
    fit: Fit | None
    zlib_fit: Fit | None
    norm_fit: Fit | None
    boot: pd.DataFrame
    pairs: int
    sample: pd.DataFrame | None = None

    def centred(self, column: str) -> np.ndarray:
        """Bootstrap values of ``column`` shifted so their median is the point estimate.

        Resampling pairs with replacement repeats some of them, and a level set
        made of repeated pairs holds fewer distinct tokens, so its plug-in entropy
        is lower: the raw bootstrap intercepts (and r) sit below the estimate from
        the sample itself. Re-centring keeps the bootstrap's spread and removes
        that shift. Without a line, the values are empty.
        """
        values = self.boot[column].to_numpy(dtype=float)
        if self.fit is None or values.size == 0:
            return np.zeros(0)
        return recentre(values, getattr(self.fit, column))

    def row(self) -> dict:
        """The set's line and re-centred bootstrap intervals as one table row (NaN
        without a line)."""
        lo_i, hi_i = percentile_interval(self.centred("intercept"))
        lo_s, hi_s = percentile_interval(self.centred("slope"))
        lo_r, hi_r = percentile_interval(np.clip(self.centred("r"), -1, 1))
        f = self.fit
        return {
            "set": self.name, "pairs": self.pairs, "level sets": len(self.levels),
            "r": f.r if f else np.nan, "r lo": lo_r, "r hi": hi_r,
            "intercept": f.intercept if f else np.nan, "intercept lo": lo_i, "intercept hi": hi_i,
            "slope": f.slope if f else np.nan, "slope lo": lo_s, "slope hi": hi_s,
        }


#: the modules whose code computes a set's bootstrap (:func:`set_bootstrap`)
BOOTSTRAP_CODE = ("analysis.entropy.method", "analysis.entropy.params")

#: :func:`~analysis.entropy.method.bootstrap_fits`, computed once per scores, answers and
#: settings (a thousand resamples of a set's line, each a sparse product and a fit)
set_bootstrap = memoized("entropy-bootstrap", code=BOOTSTRAP_CODE, packages=("scipy",))(bootstrap_fits)


def analyse_set(name: str, scored: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
                min_pairs: int = 1, base: float = 2.0) -> SetResult:
    """Level sets, the entropy, zlib and normalized-entropy lines, and a bootstrap
    of the entropy line, over the kept pairs of ``scored``.

    A sample whose answers fall into fewer than 3 level sets (a model near
    chance gives almost every answer the score ``|s|``) has no line: its fits
    are None and its row NaN, so a chapter can say so instead of stopping.
    A sample with no kept pair at all is an error. The bootstrap is computed once
    per kept pairs and settings (:func:`set_bootstrap`).
    """
    k = kept(scored)
    if k.empty:
        raise EntropyError(f"set {name!r}: no pair survived the errors and the LCS filter; nothing to fit")
    scores = k["score"].astype(int).to_numpy()
    table = level_set_table(scores, list(k["suffix"]), list(k["suffix_text"]), base)

    def maybe(column):
        try:
            return fit_levels(table, column, min_pairs)
        except EntropyError:
            return None

    boot = set_bootstrap(scores, list(k["suffix"]), n_boot=n_boot, seed=seed, base=base, min_pairs=min_pairs)
    sample = k[["score", "suffix"]].reset_index(drop=True)
    return SetResult(name, table, maybe("entropy"), maybe("zlib"), maybe("norm_entropy"), boot, len(k),
                     sample)


def sample_size_sensitivity(scored: pd.DataFrame, sizes: Sequence[int], repeats: int = 20, seed: int = 0,
                            base: float = 2.0) -> pd.DataFrame:
    """Slope and intercept on random subsamples of the kept pairs (Appendix E.1):
    ``repeats`` subsamples without replacement at each size no larger than the
    pool. Returns one row per (size, repeat) with ``slope``, ``intercept``, ``r``."""
    k = kept(scored)
    scores = k["score"].astype(int).to_numpy()
    suffixes = list(k["suffix"])
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        if size > len(k):
            continue
        for rep in range(repeats):
            idx = rng.choice(len(k), size=size, replace=False)
            table = level_set_table(scores[idx], [suffixes[i] for i in idx], base=base)
            try:
                f = fit_levels(table)
            except EntropyError:
                continue
            rows.append({"size": size, "repeat": rep, "slope": f.slope, "intercept": f.intercept, "r": f.r})
    return pd.DataFrame(rows, columns=["size", "repeat", "slope", "intercept", "r"])


def instance_fits(scored: pd.DataFrame, base: float = 2.0) -> dict[str, Fit]:
    """Algorithm 2: per-instance entropy and zlib ratio against the score."""
    m = instance_metrics(kept(scored), base)
    try:
        return {"entropy": fit_line(m["score"], m["entropy"], what="pairs"),
                "zlib": fit_line(m["score"], m["zlib"], what="pairs")}
    except StatsError as err:
        raise EntropyError(f"instance level: {err}") from err


def fit_table(results: Mapping[str, SetResult], other_lines: bool = False) -> pd.DataFrame:
    """One row per sample: :meth:`SetResult.row`, and with ``other_lines`` the r of
    its zlib and normalized-entropy lines."""
    rows = []
    for res in results.values():
        row = res.row()
        if other_lines:
            row["zlib r"] = res.zlib_fit.r if res.zlib_fit else np.nan
            row["normalized r"] = res.norm_fit.r if res.norm_fit else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def size_tracking_r(levels: pd.DataFrame) -> float:
    """Pearson r, over the level sets, between each set's entropy and log2 of the
    number of pairs in it: how far the entropy follows the set's size (a plug-in
    entropy grows with the tokens it is computed on) rather than its score. NaN
    with fewer than 3 level sets or where either column is constant."""
    try:
        fit = fit_line(np.log2(levels["pairs"].to_numpy(float)), levels["entropy"])
    except StatsError:  # fewer than 3 level sets, or every set the same size
        return float("nan")
    return fit.r if np.ptp(levels["entropy"]) > 0 else float("nan")


def strategy_table(results: Mapping[str, SetResult], table4: pd.DataFrame) -> pd.DataFrame:
    """One row per strategy: this run's pairs, r, intercept and slope beside the
    source's Table 4."""
    paper = table4.set_index("strategy")
    rows = []
    for name, res in results.items():
        row = res.row()
        rows.append({"strategy": name, "pairs": res.pairs, "r": row["r"], "intercept": row["intercept"],
                     "slope": row["slope"], "paper r": paper.loc[name, "r"],
                     "paper intercept": paper.loc[name, "intercept"],
                     "paper slope": paper.loc[name, "slope"]})
    return pd.DataFrame(rows)


def sample_size_summary(sens: pd.DataFrame) -> pd.DataFrame:
    """Per subsample size: subsamples with a line, and the mean, 10th and 90th
    percentile and 10–90 spread of their intercepts."""
    g = sens.groupby("size")["intercept"]
    out = pd.DataFrame({"subsamples": g.size(), "mean": g.mean(), "p10": g.quantile(0.1),
                        "p90": g.quantile(0.9)})
    out["spread"] = out["p90"] - out["p10"]
    return out.reset_index()


@dataclass
class Stream:
    """The part of a lab run's training stream the chapter samples windows from.

    ``tokens`` maps a document (or injected sequence) id to its token ids,
    ``copies`` to how often the stream holds it and ``source`` to
    ``"background"``, ``"popular"`` or ``"injected"``; ``left_out`` counts the
    stream's documents of other kinds (facts, problems), which are not sampled.
    """

    tokens: dict[str, list[int]]
    copies: dict[str, int]
    source: dict[str, str]
    left_out: dict[str, int]


def stream_composition(stream: Stream) -> pd.DataFrame:
    """One row per source of the sampled stream: documents, fewest and most copies,
    and tokens (once, and counting copies)."""
    frame = pd.DataFrame({"source": list(stream.source.values()), "copies": list(stream.copies.values()),
                          "tokens": [len(t) for t in stream.tokens.values()]})
    frame["tokens in stream"] = frame["tokens"] * frame["copies"]
    out = frame.groupby("source", sort=False).agg(
        documents=("copies", "size"), fewest=("copies", "min"), most=("copies", "max"),
        tokens=("tokens", "sum"), **{"tokens in stream": ("tokens in stream", "sum")})
    return out.reset_index()


def source_table(scored: pd.DataFrame, stream: Stream) -> pd.DataFrame:
    """Per source of the stream: pairs drawn, pairs kept, and the mean and median
    memorization score of the kept pairs."""
    source = scored["doc_id"].map(stream.source)
    keep = scored.index.isin(kept(scored).index)
    frame = pd.DataFrame({"source": source, "kept": keep, "score": scored["score"].where(keep)})
    out = frame.groupby("source", sort=False).agg(
        **{"pairs drawn": ("kept", "size"), "pairs kept": ("kept", "sum"), "mean score": ("score", "mean"),
           "median score": ("score", "median")})
    order = [s for s in ("background", "popular", "injected") if s in out.index]
    return out.loc[order + [s for s in out.index if s not in order]].reset_index()


@dataclass
class Inference:
    """One model's dataset inference: each set's :class:`SetResult`, the decision
    table and, where the run scored them, each set's per-pair membership scores
    (:func:`analysis.entropy.mia.attack_table` rows, by set label)."""

    model: str
    results: dict[str, SetResult]
    table: pd.DataFrame
    attacks: dict[str, pd.DataFrame] = field(default_factory=dict)


def undecided_reason(res: SetResult, tau: float) -> str | None:
    """Why the rule makes no call on a set (None when it makes one): the set has
    fewer than 3 level sets, so no line and no intercept (which scores its answers
    reached, and how many pairs), or its model's reference set has none, so no τ."""
    if res.fit is None:
        es = res.levels["e"].astype(int).tolist()
        where = ", ".join(f"e = {e} ({n:,} pairs)" for e, n in zip(es, res.levels["pairs"].astype(int)))
        return (f"{len(es)} level set{'s' if len(es) != 1 else ''} ({where or 'none'}) of "
                f"{res.pairs:,} kept pairs: a line needs 3")
    if not np.isfinite(tau):
        return "its model's reference set has no line, so there is no τ"
    return None


def decide_membership(results: Mapping[str, SetResult], sets: Sequence[CandidateSet], model: str
                      ) -> pd.DataFrame:
    """The source's decision rule with this chapter's τ: τ is the
    :data:`DI_QUANTILE` quantile of the reference set's re-centred bootstrap
    intercepts (:func:`reference_threshold`); every set with a line is predicted a
    member when its intercept exceeds τ (:func:`di_predict`). ``agreement`` is the
    share of its re-centred resamples that make the same call. A set without a line,
    or a model whose reference has none, gets NaN, and ``undecided`` says why
    (:func:`undecided_reason`; None for a set the rule decides)."""
    reference = [c.label for c in sets if c.reference]
    if len(reference) != 1:
        raise EntropyError(f"exactly one set must be the reference, got {reference}")
    ref = results[reference[0]].centred("intercept")
    tau = reference_threshold(ref) if len(ref) else np.nan
    rows = []
    for cand in sets:
        res = results[cand.label]
        row = res.row()
        decidable = res.fit is not None and np.isfinite(tau)
        prediction = di_predict(res.fit.intercept, tau) if decidable else np.nan
        boot = res.centred("intercept")
        agreement = float(np.mean((boot > tau) == bool(prediction))) if decidable and len(boot) else np.nan
        row.update(model=model, truth=cand.truth, assumption=cand.assumption, tau=tau,
                   role="reference" if cand.reference else "candidate", prediction=prediction,
                   agreement=agreement, undecided=undecided_reason(res, tau))
        rows.append(row)
    return pd.DataFrame(rows)


def di_table(inferences: Sequence[Inference]) -> pd.DataFrame:
    """Every model's decision table in one, with ``correct`` (1 when the prediction
    matches the truth, 0 when not, NaN for a set the rule leaves undecided: no call
    is neither right nor wrong, and the tallies count such sets apart)."""
    table = pd.concat([i.table for i in inferences], ignore_index=True)
    decided = table["prediction"].notna()
    table["correct"] = np.where(decided, (table["prediction"] == table["truth"]).astype(float), np.nan)
    return table


def lowest_score(inferences: Sequence[Inference]) -> int:
    """The lowest memorization score any set of these models reached."""
    return min(int(res.levels["e"].min()) for i in inferences for res in i.results.values())
