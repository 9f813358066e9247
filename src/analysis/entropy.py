"""Entropy–Memorization linearity and dataset inference (the entropy chapter).

The study re-run here measures *discoverable memorization*: a sequence from a
model's training data is cut into a prompt ``p`` (the first ``|p|`` tokens) and
an answer ``s`` (the next ``|s|``); the model continues ``p`` with a response
``r`` of ``|s|`` tokens, and the memorization score is the token-level
Levenshtein distance ``d(r, s)`` (0 = verbatim). Its claim is that per-instance
compressibility of ``s`` says little about ``d``, but pooling all answers with
the same score ``e`` into a *level set* and taking the empirical entropy of
their tokens gives a quantity linear in ``e`` (Pearson r > 0.9), and that the
intercept of that line separates training data from unseen data.

Everything here is pure computation over token-id lists and score arrays; the
one function that queries a model, :func:`discoverable`, goes through the
shared model interface (batched, cached). Entropies are in bits (log base 2),
the unit in which the source's numbers read naturally (``M(s_50) ≈ 11``,
"2^10 unique tokens").
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.params import Declaration, Param

DATA_DIR = Path(__file__).resolve().parents[2] / "data"

#: the source's discoverable-memorization setup
PAPER_PREFIX_TOKENS = 100
PAPER_SUFFIX_TOKENS = 50
PAPER_TEMPERATURE = 0.8
#: the source's minimum sample for dataset inference (Section 6.2, Appendix E.1)
PAPER_MIN_DI_SAMPLES = 1500
#: the source's per-model intercept thresholds (Section 6.3)
PAPER_TAU = {"Pythia": 0.0, "OLMo-2": 3.0}
#: Appendix C.1's sampling strategies (Table 4)
PAPER_STRATEGIES = (
    ("Temp=0", dict(temperature=0.0)),
    ("Temp=0.5", dict(temperature=0.5)),
    ("Temp=0.8", dict(temperature=0.8)),
    ("Temp=0.8, top_p=0.5", dict(temperature=0.8, top_p=0.5)),
    ("Temp=1", dict(temperature=1.0)),
    ("Temp=0.8, top_k=10", dict(temperature=0.8, top_k=10)),
)
#: Appendix E.1's sample sizes
PAPER_SAMPLE_SIZES = (250, 500, 1000, 2000, 4000, 8000)
#: how the trivial-memorization filter reads LCS: as written, LCS(p, s); as the
#: text describes it, overlap of the response with the prompt, LCS(p, r); or off
LCS_FILTERS = ("written", "described", "none")
PAPER_TABLES = {
    "table1": "entropy_table1.csv",
    "table4": "entropy_table4.csv",
}


PROFILES = {
    # CI: the smoke lab's models (near chance) and a handful of pairs.
    "smoke": dict(
        lab_profile="smoke", lab_model="pert-l2x", di_models=["pert-l2x"],
        lab_prefix_tokens=8, lab_suffix_tokens=8, n_lab=150, n_di_lab=60, n_strategy=60,
        lab_suffix_lengths=(4, 8), strategies=("Temp=0", "Temp=0.5"), sample_sizes=(40, 80), repeats=5,
        models=["smollm2-135m-instruct"], prefix_tokens=16, suffix_tokens=16, n_real=16,
        temperature=0.0, lcs_filter="written", n_boot=50, seed=0,
    ),
    # The lab's largest perturbed run (its stream holds sequences inserted 1 to 256
    # times, the only text a lab model reproduces) and the ladder's largest wide
    # model; both real models. The injected sequences are about 64 tokens long, so
    # |p| + |s| = 32 + 16, the source's 2 : 1 split scaled down. Greedy decoding
    # (the source's Table 4 finds the same r as at its main temperature 0.8, which
    # the lab section also shows). On 2 cores the lab part takes a few minutes;
    # 3 x 500 real pairs take about 4 minutes for SmolLM2 and 10 for Gemma 3 270M.
    "default": dict(
        lab_profile="default", lab_model="pert-l2x", di_models=["pert-l2x", "wide-256"],
        lab_prefix_tokens=32, lab_suffix_tokens=16, n_lab=10_000, n_di_lab=PAPER_MIN_DI_SAMPLES,
        n_strategy=3000, lab_suffix_lengths=(8, 16, 24, 32),
        strategies=tuple(name for name, _ in PAPER_STRATEGIES), sample_sizes=PAPER_SAMPLE_SIZES,
        repeats=20, models=["smollm2-135m-instruct", "gemma3-270m"], prefix_tokens=32, suffix_tokens=16,
        n_real=500, temperature=0.0, lcs_filter="written", n_boot=1000, seed=0,
    ),
    # The source's setup for the real models (|p| = 100, |s| = 50, n = 1,500 per set,
    # temperature 0.8); the lab keeps 32 + 16, the length of its injected sequences.
    "paper": dict(
        lab_profile="default", lab_model="pert-l2x", di_models=["pert-l2x", "wide-256"],
        lab_prefix_tokens=32, lab_suffix_tokens=16, n_lab=20_000, n_di_lab=PAPER_MIN_DI_SAMPLES,
        n_strategy=6000, lab_suffix_lengths=(8, 16, 24, 32),
        strategies=tuple(name for name, _ in PAPER_STRATEGIES), sample_sizes=PAPER_SAMPLE_SIZES,
        repeats=20, models=["smollm2-135m-instruct", "gemma3-270m"], prefix_tokens=PAPER_PREFIX_TOKENS,
        suffix_tokens=PAPER_SUFFIX_TOKENS, n_real=PAPER_MIN_DI_SAMPLES, temperature=PAPER_TEMPERATURE,
        lcs_filter="written", n_boot=1000, seed=0,
    ),
}


class EntropyError(ValueError):
    """Bad input to the entropy chapter's computations, raised before any work."""


# ---------------------------------------------------------------------------
# Sampling prompt/answer pairs
# ---------------------------------------------------------------------------


def available_windows(lengths: Sequence[int], window: int) -> int:
    """How many distinct windows of ``window`` tokens the documents hold."""
    return int(sum(max(0, n - window + 1) for n in lengths))


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

    Parameters
    ----------
    docs
        Document id → token ids.
    prefix_tokens, suffix_tokens
        ``|p|`` and ``|s|``; both at least 1.
    n
        Number of pairs; at most the number of distinct windows.

    Returns
    -------
    pandas.DataFrame
        Columns ``doc_id``, ``start``, ``prefix`` and ``suffix`` (lists of int),
        in a random order.

    Raises
    ------
    EntropyError
        If a length is not positive, if no document is as long as a window, or if
        ``n`` exceeds the number of distinct windows.
    """
    for name, value in (("prefix_tokens", prefix_tokens), ("suffix_tokens", suffix_tokens), ("n", n)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise EntropyError(f"{name} must be a positive integer, got {value!r}")
    if not docs:
        raise EntropyError("docs is empty: there is nothing to sample from")
    window = prefix_tokens + suffix_tokens
    ids = list(docs)
    lengths = np.array([len(docs[d]) for d in ids], dtype=np.int64)
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
    rng = np.random.default_rng(seed)
    if balance and weights is not None:
        raise EntropyError("give either balance=True or weights, not both")
    if weights is not None:
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
        flat = rng.choice(total, size=n, replace=False, p=per_position / per_position.sum())
        bounds = np.cumsum(counts)
        doc_index = np.searchsorted(bounds, flat, side="right")
        starts = flat - (bounds[doc_index] - counts[doc_index])
    elif balance:
        quota = np.zeros(len(ids), dtype=np.int64)
        left = n
        while left > 0:
            room = np.flatnonzero(quota < counts)
            share, extra = divmod(left, len(room))
            add = np.full(len(room), share, dtype=np.int64)
            add[rng.permutation(len(room))[:extra]] += 1
            add = np.minimum(add, counts[room] - quota[room])
            quota[room] += add
            left -= int(add.sum())
        doc_index = np.repeat(np.arange(len(ids)), quota)
        starts = np.concatenate([rng.choice(int(c), size=int(q), replace=False)
                                 for c, q in zip(counts, quota) if q > 0])
        order = rng.permutation(n)
        doc_index, starts = doc_index[order], starts[order]
    else:
        flat = rng.choice(total, size=n, replace=False)
        bounds = np.cumsum(counts)
        doc_index = np.searchsorted(bounds, flat, side="right")
        starts = flat - (bounds[doc_index] - counts[doc_index])
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
    from rapidfuzz.process import cpdist

    if len(a) != len(b):
        raise EntropyError(f"the two lists must have the same length, got {len(a)} and {len(b)}")
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(cpdist(list(a), list(b), scorer=scorer, workers=-1), dtype=np.int64)


def levenshtein(responses: Sequence[Sequence[int]], answers: Sequence[Sequence[int]]) -> np.ndarray:
    """Token-level Levenshtein distance of each response to its answer (the
    memorization score ``d(r, s)``): rapidfuzz's batch API on token-id lists."""
    from rapidfuzz.distance import Levenshtein

    return _paired(Levenshtein.distance, responses, answers)


def lcs(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> np.ndarray:
    """Length of the longest common subsequence of each pair of token lists."""
    from rapidfuzz.distance import LCSseq

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


@dataclass(frozen=True)
class Fit:
    """A least-squares line ``y = slope·x + intercept`` with Pearson ``r``."""

    slope: float
    intercept: float
    r: float
    p: float
    n: int

    def predict(self, x):
        return self.slope * np.asarray(x, dtype=float) + self.intercept


def fit_line(x, y) -> Fit:
    """Ordinary least squares of ``y`` on ``x`` (scipy's ``linregress``) over the
    finite points; raises :class:`EntropyError` with fewer than 3 points or a
    constant ``x``."""
    from scipy.stats import linregress

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3:
        raise EntropyError(f"a line needs at least 3 level sets, got {len(x)}; sample more pairs")
    if np.ptp(x) == 0:
        raise EntropyError("every level set has the same memorization score; there is no line to fit")
    res = linregress(x, y)
    return Fit(float(res.slope), float(res.intercept), float(res.rvalue), float(res.pvalue), int(len(x)))


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
    return fit_line(kept["e"], kept[column])


# ---------------------------------------------------------------------------
# Bootstrap (beyond the paper)
# ---------------------------------------------------------------------------


def _count_matrix(suffixes: Sequence[Sequence[int]]):
    """Sparse pairs × vocabulary matrix of answer-token counts."""
    from scipy.sparse import csr_matrix

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
    from scipy.sparse import csr_matrix
    from scipy.stats import linregress

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


def interval(values, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap values."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (np.nan, np.nan)
    lo, hi = np.quantile(values, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


# ---------------------------------------------------------------------------
# Dataset inference (Section 6)
# ---------------------------------------------------------------------------


def di_predict(intercept: float, tau: float) -> int:
    """The source's rule: a set is predicted a member (1) when the intercept of its
    entropy line exceeds the model's threshold ``tau``, else 0."""
    if not (np.isfinite(intercept) and np.isfinite(tau)):
        raise EntropyError(f"intercept and tau must be finite, got {intercept!r} and {tau!r}")
    return int(intercept > tau)


def reference_threshold(reference_intercepts, quantile: float = 0.05) -> float:
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


# ---------------------------------------------------------------------------
# Running a model
# ---------------------------------------------------------------------------


def discoverable(model, pairs: pd.DataFrame, settings, lcs_filter: str = "written",
                 progress: bool | str = False) -> pd.DataFrame:
    """Prompt ``model`` with every pair's prefix (token ids) for ``|s|`` new tokens.

    Returns ``pairs`` with ``response`` (token ids; None on error), ``error``,
    ``score`` (Levenshtein distance to the answer), ``suffix_text``, the LCS
    lengths of both filter readings (``lcs_ps``, ``lcs_pr``) and ``trivial``
    under ``lcs_filter``. Errors are recorded, never scored: their score is NaN.
    The prompt length must be the same for all pairs so one setting applies.
    """
    if lcs_filter not in LCS_FILTERS:
        raise EntropyError(f"lcs_filter must be one of {LCS_FILTERS}, got {lcs_filter!r}")
    lengths = {len(s) for s in pairs["suffix"]}
    if len(lengths) != 1:
        raise EntropyError(f"every answer must have the same length, got lengths {sorted(lengths)}")
    from analysis.models import GenerationSettings

    (suffix_len,) = lengths
    settings = GenerationSettings(**{**settings.as_dict(), "max_new_tokens": suffix_len})
    answers = model.generate_ids(list(pairs["prefix"]), settings, progress=progress)
    out = pairs.copy()
    out["response"] = [a.meta.get("ids") if a.ok else None for a in answers]
    out["error"] = [a.error for a in answers]
    ok = out["error"].isna().to_numpy()
    score = np.full(len(out), np.nan)
    if ok.any():
        score[ok] = levenshtein([out["response"].iat[i] for i in np.flatnonzero(ok)],
                                [out["suffix"].iat[i] for i in np.flatnonzero(ok)])
    out["score"] = score
    out["suffix_text"] = model.detokenize(list(out["suffix"]))
    out["lcs_ps"] = lcs(list(out["prefix"]), list(out["suffix"]))
    lcs_pr = np.full(len(out), -1)
    if ok.any():
        lcs_pr[ok] = lcs([out["prefix"].iat[i] for i in np.flatnonzero(ok)],
                         [out["response"].iat[i] for i in np.flatnonzero(ok)])
    out["lcs_pr"] = lcs_pr  # -1 where there is no response: never trivial, and never kept anyway
    out["trivial"] = trivial(out, lcs_filter)
    return out


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
    """One sample's level sets, entropy line, zlib line and bootstrap."""

    name: str
    levels: pd.DataFrame
    fit: Fit | None
    zlib_fit: Fit | None
    norm_fit: Fit | None
    boot: pd.DataFrame
    pairs: int

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
        lo_i, hi_i = interval(self.centred("intercept"))
        lo_s, hi_s = interval(self.centred("slope"))
        lo_r, hi_r = interval(np.clip(self.centred("r"), -1, 1))
        f = self.fit
        return {
            "set": self.name, "pairs": self.pairs, "level sets": len(self.levels),
            "r": f.r if f else np.nan, "r lo": lo_r, "r hi": hi_r,
            "intercept": f.intercept if f else np.nan, "intercept lo": lo_i, "intercept hi": hi_i,
            "slope": f.slope if f else np.nan, "slope lo": lo_s, "slope hi": hi_s,
        }


def analyse_set(name: str, scored: pd.DataFrame, n_boot: int = 1000, seed: int = 0,
                min_pairs: int = 1, base: float = 2.0) -> SetResult:
    """Level sets, the entropy, zlib and normalized-entropy lines, and a bootstrap
    of the entropy line, over the kept pairs of ``scored``.

    A sample whose answers fall into fewer than 3 level sets (a model near
    chance gives almost every answer the score ``|s|``) has no line: its fits
    are None and its row NaN, so a chapter can say so instead of stopping.
    A sample with no kept pair at all is an error.
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

    boot = bootstrap_fits(scores, list(k["suffix"]), n_boot=n_boot, seed=seed, base=base, min_pairs=min_pairs)
    return SetResult(name, table, maybe("entropy"), maybe("zlib"), maybe("norm_entropy"), boot, len(k))


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
    return {"entropy": fit_line(m["score"], m["entropy"]), "zlib": fit_line(m["score"], m["zlib"])}


def strategy_settings(name: str, seed: int = 0):
    """The generation settings of one of Appendix C.1's strategies (Table 4's names)."""
    from analysis.models import GenerationSettings

    table = dict(PAPER_STRATEGIES)
    if name not in table:
        raise EntropyError(f"strategy must be one of {list(table)}, got {name!r}")
    return GenerationSettings(seed=seed, **table[name])


def load_paper_table(name: str) -> pd.DataFrame:
    """One of the source's tables transcribed into ``data/`` (see the file's note)."""
    if name not in PAPER_TABLES:
        raise EntropyError(f"name must be one of {sorted(PAPER_TABLES)}, got {name!r}")
    return pd.read_csv(DATA_DIR / PAPER_TABLES[name], comment="#")


def _check_lab_model(value, settings):
    from analysis.lab.ladder import check_runs

    check_runs("lab_model", value, settings["lab_profile"])


PARAMS = Declaration(
    "entropy",
    PROFILES,
    (
        Param("lab_model", "the lab run of the linearity study, such as pert-l2x", kind="str",
              check=_check_lab_model),
        Param("models", "local models of the real-data section (token-level access: no API models)",
              kind="models", api=False),
        Param("n_lab", "pairs in the lab model's main sample", kind="int", lo=1),
        Param("n_real", "pairs per set for each real model", kind="int", lo=1),
        Param("prefix_tokens", "|p| for the real models", kind="int", lo=1),
        Param("suffix_tokens", "|s| for the real models", kind="int", lo=1),
        Param("temperature", "sampling temperature of the main runs; 0 means greedy", kind="float",
              lo=0.0, hi=2.0),
        Param("lcs_filter", "which LCS the trivial-pair filter uses", kind="choice", choices=LCS_FILTERS),
        Param("n_boot", "bootstrap resamples", kind="int", lo=1),
        Param("seed", "seed of the samples, the sampling and the bootstrap", kind="int", lo=0),
    ),
    profile_help={"smoke": "the smoke lab and a handful of pairs (CI)",
                  "default": "the book's lab and 500 pairs per set for each real model",
                  "paper": "the source's |p| = 100, |s| = 50, 1,500 pairs per set at temperature 0.8"},
)
