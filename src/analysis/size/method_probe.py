"""The probe's measurements (Sections 3.2 and 4.1 of the source): words, the
comparison of an answer with the next word, the sampled positions
:math:`S_{T,l}`, and the accuracies :math:`\\hat\\alpha`, :math:`\\hat\\beta`, the
lifted accuracy and the :math:`2KL` accuracy profile.

Where the source leaves a choice open:

* **Words.** The source speaks of tokens in Eq. (1) but samples "words" and
  counts "prefix length 8 (as it has 8 words)" (Table V). Here a text's words
  are its whitespace words (:func:`whitespace_words`), the same words whose
  indices the lab's excerpt windows use. Positions whose target is all
  punctuation (a lone dash or asterisk, which :func:`normalize_word` maps to
  ``""``) are not sampled.
* **Correctness.** The source does not say how an answer is compared with the
  target; :func:`normalize_word` and :func:`is_correct` document the rule used.
  With several prompt templates a position is correct if any of them is
  (Section 4.1).

Pure functions: no printing, plotting or network access.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.core.cache import memoized
from analysis.core.text import is_missing, normalize_word, strip_punct  # noqa: F401  (re-exported)
from analysis.size.params import GROUPS, SizeError

_POSITION_KEYS = ["model", "text_id", "prefix_len", "position"]


def whitespace_words(text: str) -> list[str]:
    """The words of a text: its whitespace-separated tokens, unchanged.

    These are the units of the prefix length :math:`l` ("prefix length 8, as it
    has 8 words", Table V) and the indices the lab's excerpt windows use
    (``text.split()`` of the cleaned text).
    """
    if not isinstance(text, str):
        raise SizeError(f"text must be a string, got {type(text).__name__}")
    return text.split()


def prediction_word(prediction) -> str:
    """The predicted word of an answer: its first whitespace word that is not
    all punctuation, normalized (:func:`normalize_word`); ``""`` if none.

    A chat model asked for "only the next word" may still quote it or add a
    full stop (``'"the".'``); a completion model continues the prefix with a
    leading space and more words (``" the end of"``). Both yield ``"the"``.
    """
    if is_missing(prediction):
        return ""
    for token in str(prediction).split():
        norm = normalize_word(token)
        if norm:
            return norm
    return ""


def is_correct(prediction, target) -> bool:
    """Whether an answer counts as the next word: the indicator
    :math:`\\mathbb 1[M(t_{i-l},\\dots,t_{i-1}) = t_i]` of Eq. (1).

    True iff :func:`prediction_word` of the answer equals
    :func:`normalize_word` of the target and the target is not empty after
    normalization.
    """
    t = normalize_word(target)
    return bool(t) and prediction_word(prediction) == t


# ---------------------------------------------------------------------------
# Sampling positions
# ---------------------------------------------------------------------------


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _cell_seed(seed: int, text_id: str, prefix_len: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(text_id.encode("utf-8")), int(prefix_len)])



def _check_sample_args(texts, prefix_lens, n, known, windows) -> list:
    """The prefix lengths as a list, after checking every argument of
    :func:`sample_positions` that does not need the words of the texts."""
    if not isinstance(texts, Mapping) or not texts:
        raise SizeError("texts must be a non-empty mapping of text id to text")
    if known is not None:
        allowed = sorted(set(known))
        unknown = sorted(set(texts) - set(allowed))
        if unknown:
            raise SizeError(f"texts: unknown text ids {unknown}; allowed: {allowed}")
    lens = list(prefix_lens) if not isinstance(prefix_lens, (int, np.integer)) else [prefix_lens]
    if not lens:
        raise SizeError("prefix_lens must name at least one prefix length (positive integers)")
    bad = [ln for ln in lens if not _is_int(ln) or ln < 1]
    if bad:
        raise SizeError(f"prefix_lens must be positive integers (l >= 1), got {bad}")
    if len(set(lens)) != len(lens):
        raise SizeError(f"prefix_lens must be distinct, got {lens}")
    if not _is_int(n) or n < 1:
        raise SizeError(f"n must be a positive integer, got {n!r}")
    stray = sorted(set(windows) - set(texts))
    if stray:
        raise SizeError(f"windows: text ids {stray} are not in texts; allowed: {sorted(texts)}")
    return lens


def _spans(tokens: Mapping[str, list[str]], windows: Mapping, lens: list) -> dict[str, tuple[int, int]]:
    """Each text's (word_start, word_end): its window, or the whole text; checked
    against the text's length and the longest prefix."""
    spans = {}
    for t, toks in tokens.items():
        start, end = windows.get(t, (0, len(toks)))
        if not (_is_int(start) and _is_int(end) and 0 <= start < end <= len(toks)):
            raise SizeError(
                f"windows[{t!r}] must be (word_start, word_end) with 0 <= start < end <= {len(toks)} "
                f"(the text's word count), got {(start, end)!r}"
            )
        spans[t] = (int(start), int(end))
    for t, (start, end) in spans.items():
        too_long = [ln for ln in lens if ln >= end - start]
        if too_long:
            where = "window" if t in windows else "text"
            raise SizeError(
                f"prefix_lens must be shorter than every text: {too_long} leave no target in the "
                f"{where} of {t!r} ({end - start} words)"
            )
    return spans


def _eligible(tokens, spans, lens: list, n: int) -> dict:
    """(text, l) -> the target positions with l words before them inside the span
    and a non-empty normalized target; fails if a cell has fewer than ``n``."""
    kept: dict[str, bool] = {}  # a word's verdict, decided once per distinct word

    def keeps(word: str) -> bool:
        verdict = kept.get(word)
        if verdict is None:
            verdict = kept[word] = bool(normalize_word(word))
        return verdict

    nonempty = {
        t: np.fromiter(map(keeps, tokens[t][s:e]), bool, count=e - s)
        for t, (s, e) in spans.items()
    }
    eligible = {}
    short = []
    for t, (s, _) in spans.items():
        for ln in lens:
            pos = s + ln + np.flatnonzero(nonempty[t][ln:])
            eligible[t, ln] = pos
            if len(pos) < n:
                short.append(f"{t!r} at prefix_len {ln}: {len(pos)}")
    if short:
        raise SizeError(f"n={n} is larger than the available positions of " + "; ".join(short))
    return eligible


# drawn once per texts and settings, then read from the artifact cache: normalizing
# every word of the texts takes seconds, in the chapter and in its --plan alike
@memoized("size-positions", code=("analysis.core.text", "analysis.size.params"))
def sample_positions(
    texts: Mapping[str, str],
    prefix_lens: Sequence[int],
    n: int,
    seed: int = 0,
    *,
    known: Iterable[str] | None = None,
    windows: Mapping[str, tuple[int, int]] | None = None,
    baseline: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Draw the positions :math:`S_{T,l}` of :math:`\\hat\\alpha(M,T,l)` (Section 3.2).

    For every text :math:`T` and prefix length :math:`l`, ``n`` target
    positions :math:`i` are drawn uniformly without replacement among those with
    :math:`l` words before them (and inside the window, if one is given); the
    source draws 100 "at uniformly random positions" for each length
    (Section 4.1). Every (text, length) cell has its own generator,
    ``numpy.random.default_rng([seed, crc32(text_id), l])``, so a cell's sample
    does not depend on which other texts or lengths are drawn.

    ``texts``: text id -> cleaned text; ``prefix_lens``: the lengths
    :math:`\\mathcal L` (positive, distinct); ``n``: :math:`|S_{T,l}|`;
    ``known``: the allowed text ids; ``windows``: text id -> ``(word_start,
    word_end)`` (end exclusive, indices into :func:`whitespace_words`) that
    prefix and target must lie in (the lab's models were trained on one excerpt
    window of each text); ``baseline``: the ids of the baseline texts
    :math:`\\mathcal B` (group ``"baseline"``, every other text ``"popular"``).

    Returns one row per sampled position: ``text_id``, ``group``,
    ``prefix_len``, ``position`` (index of the target in
    :func:`whitespace_words`), ``prefix`` (the :math:`l` words before it joined
    by single spaces) and ``target`` (the word itself, unnormalized), ordered by
    text, length, position. Raises :class:`SizeError` before any drawing,
    naming the parameter that is wrong.
    """
    windows = dict(windows or {})
    lens = _check_sample_args(texts, prefix_lens, n, known, windows)
    baseline = set(baseline or ())
    tokens = {t: whitespace_words(txt) for t, txt in texts.items()}
    eligible = _eligible(tokens, _spans(tokens, windows, lens), lens, n)
    rows = []
    for t in texts:
        toks = tokens[t]
        group = "baseline" if t in baseline else "popular"
        for ln in lens:
            rng = _cell_seed(seed, t, ln)
            chosen = np.sort(rng.choice(eligible[t, ln], size=n, replace=False))
            for i in chosen:
                i = int(i)
                rows.append((t, group, int(ln), i, " ".join(toks[i - ln : i]), toks[i]))
    return pd.DataFrame(rows, columns=["text_id", "group", "prefix_len", "position", "prefix", "target"])


def position_table(
    samples_with_predictions: pd.DataFrame, baseline: Iterable[str] | None = None
) -> pd.DataFrame:
    """Correctness per model and position (any template correct), before averaging.

    Parameters
    ----------
    samples_with_predictions : pandas.DataFrame
        One row per query: ``model``, ``text_id``, ``prefix_len``, ``position``
        and either ``correct`` (bool) or ``prediction`` and ``target`` (scored
        with :func:`is_correct`). Several rows of one position (the five
        templates of Table V) count as correct if any is (Section 4.1).
        Optional ``group`` ("popular"/"baseline"); optional ``error`` (a
        message, or a bool): rows with a non-empty message (or True) are
        dropped, and a position left with no row is not counted.
    baseline : iterable of str, optional
        Baseline text ids, used when there is no ``group`` column.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``text_id``, ``group``, ``prefix_len``, ``position``, ``correct``.
    """
    df = samples_with_predictions
    missing = [c for c in _POSITION_KEYS if c not in df.columns]
    if missing:
        raise SizeError(f"samples_with_predictions lacks columns {missing}; needs {_POSITION_KEYS}")
    if "correct" not in df.columns and not {"prediction", "target"} <= set(df.columns):
        raise SizeError("samples_with_predictions needs a 'correct' column or 'prediction' and 'target'")
    df = df.copy()
    if "error" in df.columns:
        err = df["error"]
        if pd.api.types.is_bool_dtype(err):
            has_error = err.to_numpy(dtype=bool)
        else:
            has_error = (err.notna() & (err.astype(str).str.strip() != "")).to_numpy(dtype=bool)
        df = df.loc[~has_error]
    if "correct" not in df.columns:
        df["correct"] = [is_correct(p, t) for p, t in zip(df["prediction"], df["target"])]
    if "group" not in df.columns:
        base = set(baseline or ())
        df["group"] = np.where(df["text_id"].isin(base), "baseline", "popular")
    bad = sorted(set(df["group"]) - set(GROUPS))
    if bad:
        raise SizeError(f"group must be one of {GROUPS}, got {bad}")
    df["correct"] = df["correct"].astype(bool)
    out = df.groupby(_POSITION_KEYS, sort=True).agg(group=("group", "first"), correct=("correct", "any"))
    out = out.reset_index()
    return out[["model", "text_id", "group", "prefix_len", "position", "correct"]]


def accuracy_table(
    samples_with_predictions: pd.DataFrame, baseline: Iterable[str] | None = None
) -> pd.DataFrame:
    """The subsampled accuracies :math:`\\hat\\alpha(M,T,l)` (Section 3.2).

    :math:`\\hat\\alpha(M,T,l) = |S_{T,l}|^{-1}\\sum_{i\\in S_{T,l}}
    \\mathbb 1[M(t_{i-l},\\dots,t_{i-1}) = t_i]`, the fraction of sampled
    positions whose next word the model returns (with several templates: by
    any of them, Section 4.1).

    Parameters
    ----------
    samples_with_predictions : pandas.DataFrame
        As for :func:`position_table`.
    baseline : iterable of str, optional
        Baseline text ids when the frame has no ``group`` column.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``text_id``, ``group``, ``prefix_len``, ``n`` (positions),
        ``correct`` (positions correct) and ``acc`` (:math:`\\hat\\alpha`).
    """
    pos = position_table(samples_with_predictions, baseline)
    keys = ["model", "text_id", "group", "prefix_len"]
    out = pos.groupby(keys, sort=True).agg(n=("correct", "size"), correct=("correct", "sum")).reset_index()
    out["correct"] = out["correct"].astype(int)
    out["acc"] = out["correct"] / out["n"]
    return out.sort_values(["model", "group", "text_id", "prefix_len"], ignore_index=True)


def baseline_accuracy(acc_table: pd.DataFrame) -> pd.DataFrame:
    """The baseline accuracy :math:`\\hat\\beta(M,l) = |\\mathcal B|^{-1}
    \\sum_{B\\in\\mathcal B}\\hat\\alpha(M,B,l)` (Eq. 2): the unweighted mean over
    the baseline texts.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``prefix_len``, ``beta``, ``n_texts``.
    """
    base = acc_table.loc[acc_table["group"] == "baseline"]
    if base.empty:
        raise SizeError("acc_table has no baseline rows (group == 'baseline'); beta needs baseline texts")
    out = base.groupby(["model", "prefix_len"], sort=True).agg(
        beta=("acc", "mean"), n_texts=("text_id", "nunique")
    )
    return out.reset_index()


def add_lift(acc_table: pd.DataFrame) -> pd.DataFrame:
    """Add :math:`\\hat\\beta(M,l)` and the lifted accuracy
    :math:`\\hat\\alpha^{\\ell}(M,T,l) = \\hat\\alpha^{r}(M,T,l) - \\hat\\beta(M,l)`
    (Section 3.2) to every row, as columns ``beta`` and ``lifted``.

    Raises :class:`SizeError` naming the model and lengths that have accuracies but
    no baseline accuracy.
    """
    beta = baseline_accuracy(acc_table)[["model", "prefix_len", "beta"]]
    out = acc_table.merge(beta, on=["model", "prefix_len"], how="left")
    gaps = out.loc[out["beta"].isna(), ["model", "prefix_len"]].drop_duplicates()
    if not gaps.empty:
        raise SizeError(f"no baseline accuracy for (model, prefix_len) {list(map(tuple, gaps.to_numpy()))}")
    out["lifted"] = out["acc"] - out["beta"]
    return out


def accuracy_profile(acc_table: pd.DataFrame, lifted: bool = True) -> pd.DataFrame:
    """The accuracy profiles :math:`A_{\\mathcal T,\\mathcal L}(M)` (Section 3.2).

    :math:`A_{\\mathcal T,\\mathcal L}(M) = (\\hat\\alpha^{r}(M,T_j,l_k),
    \\hat\\alpha^{\\ell}(M,T_j,l_k))_{j=1..K,\\,k=1..L}\\in\\mathbb R^{2KL}`, over the
    popular (source) texts :math:`\\mathcal T` only; the baseline texts enter
    through :math:`\\hat\\beta`. With 37 texts and 6 lengths that is 444 features.

    Parameters
    ----------
    acc_table : pandas.DataFrame
        From :func:`accuracy_table` (baseline rows needed when ``lifted``).
    lifted : bool, default True
        Include the lifted half (the paper's 2KL profile); ``False`` gives the
        KL raw features only.

    Returns
    -------
    pandas.DataFrame
        Rows: models. Columns: MultiIndex (``text_id``, ``prefix_len``,
        ``kind``) with kind ``"raw"`` then ``"lifted"`` for each (text, length),
        texts sorted, lengths ascending. A missing measurement is NaN.
    """
    table = add_lift(acc_table) if lifted else acc_table.copy()
    pop = table.loc[table["group"] == "popular"]
    if pop.empty:
        raise SizeError("acc_table has no popular rows (group == 'popular')")
    long = pop[["model", "text_id", "prefix_len", "acc"]].rename(columns={"acc": "raw"})
    if lifted:
        long["lifted"] = pop["lifted"].to_numpy()
    kinds = ["raw", "lifted"] if lifted else ["raw"]
    melted = long.melt(id_vars=["model", "text_id", "prefix_len"], value_vars=kinds, var_name="kind")
    wide = melted.pivot_table(index="model", columns=["text_id", "prefix_len", "kind"], values="value",
                              aggfunc="first", dropna=False)
    texts = sorted(pop["text_id"].unique())
    lens = sorted(pop["prefix_len"].unique())
    cols = pd.MultiIndex.from_tuples([(t, int(ln), k) for t in texts for ln in lens for k in kinds],
                                     names=["text_id", "prefix_len", "kind"])
    wide = wide.reindex(columns=cols)
    wide.index.name = "model"
    return wide
