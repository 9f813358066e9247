"""The source's rules applied to a frame of completions: scores, rates, gaps.

:func:`score` scores every completion of a frame (:mod:`.method`), :func:`rates`
turns the scores into a memorization rate per model and phrase type with Wilson
intervals (:func:`exclusion_counts` says why the other rows are left out),
:func:`distance_gap` compares whole distributions of distances (the
book's addition), :func:`type_gap` the two types' rates, and
:func:`rates_by_copies` sets the lab's rates beside the copies each phrase had in
training. Pure functions: no printing, plotting or file access.

One departure from the source: API errors. The scorer stored
``"[ERROR] <exception>"`` as the completion text (``query_completion``), so errors
were scored as non-matches and counted in the denominator. Here they are moved to
an ``error`` column and excluded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from analysis.phrases.errors import PhrasesError
from analysis.phrases.method import is_error_text, is_refusal, match, needs_requery
from analysis.phrases.source import MODES, REFUSAL_MODES, THRESHOLD, TYPES
from analysis.stats.intervals import wilson_interval
from analysis.stats.proportions import greater_p, rate_difference
from analysis.stats.result import Estimate

LAB_RATE_COLUMNS = ["model", "params", "copies", "phrases", "excluded", "matched", "total", "rate", "ci_lo",
                    "ci_hi"]
#: one-sided level of the test that a copy level's rate exceeds the controls'
SEPARATION_ALPHA = 0.05


def phrase_table(phrases: pd.DataFrame | Sequence[Mapping]) -> pd.DataFrame:
    """A phrase list (a frame or records with ``id``, ``start``, ``end``) indexed
    by ``id``, first row of each id kept. A path is refused: read the file with
    :func:`analysis.phrases.files.load_phrases` first."""
    if isinstance(phrases, (str, os.PathLike)):
        raise PhrasesError(f"phrases: got the path {str(phrases)!r}; read it with load_phrases first")
    table = pd.DataFrame(phrases)
    missing = {"id", "start", "end"} - set(table.columns)
    if missing:
        raise PhrasesError(f"phrases lack columns {sorted(missing)}")
    return table.drop_duplicates("id").set_index("id")


def text_or_empty(value) -> str:
    return value if isinstance(value, str) else ""


def _has_value(value) -> bool:
    """Whether an ``error`` cell holds something (not None, NaN, NA or "")."""
    if isinstance(value, str):
        return value != ""
    return value is not None and not pd.isna(value) and bool(value)


def _error_column(df: pd.DataFrame) -> pd.Series:
    given = df["error"].map(_has_value) if "error" in df.columns else False
    return df["completion"].map(is_error_text) | given


def _error_message(df: pd.DataFrame, error: pd.Series) -> pd.Series:
    given = df["error"] if "error" in df.columns else pd.Series(None, index=df.index)
    text = given.where(given.map(_has_value), df["completion"])
    return text.where(error, None)


def _match_columns(
    df: pd.DataFrame,
    completions: pd.Series,
    error: pd.Series,
    table: pd.DataFrame,
    mode: str,
    threshold: float,
    lang: str,
) -> pd.DataFrame:
    """The :class:`MatchResult` fields per row; error rows stay unscored (NA)."""
    results = [
        None
        if err
        else match(text, table.at[pid, "end"], table.at[pid, "start"], mode, threshold, lang)
        for text, pid, err in zip(completions, df["phrase_id"], error)
    ]
    return pd.DataFrame(
        {
            "matched": pd.array([r.matched if r else pd.NA for r in results], dtype="boolean"),
            "distance": [r.distance if r else np.nan for r in results],
            "match_start": pd.array([r.match_start if r else None for r in results], dtype="Int64"),
            "match_end": pd.array([r.match_end if r else None for r in results], dtype="Int64"),
            "cleaned": [r.cleaned if r else "" for r in results],
        },
        index=df.index,
    )


def score(
    df: pd.DataFrame,
    phrases: pd.DataFrame | Sequence[Mapping],
    mode: str = "windowed",
    refusal_mode: str = "faithful",
    threshold: float = THRESHOLD,
    lang: str = "zh",
) -> pd.DataFrame:
    """Score every completion of a frame against its phrase.

    Parameters
    ----------
    df : DataFrame
        Columns ``phrase_id``, ``model``, ``completion`` and usually ``type``
        (taken from ``phrases`` when absent), optionally ``error``: a non-null,
        non-empty ``error`` marks an API error. Completions that carry the
        source's ``"[ERROR] ..."`` text (:func:`is_error_text`) are errors too.
    phrases : DataFrame or list of dict
        The phrase list with ``id``, ``start`` and ``end``; ``start`` is the echo
        to strip and ``end`` the expected ending. Every ``phrase_id`` must occur.
    mode : {"windowed", "prefix"}
        Matching method, see :func:`match`.
    refusal_mode : {"faithful", "fixed"}
        Refusal detection, see :func:`is_refusal`.
    threshold : float
        Match threshold (strict ``<``).
    lang : {"zh", "en"}
        Cleaning variant, see :func:`clean`.

    Returns
    -------
    DataFrame
        ``df`` (same index) plus, per row:

        * ``error`` (bool): API error; such rows are never scored: ``matched``
          is ``<NA>``, ``distance`` NaN, no span, ``cleaned`` empty. The error
          text moves to ``error_message``;
        * ``refused`` (bool): refusal (False for errors);
        * ``empty`` (bool): :func:`needs_requery` still true, i.e. empty after
          the re-query (False for errors);
        * ``excluded`` (bool): ``error | refused | empty``: not in the denominator;
        * ``matched`` (nullable bool), ``distance`` (float), ``match_start`` and
          ``match_end`` (nullable int, offsets into ``cleaned``), ``cleaned``
          (str), as in :class:`MatchResult`. Refused and empty rows are scored
          too, as the source does, but excluded.
    """
    if mode not in MODES:
        raise PhrasesError(f"mode must be one of {MODES}, got {mode!r}")
    if refusal_mode not in REFUSAL_MODES:
        raise PhrasesError(f"refusal_mode must be one of {REFUSAL_MODES}, got {refusal_mode!r}")
    missing = {"phrase_id", "model", "completion"} - set(df.columns)
    if missing:
        raise PhrasesError(f"completions lack columns {sorted(missing)}")
    table = phrase_table(phrases)
    unknown = sorted(set(df["phrase_id"]) - set(table.index))
    if unknown:
        raise PhrasesError(f"{len(unknown)} phrase_id(s) not in phrases, e.g. {unknown[:5]}")

    out = df.copy()
    if "type" not in out.columns and "type" in table.columns:
        out["type"] = out["phrase_id"].map(table["type"])
    completions = out["completion"].map(text_or_empty)
    error = _error_column(out)
    out["error_message"] = _error_message(out, error)
    out["error"] = error
    out["refused"] = ~error & completions.map(lambda c: is_refusal(c, refusal_mode))
    out["empty"] = ~error & completions.map(needs_requery)
    out["excluded"] = out["error"] | out["refused"] | out["empty"]

    scores = _match_columns(out, completions, error, table, mode, threshold, lang)
    # A frame scored before gets its score columns replaced, not duplicated.
    return pd.concat([out.drop(columns=scores.columns, errors="ignore"), scores], axis=1)

def rates(scored: pd.DataFrame) -> pd.DataFrame:
    """Memorization rate per model and phrase type, with Wilson 95% intervals.

    The denominator is the non-excluded rows (no error, no refusal, not empty);
    the numerator the matched ones among them. As on the page, a (model, type)
    group with no non-excluded row is left out.

    Parameters
    ----------
    scored : DataFrame
        Output of :func:`score`.

    Returns
    -------
    DataFrame
        One row per (model, type), sorted by both: ``model``, ``type``,
        ``matched``, ``total``, ``rate``, ``ci_lo``, ``ci_hi``, and the counts
        behind the exclusions ``n_rows``, ``n_error``, ``n_refused``, ``n_empty``.
    """
    kept = ~scored["excluded"].astype(bool)
    frame = pd.DataFrame(
        {
            "model": scored["model"],
            "type": scored["type"],
            "matched": (scored["matched"].fillna(False).astype(bool) & kept).astype(int),
            "total": kept.astype(int),
            "n_rows": 1,
            "n_error": scored["error"].astype(int),
            "n_refused": scored["refused"].astype(int),
            "n_empty": scored["empty"].astype(int),
        }
    )
    out = frame.groupby(["model", "type"], sort=True).sum().reset_index()
    out = out[out["total"] > 0].reset_index(drop=True)
    out["rate"] = out["matched"] / out["total"]
    out["ci_lo"], out["ci_hi"] = wilson_interval(out["matched"].to_numpy(), out["total"].to_numpy())
    columns = ["model", "type", "matched", "total", "rate", "ci_lo", "ci_hi"]
    return out[columns + ["n_rows", "n_error", "n_refused", "n_empty"]]


def with_refusals(scored: pd.DataFrame, refusal_mode: str) -> pd.DataFrame:
    """Redo only the refusal columns of a scored frame (matching does not depend on them)."""
    out = scored.copy()
    texts = out["completion"].map(text_or_empty)
    out["refused"] = ~out["error"] & texts.map(lambda c: is_refusal(c, refusal_mode))
    out["excluded"] = out["error"] | out["refused"] | out["empty"]
    return out


def score_modes(completions: pd.DataFrame, phrases, threshold: float = THRESHOLD, lang: str = "zh"
                ) -> dict[tuple[str, str], pd.DataFrame]:
    """:func:`score` under every (matching mode, refusal mode) pair."""
    return {(mode, rmode): score(completions, phrases, mode=mode, refusal_mode=rmode, threshold=threshold,
                                 lang=lang)
            for mode in MODES for rmode in REFUSAL_MODES}


def rates_by_mode(scored: Mapping[tuple[str, str], pd.DataFrame], refusal_mode: str = "faithful"
                  ) -> pd.DataFrame:
    """:func:`rates` of each matching mode (with ``refusal_mode``), stacked with a ``mode`` column."""
    return pd.concat([rates(scored[(mode, refusal_mode)]).assign(mode=mode) for mode in MODES],
                     ignore_index=True)


def exclusion_table(scored: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Per model and type: completions, refusals in both modes, re-queries, still-empty
    answers and errors (windowed matching; exclusions do not depend on the mode)."""
    faithful, fixed = scored[("windowed", "faithful")], scored[("windowed", "fixed")]
    keys = ["model", "type"]
    return pd.DataFrame({
        "completions": faithful.groupby(keys).size(),
        "refusals (faithful)": faithful.groupby(keys)["refused"].sum(),
        "refusals (fixed)": fixed.groupby(keys)["refused"].sum(),
        "re-queried": faithful.groupby(keys)["requeried"].sum(),
        "still empty": faithful.groupby(keys)["empty"].sum(),
        "errors": faithful.groupby(keys)["error"].sum(),
    }).astype(int)


def exclusion_counts(scored: pd.DataFrame) -> dict[str, int]:
    """Why the rows of a scored frame (:func:`score`) are in or out of the rates:
    ``requests`` (rows), ``scored`` (in the denominator), and each excluded row
    counted once, under its first reason: ``errors`` (the request failed),
    ``refused`` (a refusal), ``empty`` (an answer still shorter than the
    empty-answer rule allows), of which ``empty_requeried`` were asked again."""
    error = scored["error"].astype(bool)
    refused = scored["refused"].astype(bool) & ~error
    empty = scored["empty"].astype(bool) & ~error & ~refused
    requeried = (scored["requeried"].astype(bool) if "requeried" in scored.columns
                 else pd.Series(False, index=scored.index))
    return {"requests": len(scored), "scored": int((~scored["excluded"].astype(bool)).sum()),
            "errors": int(error.sum()), "refused": int(refused.sum()), "empty": int(empty.sum()),
            "empty_requeried": int((empty & requeried).sum())}


def distance_gap(scored: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """How close completions of ``first``-type phrases come to their endings, against
    those of ``second``-type phrases. Beyond the source, which reports only the
    thresholded rate: per model, the median best-window distance of each type and
    a one-sided Mann–Whitney U test (scipy) of ``first`` < ``second``. A model too
    small to reproduce whole endings can still show the gap here.

    Returns one row per model: ``n_first``, ``n_second``, ``median_first``,
    ``median_second``, ``U``, ``p_value`` (excluded rows left out), and
    ``closer`` = 1 − U / (n_first · n_second): the share of (first, second) pairs
    in which the ``first`` completion is the closer one, ties counted half (0.5
    when the types do not differ; the test's effect size).
    """
    kept = scored[~scored["excluded"].astype(bool)]
    rows = []
    for model, group in kept.groupby("model", sort=False):
        a = group.loc[group["type"] == first, "distance"].astype(float).dropna()
        b = group.loc[group["type"] == second, "distance"].astype(float).dropna()
        if a.empty or b.empty:
            continue
        test = mannwhitneyu(a, b, alternative="less")
        rows.append({"model": model, "n_first": len(a), "n_second": len(b),
                     "median_first": a.median(), "median_second": b.median(),
                     "U": float(test.statistic), "p_value": float(test.pvalue),
                     "closer": 1 - float(test.statistic) / (len(a) * len(b))})
    return pd.DataFrame(rows)


def rates_by_copies(scored: pd.DataFrame, phrases: pd.DataFrame, ladder: pd.DataFrame) -> pd.DataFrame:
    """The method's memorization rate at every copy level, beside the truth.

    For every model of ``ladder`` (:func:`lab_ladder`) and every copy level of
    ``phrases`` (:func:`lab_phrases`), with ``scored`` from :func:`score`:
    ``phrases`` (completions asked), ``excluded`` (refused, empty or failed, as
    :func:`rates` excludes them), ``matched`` and ``total`` (among the rest),
    ``rate`` = matched / total and its Wilson 95% interval (NaN where nothing was
    scorable). ``copies`` is the truth: 0 = the phrase was never trained, so every
    match there is a false positive of the method. Sorted by size, then copies.
    """
    if phrases.empty or scored.empty:
        return pd.DataFrame(columns=LAB_RATE_COLUMNS)
    copies = phrases.drop_duplicates("id").set_index("id")["copies"]
    kept = ~scored["excluded"].astype(bool)
    frame = pd.DataFrame({
        "model": scored["model"].to_numpy(),
        "copies": scored["phrase_id"].map(copies).astype(int).to_numpy(),
        "phrases": 1,
        "excluded": (~kept).astype(int).to_numpy(),
        "matched": (scored["matched"].fillna(False).astype(bool) & kept).astype(int).to_numpy(),
        "total": kept.astype(int).to_numpy(),
    })
    grid = pd.MultiIndex.from_product([list(ladder["model"]), sorted(copies.unique())],
                                      names=["model", "copies"])
    out = frame.groupby(["model", "copies"]).sum().reindex(grid, fill_value=0).reset_index()
    total = out["total"].to_numpy()
    out["rate"] = np.where(total > 0, out["matched"] / np.maximum(total, 1), np.nan)
    lo, hi = wilson_interval(out["matched"].to_numpy(), np.maximum(total, 1))
    out["ci_lo"], out["ci_hi"] = np.where(total > 0, lo, np.nan), np.where(total > 0, hi, np.nan)
    out = out.merge(ladder[["model", "params"]], on="model")
    out = out.sort_values(["params", "model", "copies"], kind="stable").reset_index(drop=True)
    return out[LAB_RATE_COLUMNS]


def sizes_reported(table: pd.DataFrame) -> int:
    """Ladder models with a memorization rate at every copy level of ``table``
    (:func:`rates_by_copies`): at least one scorable completion at each."""
    if table.empty:
        return 0
    levels = table["copies"].nunique()
    per_model = table[table["total"] > 0].groupby("model")["copies"].nunique()
    return int((per_model == levels).sum())



def first_separated(rows: pd.DataFrame, alpha: float = SEPARATION_ALPHA) -> int | None:
    """The lowest trained copy level at which one model's rate exceeds its
    controls': a one-sided Fisher exact test (scipy) of matched / total at the level
    against matched / total at copies 0, p < ``alpha``. Without controls the level's
    Wilson interval must lie above 0. None when no level qualifies. ``rows`` are
    one model's rows of :func:`rates_by_copies`."""
    control = rows[rows["copies"] == 0]
    k0, n0 = (int(control["matched"].iloc[0]), int(control["total"].iloc[0])) if len(control) else (0, 0)
    for r in rows[(rows["copies"] > 0) & (rows["total"] > 0)].sort_values("copies").itertuples():
        if n0:
            p = greater_p(r.matched, r.total, k0, n0)
            if p < alpha:
                return int(r.copies)
        elif r.ci_lo > 0:
            return int(r.copies)
    return None


def rises_with_copies(rows: pd.DataFrame) -> bool:
    """Whether one model's rate never falls from one copy level to the next and
    ends above where it starts (levels with no scorable completion skipped)."""
    r = rows.sort_values("copies")["rate"].dropna().to_numpy()
    return len(r) >= 2 and bool(np.all(np.diff(r) >= 0)) and r[-1] > r[0]


def type_gap(rates_table: pd.DataFrame, first: str = TYPES[0], second: str = TYPES[1]) -> pd.DataFrame:
    """The source's headline comparison: per model with rates (:func:`rates`) of
    both types, the ``first`` rate minus the ``second`` with its Newcombe 95%
    interval and the one-sided Fisher exact p-value of ``first`` > ``second``
    (:func:`analysis.stats.proportions.rate_difference`). One row per model:
    ``matched_first``, ``total_first``, ``matched_second``, ``total_second``,
    ``difference``, ``ci_lo``, ``ci_hi``, ``p_value``."""
    columns = ["model", "matched_first", "total_first", "matched_second", "total_second", "difference",
               "ci_lo", "ci_hi", "p_value"]
    r = rates_table.set_index(["model", "type"])
    rows = []
    for model in dict.fromkeys(rates_table["model"]):
        if (model, first) not in r.index or (model, second) not in r.index:
            continue
        a, b = r.loc[(model, first)], r.loc[(model, second)]
        est: Estimate = rate_difference(a["matched"], a["total"], b["matched"], b["total"])
        rows.append([model, int(a["matched"]), int(a["total"]), int(b["matched"]), int(b["total"]),
                     est.value, est.lo, est.hi, est.p])
    return pd.DataFrame(rows, columns=columns)


def source_range(source: pd.DataFrame, type_: str = TYPES[0]) -> tuple[float, float]:
    """Lowest and highest rate (as proportions) the source reports for ``type_``
    (``source`` is :func:`analysis.phrases.params.load_source_rates`)."""
    sub = source.loc[source["type"] == type_, "rate_pct"] / 100
    return float(sub.min()), float(sub.max())


def source_type_gaps(source: pd.DataFrame, first: str = TYPES[0], second: str = TYPES[1]) -> pd.Series:
    """The source's ``first`` rate minus its ``second`` rate per model, in
    percentage points (models reporting both types)."""
    wide = source.pivot_table(index="model", columns="type", values="rate_pct", sort=False)
    return (wide[first] - wide[second]).dropna()


def pooled_trained(rows: pd.DataFrame) -> tuple[int, int]:
    """One model's matched and scorable completions over every trained copy level
    (copies > 0) of :func:`rates_by_copies`."""
    trained = rows[rows["copies"] > 0]
    return int(trained["matched"].sum()), int(trained["total"].sum())
