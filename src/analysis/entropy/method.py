"""The source's equations: pure functions over token-id lists and score arrays.

Sampling prompt/answer windows, the memorization score (token-level Levenshtein
distance, rapidfuzz's batch API), the trivial-memorization filter (LCS), the
instance-level entropy and zlib ratio (Appendix B), the level sets and their
entropy line (Section 3.2, Algorithm 1), the bootstrap of that line (beyond the
paper) and the dataset-inference rule (Section 6). Entropies are in bits (log
base 2), the unit in which the source's numbers read naturally (``M(s_50) ≈ 11``,
"2^10 unique tokens"). Nothing here prints, plots, touches a model or a file.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from rapidfuzz.distance import LCSseq, Levenshtein
from rapidfuzz.process import cpdist
from scipy.sparse import csr_matrix
from scipy.stats import linregress

from analysis.entropy.params import DI_QUANTILE, LCS_FILTERS, EntropyError
from analysis.stats.lines import Fit, fit_line
from analysis.stats.result import StatsError

# ---------------------------------------------------------------------------
# Sampling prompt/answer pairs
# ---------------------------------------------------------------------------


def available_windows(lengths: Sequence[int], window: int) -> int:
    """How many distinct windows of ``window`` tokens the documents hold."""
    return int(sum(max(0, n - window + 1) for n in lengths))


def _window_counts(docs: Mapping[str, Sequence[int]], prefix_tokens: int, suffix_tokens: int,
                   n: int) -> np.ndarray:
    """How many windows of ``|p| + |s|`` tokens each document holds, after checking
    the lengths and that ``n`` distinct windows exist (:class:`EntropyError` if not)."""
    for name, value in (("prefix_tokens", prefix_tokens), ("suffix_tokens", suffix_tokens), ("n", n)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise EntropyError(f"{name} must be a positive integer, got {value!r}")
    if not docs:
        raise EntropyError("docs is empty: there is nothing to sample from")
    window = prefix_tokens + suffix_tokens
    lengths = np.array([len(docs[d]) for d in docs], dtype=np.int64)
    if lengths.max() < window:
        raise EntropyError(
            f"prefix plus suffix ({prefix_tokens} + {suffix_tokens} = {window} tokens) is longer than "
            f"every document (the longest has {int(lengths.max())} tokens); shorten prefix_tokens or "
            "suffix_tokens"
        )
    counts = np.maximum(lengths - window + 1, 0)
    total = int(counts.sum())
    if n > total:
        raise EntropyError(
            f"n = {n} is larger than what these documents can supply: {total} distinct windows of "
            f"{window} tokens in {int((counts > 0).sum())} documents long enough; lower n"
        )
    return counts


def _locate(flat: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Document index and start of each window numbered ``flat`` across all documents."""
    bounds = np.cumsum(counts)
    doc_index = np.searchsorted(bounds, flat, side="right")
    return doc_index, flat - (bounds[doc_index] - counts[doc_index])


def _weighted_starts(rng, ids: list, counts: np.ndarray, n: int, weights: Mapping[str, float],
                     window: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows drawn with each document's positions weighted by ``weights[doc_id]``."""
    w = np.array([float(weights.get(d, 0.0)) for d in ids])
    if (w < 0).any() or not np.isfinite(w).all():
        raise EntropyError("weights must be finite and non-negative")
    per_position = np.repeat(w, counts)
    available = int((per_position > 0).sum())
    if n > available:
        raise EntropyError(
            f"n = {n} is larger than what these documents can supply: {available} distinct windows of "
            f"{window} tokens in documents with positive weight; lower n"
        )
    flat = rng.choice(int(counts.sum()), size=n, replace=False, p=per_position / per_position.sum())
    return _locate(flat, counts)


def _balanced_starts(rng, counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows shared as evenly as possible among the documents, in a random order."""
    quota = np.zeros(len(counts), dtype=np.int64)
    left = n
    while left > 0:
        room = np.flatnonzero(quota < counts)
        share, extra = divmod(left, len(room))
        add = np.full(len(room), share, dtype=np.int64)
        add[rng.permutation(len(room))[:extra]] += 1
        add = np.minimum(add, counts[room] - quota[room])
        quota[room] += add
        left -= int(add.sum())
    doc_index = np.repeat(np.arange(len(counts)), quota)
    starts = np.concatenate([rng.choice(int(c), size=int(q), replace=False)
                             for c, q in zip(counts, quota) if q > 0])
    order = rng.permutation(n)
    return doc_index[order], starts[order]


def sample_pairs(
    docs: Mapping[str, Sequence[int]],
    prefix_tokens: int,
    suffix_tokens: int,
    n: int,
    seed: int = 0,
    balance: bool = False,
    weights: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Draw ``n`` distinct windows of ``prefix_tokens + suffix_tokens`` tokens.

    Each window lies inside one document and is cut into a prompt and an answer.
    Start positions are drawn without replacement with a seeded generator:
    uniformly over every position of every document where a whole window fits
    (``balance=False``, the source's "sample sequences from the dataset"), or
    with the ``n`` windows shared as evenly as possible among the documents
    (``balance=True``, so one long book does not make up a set of texts), or
    with each document's positions weighted by ``weights[doc_id]`` (its copies
    in a training stream, so a window is drawn as often as the model saw it).

    ``docs`` maps a document id to its token ids; ``prefix_tokens`` and
    ``suffix_tokens`` (``|p|`` and ``|s|``) are at least 1; ``n`` is at most the
    number of distinct windows. Returns the columns ``doc_id``, ``start``,
    ``prefix`` and ``suffix`` (lists of int), in a random order.
    :class:`EntropyError` if a length is not positive, if no document is as long as
    a window, or if ``n`` exceeds the number of distinct windows.
    """
    counts = _window_counts(docs, prefix_tokens, suffix_tokens, n)
    window = prefix_tokens + suffix_tokens
    ids = list(docs)
    rng = np.random.default_rng(seed)
    if balance and weights is not None:
        raise EntropyError("give either balance=True or weights, not both")
    if weights is not None:
        doc_index, starts = _weighted_starts(rng, ids, counts, n, weights, window)
    elif balance:
        doc_index, starts = _balanced_starts(rng, counts, n)
    else:
        doc_index, starts = _locate(rng.choice(int(counts.sum()), size=n, replace=False), counts)
    rows = []
    for d, st in zip(doc_index, starts):
        toks = docs[ids[d]]
        rows.append({
            "doc_id": ids[d], "start": int(st),
            "prefix": [int(t) for t in toks[st : st + prefix_tokens]],
            "suffix": [int(t) for t in toks[st + prefix_tokens : st + window]],
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Scores and the trivial-memorization filter
# ---------------------------------------------------------------------------


def _paired(scorer, a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> np.ndarray:
    if len(a) != len(b):
        raise EntropyError(f"the two lists must have the same length, got {len(a)} and {len(b)}")
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(cpdist(list(a), list(b), scorer=scorer, workers=-1), dtype=np.int64)


def levenshtein(responses: Sequence[Sequence[int]], answers: Sequence[Sequence[int]]) -> np.ndarray:
    """Token-level Levenshtein distance of each response to its answer (the
    memorization score ``d(r, s)``): rapidfuzz's batch API on token-id lists."""
    return _paired(Levenshtein.distance, responses, answers)


def lcs(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> np.ndarray:
    """Length of the longest common subsequence of each pair of token lists."""
    return _paired(LCSseq.similarity, a, b)


def trivial(frame: pd.DataFrame, mode: str = "written") -> np.ndarray:
    """Which pairs the trivial-memorization filter drops (True = drop).

    The source drops a pair when ``LCS ≥ |s|/2``. It writes ``LCS(p, s)``
    (prompt vs answer, ``mode="written"``) but describes the filter as the
    response copying from the prompt, ``LCS(p, r)`` (``mode="described"``);
    ``mode="none"`` keeps every pair. The LCS lengths are taken from the
    ``lcs_ps`` / ``lcs_pr`` columns when :func:`discoverable` has computed them.
    """
    if mode not in LCS_FILTERS:
        raise EntropyError(f"lcs_filter must be one of {LCS_FILTERS}, got {mode!r}")
    if mode == "none":
        return np.zeros(len(frame), dtype=bool)
    column, other = ("lcs_ps", "suffix") if mode == "written" else ("lcs_pr", "response")
    lengths = frame[column].to_numpy() if column in frame else lcs(list(frame["prefix"]), list(frame[other]))
    half = np.array([len(s) for s in frame["suffix"]]) / 2
    return np.asarray(lengths) >= half


# ---------------------------------------------------------------------------
# Instance level (Appendix B, Algorithm 2)
# ---------------------------------------------------------------------------


def entropy_of_counts(counts: np.ndarray, base: float = 2.0) -> float:
    """Plug-in entropy ``-Σ p̂ log p̂`` of a vector of counts (zeros ignored)."""
    counts = np.asarray(counts, dtype=float)
    counts = counts[counts > 0]
    if counts.size == 0:
        raise EntropyError("cannot take the entropy of an empty set of tokens")
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum() / math.log(base))


def token_entropy(tokens: Sequence[int], base: float = 2.0) -> float:
    """Empirical entropy of one token sequence (the source's Eq. 7–8)."""
    return entropy_of_counts(np.fromiter(Counter(tokens).values(), dtype=float), base)


def zlib_ratio(text: str | bytes) -> float:
    """``|zlib(s)| / |s|`` in bytes (the source's Eq. 3, default compression level)."""
    raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if not raw:
        raise EntropyError("cannot compress an empty text")
    return len(zlib.compress(raw)) / len(raw)


def instance_metrics(frame: pd.DataFrame, base: float = 2.0) -> pd.DataFrame:
    """Per-pair entropy of the answer's tokens and zlib ratio of its text.

    ``frame`` needs ``suffix`` (token ids) and ``suffix_text``; returns a copy with
    ``entropy`` and ``zlib`` columns.
    """
    out = frame.copy()
    out["entropy"] = [token_entropy(s, base) for s in out["suffix"]]
    out["zlib"] = [zlib_ratio(t) for t in out["suffix_text"]]
    return out


# ---------------------------------------------------------------------------
# Set level (Section 3.2, Algorithm 1)
# ---------------------------------------------------------------------------


def level_sets(scores: Sequence[int], suffixes: Sequence[Sequence[int]]) -> dict[int, Counter]:
    """Token counts of each level set ``T_e``: all answer tokens of the pairs whose
    memorization score is ``e`` (the source's Eq. 1 and 4), keyed by ``e``."""
    if len(scores) != len(suffixes):
        raise EntropyError(
            f"scores and suffixes must have the same length, got {len(scores)} and {len(suffixes)}"
        )
    sets: dict[int, Counter] = {}
    for e, s in zip(scores, suffixes):
        sets.setdefault(int(e), Counter()).update(int(t) for t in s)
    return dict(sorted(sets.items()))


def level_set_table(
    scores: Sequence[int],
    suffixes: Sequence[Sequence[int]],
    suffix_texts: Sequence[str] | None = None,
    base: float = 2.0,
) -> pd.DataFrame:
    """One row per non-empty level set ``e``.

    Columns: ``e``, ``pairs``, ``tokens``, ``token_space`` (``|T_e|``, distinct
    tokens), ``entropy`` (``M_ent(s_e)``), ``norm_entropy``
    (``M_ent / log|T_e|``, NaN when ``|T_e| = 1``) and, when ``suffix_texts`` is
    given, ``zlib`` (``M_zlib(s_e)`` of the concatenated answer texts).
    """
    sets = level_sets(scores, suffixes)
    pairs = Counter(int(e) for e in scores)
    texts: dict[int, list[str]] = {}
    if suffix_texts is not None:
        for e, t in zip(scores, suffix_texts):
            texts.setdefault(int(e), []).append(t)
    rows = []
    for e, counts in sets.items():
        c = np.fromiter(counts.values(), dtype=float)
        h = entropy_of_counts(c, base)
        space = len(counts)
        row = {
            "e": e, "pairs": pairs[e], "tokens": int(c.sum()), "token_space": space,
            "entropy": h, "norm_entropy": h / (math.log(space) / math.log(base)) if space > 1 else np.nan,
        }
        if suffix_texts is not None:
            row["zlib"] = zlib_ratio("".join(texts[e]))
        rows.append(row)
    return pd.DataFrame(rows)


def level_line(x, y) -> Fit:
    """The least-squares line of a level-set metric ``y`` against the scores ``x``
    (:func:`analysis.stats.lines.fit_line`); :class:`EntropyError` with fewer than 3
    level sets or a single score."""
    try:
        return fit_line(x, y, what="level sets")
    except StatsError as err:
        raise EntropyError(f"{err}; sample more pairs") from err


def fit_levels(table: pd.DataFrame, column: str = "entropy", min_pairs: int = 1) -> Fit:
    """Line of a level-set metric against ``e`` over level sets with at least
    ``min_pairs`` pairs. An empty table, or one whose level sets are all below
    ``min_pairs``, is an error."""
    if table.empty:
        raise EntropyError("the level-set table is empty: no pair survived; nothing to fit")
    if column not in table:
        raise EntropyError(f"column must be one of {sorted(table.columns)}, got {column!r}")
    kept = table[table["pairs"] >= min_pairs]
    if kept.empty:
        raise EntropyError(f"no level set has {min_pairs} or more pairs; lower min_pairs or sample more")
    return level_line(kept["e"], kept[column])


# ---------------------------------------------------------------------------
# Bootstrap (beyond the paper)
# ---------------------------------------------------------------------------


def _count_matrix(suffixes: Sequence[Sequence[int]]):
    """Sparse pairs × vocabulary matrix of answer-token counts."""
    vocab: dict[int, int] = {}
    rows, cols = [], []
    for i, s in enumerate(suffixes):
        for t in s:
            rows.append(i)
            cols.append(vocab.setdefault(int(t), len(vocab)))
    data = np.ones(len(rows), dtype=np.float64)
    return csr_matrix((data, (rows, cols)), shape=(len(suffixes), max(1, len(vocab))))


def _entropies_from_matrix(counts, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Row entropies and distinct-token counts of a sparse count matrix."""
    counts = counts.tocsr()
    totals = np.asarray(counts.sum(axis=1)).ravel()
    h = np.full(counts.shape[0], np.nan)
    space = np.diff(counts.indptr)
    for r in range(counts.shape[0]):
        row = counts.data[counts.indptr[r] : counts.indptr[r + 1]]
        row = row[row > 0]
        if row.size:
            p = row / totals[r]
            h[r] = -(p * np.log(p)).sum() / math.log(base)
    return h, space


def bootstrap_fits(
    scores: Sequence[int],
    suffixes: Sequence[Sequence[int]],
    n_boot: int = 1000,
    seed: int = 0,
    base: float = 2.0,
    min_pairs: int = 1,
) -> pd.DataFrame:
    """Slope, intercept and r of the entropy line on ``n_boot`` resamples of the
    pairs (with replacement, seeded). Resamples where fewer than 3 level sets
    survive are dropped. Returns columns ``slope``, ``intercept``, ``r``."""
    if n_boot < 1:
        raise EntropyError(f"n_boot must be a positive integer, got {n_boot!r}")
    scores = np.asarray(scores, dtype=np.int64)
    n = len(scores)
    if n == 0:
        raise EntropyError("no pairs to resample")
    counts = _count_matrix(suffixes)
    levels, level_of = np.unique(scores, return_inverse=True)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_boot):
        w = np.bincount(rng.integers(0, n, n), minlength=n).astype(float)
        group = csr_matrix((w, (level_of, np.arange(n))), shape=(len(levels), n))
        h, _space = _entropies_from_matrix(group @ counts, base)
        pairs = np.bincount(level_of, weights=w, minlength=len(levels))
        ok = (pairs >= min_pairs) & (pairs > 0) & np.isfinite(h)
        if ok.sum() < 3 or np.ptp(levels[ok]) == 0:
            continue
        res = linregress(levels[ok].astype(float), h[ok])
        rows.append({"slope": res.slope, "intercept": res.intercept, "r": res.rvalue})
    return pd.DataFrame(rows, columns=["slope", "intercept", "r"])


def recentre(values, estimate: float) -> np.ndarray:
    """Bootstrap values shifted so that their median equals ``estimate`` (a shift
    correction of the resampling bias, keeping the spread)."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return values
    return values - np.median(finite) + estimate


def bootstrap_p(values, null: float) -> float:
    """Two-sided percentile-bootstrap p-value of ``null``: twice the smaller share of
    the (re-centred) bootstrap values on either side of it, counted as
    ``(k + 1) / (B + 1)`` so it is never 0; NaN without a finite value. It is below
    0.05 exactly when ``null`` lies outside the 95% percentile interval (up to the
    counting)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan")
    k = min(int((values <= null).sum()), int((values >= null).sum()))
    return float(min(1.0, 2 * (k + 1) / (values.size + 1)))


def stronger(r_entropy: float, r_zlib: float) -> str | None:
    """Which set-level line is the stronger by r: ``"entropy"``, ``"zlib"``,
    ``"equal"`` (the same to three decimals) or None when one has no line."""
    if not (np.isfinite(r_entropy) and np.isfinite(r_zlib)):
        return None
    if round(r_entropy, 3) == round(r_zlib, 3):
        return "equal"
    return "entropy" if r_entropy > r_zlib else "zlib"


# ---------------------------------------------------------------------------
# Dataset inference (Section 6)
# ---------------------------------------------------------------------------


def di_predict(intercept: float, tau: float) -> int:
    """The source's rule: a set is predicted a member (1) when the intercept of its
    entropy line exceeds the model's threshold ``tau``, else 0."""
    if not (np.isfinite(intercept) and np.isfinite(tau)):
        raise EntropyError(f"intercept and tau must be finite, got {intercept!r} and {tau!r}")
    return int(intercept > tau)


def reference_threshold(reference_intercepts, quantile: float = DI_QUANTILE) -> float:
    """A threshold from a set known to be training data (the auditor's step 2):
    the ``quantile`` of that set's (re-centred) bootstrap intercepts, so a member
    set like it clears the threshold in ``1 - quantile`` of resamples. (The source sets its
    thresholds by hand, 0 for Pythia and 3 for OLMo-2, without a rule.)"""
    if not 0 < quantile < 1:
        raise EntropyError(f"quantile must be in (0, 1), got {quantile!r}")
    values = np.asarray(reference_intercepts, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise EntropyError("the reference set has no bootstrap intercepts")
    return float(np.quantile(values, quantile))


