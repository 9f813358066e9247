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

import numpy as np
import pandas as pd

from analysis.core.paths import DATA_DIR  # noqa: E402
from analysis.lab.ladder import lab_profile_param
from analysis.params import Declaration, Param

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
#: the abstract and Section 4: Pearson r of the level-set entropy line on every model tried
PAPER_MIN_R = 0.9
#: Figure 1 (Section 3.1): instance-level r, "a positive, yet weak" correlation "around 0.6"
PAPER_INSTANCE_R = 0.6
PAPER_INSTANCE_MODEL = "OLMo-1B"
#: Figure 2 (Section 4) on OLMo-2-1124-7B: "r = 0.972 and 0.945 respectively" for its panels
#: (a) zlib and (b) entropy. Read in panel order; Appendix C's base-model entropy line
#: (intercept 3.724, slope 0.142, as in Table 1) has r = 0.945, which confirms that reading.
PAPER_SET_R = {"entropy": 0.945, "zlib": 0.972}
PAPER_SET_MODEL = "OLMo-2-1124-7B"
#: Figure 4 (Section 4): continuation lengths and the range of r across them
PAPER_LENGTHS = (10, 20, 30, 40, 50)
PAPER_LENGTH_R = (0.92, 0.98)
#: Figure 4 and Appendix C.7: every line reaches M(s_50) ≈ 11 at e = |s| = 50 (OLMo-2)
PAPER_END_ENTROPY = 11.0
#: Appendix C.1: Table 4's sample (the DCLM1 subset of OLMo-2-1124-Mix), about this many pairs
PAPER_TABLE4_PAIRS = 28_000
#: Appendix E.1: below the minimum sample, the intercept falls from a plateau towards this value
PAPER_SMALL_SAMPLE_INTERCEPT = -6.0
#: sample sizes of the main experiments: Figure 1 (OLMo-1B) and Appendix E.1 (OLMo-2's dataset)
PAPER_N_PAIRS = {"OLMo-1B": 240_000, "OLMo-2-1124-7B": 300_000}
#: this chapter's rule for tau: this quantile of the reference set's re-centred bootstrap intercepts
DI_QUANTILE = 0.05
#: a call is stable when at least this share of re-centred resamples makes it too
AGREEMENT_LEVEL = 0.95
#: a change of the intercept across answer lengths below this many bits "hardly moves"
FLAT_INTERCEPT_BITS = 0.5
#: level-set entropies at e = |s| within this many bits of each other "end near the same entropy"
SAME_END_BITS = 1.0
#: a pair "scores low" below this share of |s| edits
LOW_SCORE_SHARE = 0.5
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
        lab_popular_sets=1, lab_heldout_sets=1,
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
    # the lab section also shows). The lab's excerpts and held-out windows are each
    # cut into 3 sets (excerpts by copies), so each lab model meets 8 candidate sets
    # (16 over the two), every one with more distinct 48-token windows than the
    # 1,500 pairs it supplies. On 2 cores the lab part takes a few minutes;
    # 3 x 500 real pairs take about 4 minutes for SmolLM2 and 10 for Gemma 3 270M.
    "default": dict(
        lab_profile="default", lab_model="pert-l2x", di_models=["pert-l2x", "deep-128"],
        lab_popular_sets=3, lab_heldout_sets=3,
        lab_prefix_tokens=32, lab_suffix_tokens=16, n_lab=10_000, n_di_lab=PAPER_MIN_DI_SAMPLES,
        n_strategy=3000, lab_suffix_lengths=(8, 16, 24, 32),
        strategies=tuple(name for name, _ in PAPER_STRATEGIES), sample_sizes=PAPER_SAMPLE_SIZES,
        repeats=20, models=["smollm2-135m-instruct", "gemma3-270m"], prefix_tokens=32, suffix_tokens=16,
        n_real=500, temperature=0.0, lcs_filter="written", n_boot=1000, seed=0,
    ),
    # The source's setup for the real models (|p| = 100, |s| = 50, n = 1,500 per set,
    # temperature 0.8); the lab keeps 32 + 16, the length of its injected sequences.
    "paper": dict(
        lab_profile="default", lab_model="pert-l2x", di_models=["pert-l2x", "deep-128"],
        lab_popular_sets=3, lab_heldout_sets=3,
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


# ---------------------------------------------------------------------------
# The chapter's steps: settings, the lab's training stream, runs
# ---------------------------------------------------------------------------


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
    }


def split_phrase(prefix_tokens: int, suffix_tokens: int) -> str:
    """How a run's ``|p| : |s|`` compares with the source's (100 : 50): its own
    lengths, its split scaled down (or up), or another split."""
    from fractions import Fraction

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


def decoding_label(temperature: float) -> str:
    """How the chapter names a decoding: ``"greedy"`` at temperature 0, else ``"temperature t"``."""
    return "greedy" if temperature == 0 else f"temperature {temperature:g}"


def other_temperature(temperature: float) -> float:
    """The lab's second decoding: the source's main temperature, or greedy decoding
    when the run already decodes at the source's temperature."""
    return PAPER_TEMPERATURE if temperature != PAPER_TEMPERATURE else 0.0


def lab_decodings(temperature: float, seed: int = 0) -> dict:
    """The two decodings of the lab's main sample, by label: the run's
    ``temperature`` first, then :func:`other_temperature`."""
    from analysis.models import GenerationSettings

    return {decoding_label(t): GenerationSettings(temperature=float(t), seed=seed)
            for t in (temperature, other_temperature(temperature))}


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


def training_stream(lab, run: str, model) -> Stream:
    """The background passages, popular-text excerpts and (for a perturbed run) the
    injected sequences with at least one copy that lab run ``run`` trained on,
    tokenized by ``model`` (a lab model: the lab's tokenizer)."""
    from analysis.lab.ladder import run_injections

    corpus = lab.corpus
    cfg = lab.profile.run(run)
    docs = [(d.doc_id, d.text, d.copies, d.kind) for d in corpus.documents if d.kind == "background"]
    docs += [(d.doc_id, d.text, d.copies, d.kind) for d in corpus.documents if d.kind == "popular"]
    if cfg.inject:
        docs += [(d.seq_id, d.text, d.copies, "injected") for d in run_injections(cfg, corpus.injections)
                 if d.copies > 0]
    ids = model.tokenize([text for _, text, _, _ in docs])
    left_out = Counter(d.kind for d in corpus.documents if d.kind not in ("background", "popular"))
    return Stream(tokens={d[0]: t for d, t in zip(docs, ids)}, copies={d[0]: d[2] for d in docs},
                  source={d[0]: d[3] for d in docs}, left_out=dict(left_out))


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


def low_score_sentence(scored: pd.DataFrame, stream: Stream) -> str:
    """Where the low scores (below ``LOW_SCORE_SHARE · |s|`` edits) come from, and
    whether they are rarer than high ones, as in the source."""
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
    rarer = n_low < n - n_low
    rarity = ("Low scores are rarer than high ones, as in the source, where they are exponentially rarer."
              if rarer else
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


# ---------------------------------------------------------------------------
# Lines and their verdicts
# ---------------------------------------------------------------------------


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


def stronger_line(r_entropy: float, r_zlib: float) -> str:
    """Which set-level line is the stronger by r (the larger r)."""
    if not (np.isfinite(r_entropy) and np.isfinite(r_zlib)):
        return "one of the two has no line, so they cannot be compared"
    if round(r_entropy, 3) == round(r_zlib, 3):
        return "the two lines are equally strong"
    return "the entropy line is the stronger" if r_entropy > r_zlib else "the zlib line is the stronger"


def paper_lines_sentence() -> str:
    """The source's Figure 2 in words: both r, and which line is the stronger by r."""
    e, z = PAPER_SET_R["entropy"], PAPER_SET_R["zlib"]
    both = "both are strong" if min(e, z) > PAPER_MIN_R else "not both are strong"
    verdict = stronger_line(e, z)
    text = (f"In the source, on {PAPER_SET_MODEL}, {both}: its Figure 2 gives r = {z:.3f} and {e:.3f} for "
            f"the zlib and entropy panels, in that order (its Appendix C gives {e:.3f} for the same entropy "
            f"line), so by r {verdict} there")
    return text + (", although its text calls entropy the better approximator." if "zlib line" in verdict
                   else ", as its text says.")


def _r(fit: Fit | None) -> float:
    return fit.r if fit is not None else np.nan


def linearity_sentences(main: SetResult, other_label: str, other: SetResult) -> str:
    """The set-level result in words: the entropy line's direction, r against the
    source's 0.9 with its bootstrap interval, the equation, r under the other
    decoding, and the zlib line against the entropy line."""
    if main.fit is None:
        text = (f"The main sample falls into {len(main.levels)} level sets, too few for a line (a line needs "
                "3), so this run has no entropy line to test.")
    else:
        f = main.fit
        direction = "rises" if f.slope > 0 else "falls" if f.slope < 0 else "stays flat"
        lo, hi = interval(np.clip(main.centred("r"), -1, 1))
        ci = f"bootstrap 95% interval {lo:.3f} to {hi:.3f}" if np.isfinite(lo) else "no bootstrap interval"
        side = "above" if f.r > PAPER_MIN_R else "below"
        sign = "+" if f.slope >= 0 else "−"
        text = (f"Pooled into {len(main.levels)} level sets, the entropy {direction} with the score along a "
                f"line with r = {f.r:.3f} ({ci}), {side} the {PAPER_MIN_R:g} the source reports on every "
                f"model. The line is M_ent(s_e) ≈ {f.intercept:.2f} {sign} {abs(f.slope):.3f}·e bits.")
    verdict = stronger_line(_r(main.fit), _r(main.zlib_fit))
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


def size_tracking_r(levels: pd.DataFrame) -> float:
    """Pearson r, over the level sets, between each set's entropy and log2 of the
    number of pairs in it: how far the entropy follows the set's size (a plug-in
    entropy grows with the tokens it is computed on) rather than its score. NaN
    with fewer than 3 level sets or where either column is constant."""
    try:
        fit = fit_line(np.log2(levels["pairs"].to_numpy(float)), levels["entropy"])
    except EntropyError:  # fewer than 3 level sets, or every set the same size
        return float("nan")
    return fit.r if np.ptp(levels["entropy"]) > 0 else float("nan")


def set_size_sentence(main: SetResult, suffix_tokens: int) -> str:
    """Whether the level sets' entropy follows their sizes more closely than their
    scores (:func:`size_tracking_r` against the entropy line's r), with the sizes of
    the verbatim set and of the sets below ``|s|/2``."""
    r_size = size_tracking_r(main.levels)
    if main.fit is None or not np.isfinite(r_size):
        return "With fewer than 3 level sets, the entropy's dependence on set size is not measured here."
    closer = "more closely than" if abs(r_size) > abs(main.fit.r) else "less closely than"
    text = (f"Across the level sets the entropy follows log₂ of the number of pairs in each set at "
            f"r = {r_size:.2f}, {closer} it follows the score (r = {main.fit.r:.3f}).")
    lv = main.levels.set_index("e")["pairs"]
    low = lv[(lv.index > 0) & (lv.index < suffix_tokens / 2)]
    if 0 in lv.index and len(low):
        compare = ("so verbatim answers are commoner here than partly memorized ones, whereas in the source "
                   "low scores are exponentially rarer than high ones" if lv[0] > low.max() else
                   "so here, as in the source, verbatim answers are rarer than partly memorized ones")
        text += (f" The verbatim set (e = 0) holds {int(lv[0]):,} pairs and the sets at e = 1 to "
                 f"{int(low.index.max())} hold {int(low.min()):,} to {int(low.max()):,} each: {compare}.")
    return text


def normalized_sentence(norm_fit: Fit | None) -> str:
    """The normalized-entropy line against the source's decreasing one."""
    if norm_fit is None:
        return ("The normalized entropy has no line here (fewer than 3 level sets with more than one "
                "distinct token); the source reports a decreasing one.")
    if norm_fit.slope < 0:
        return (f"The normalized entropy falls with e here (r = {norm_fit.r:.3f}), as in the source, which "
                "reports a decreasing line.")
    return (f"The normalized entropy does not fall with e here (r = {norm_fit.r:.3f}, slope "
            f"{norm_fit.slope:.4f}), unlike the source, which reports a decreasing line.")


# ---------------------------------------------------------------------------
# Answer length, sampling strategy, sample size
# ---------------------------------------------------------------------------


def by_suffix_length(model, pairs: pd.DataFrame, lengths: Sequence[int], settings,
                     lcs_filter: str = "written", n_boot: int = 1000, seed: int = 0) -> dict[str, SetResult]:
    """The source's varying continuation lengths: the same prompts, each answer cut
    to its first ``L`` tokens for every ``L`` in ``lengths``, scored and analysed.
    Keys read ``"|s| = L"``."""
    out = {}
    for n in lengths:
        label = f"|s| = {n}"
        cut = pairs.assign(suffix=[s[:n] for s in pairs["suffix"]])
        out[label] = analyse_set(label, discoverable(model, cut, settings, lcs_filter, progress=label),
                                 n_boot=n_boot, seed=seed)
    return out


def length_r_sentence(table: pd.DataFrame) -> str:
    """r across answer lengths, beside the source's range, and at how many lengths r
    is above the source's 0.9."""
    r = table["r"]
    ok = r.dropna()
    paper = (f"In the source it ranges from {PAPER_LENGTH_R[0]:g} to {PAPER_LENGTH_R[1]:g} for "
             f"{PAPER_LENGTHS[0]} to {PAPER_LENGTHS[-1]} tokens.")
    if ok.empty:
        return f"No answer length gives a line here (each has fewer than 3 level sets). {paper}"
    high = int((ok > PAPER_MIN_R).sum())
    missing = f" ({len(r) - len(ok)} of {len(r)} lengths have no line)" if len(ok) < len(r) else ""
    verdict = (f"above {PAPER_MIN_R:g} at every length" if high == len(r) else
               f"above {PAPER_MIN_R:g} at {high} of {len(r)} lengths")
    return (f"Across answer lengths, r ranges from {ok.min():.2f} to {ok.max():.2f}{missing}: {verdict}. "
            f"{paper}")


def intercept_trend_sentence(table: pd.DataFrame) -> str:
    """Whether the intercept grows with |s| as in the source: it "hardly moves"
    (first to last within ``FLAT_INTERCEPT_BITS``), "grows" (at every step or only
    overall) or "goes the other way"; then each length's intercept."""
    values = table["intercept"].to_numpy(dtype=float)
    listing = ", ".join(f"{v:.2f} at {s}" if np.isfinite(v) else f"no line at {s}"
                        for v, s in zip(values, table["set"]))
    if len(values) < 2 or not np.isfinite(values).all():
        return f"Here the trend cannot be read, since not every length has a line: {listing}."
    change = values[-1] - values[0]
    if abs(change) < FLAT_INTERCEPT_BITS:
        verdict = "Here it hardly moves"
    elif change > 0:
        verdict = "Here it grows too, at every step" if (np.diff(values) > 0).all() else \
            "Here it grows from the shortest to the longest answers, though not at every step"
    else:
        verdict = "Here it goes the other way"
    return f"{verdict}: {listing}."


def end_entropy_sentence(results: Mapping[str, SetResult], lengths: Sequence[int]) -> str:
    """Whether every line ends near the same entropy at e = |s|: the level-set
    entropies at ``e = L`` agree within ``SAME_END_BITS``, as the source's M(s_50) ≈ 11."""
    top = np.array([res.levels.set_index("e")["entropy"].get(n, np.nan)
                    for n, res in zip(lengths, results.values())], dtype=float)
    lead = (f"The source's other observation, that every line ends near the same entropy at e = |s| (about "
            f"{PAPER_END_ENTROPY:g} bits for OLMo-2),")
    finite = top[np.isfinite(top)]
    if finite.size == 0:
        return f"{lead} cannot be checked here: no answer length has a level set at e = |s|."
    missing = len(top) - finite.size
    holds = "holds here too" if np.ptp(finite) <= SAME_END_BITS else "does not hold here"
    note = f" ({missing} of {len(top)} lengths have no level set at e = |s|)" if missing else ""
    return (f"{lead} {holds}: the level set at e = |s| has {finite.min():.1f} to {finite.max():.1f} bits "
            f"across lengths{note}.")


def by_strategy(model, pairs: pd.DataFrame, strategies: Sequence[str], lcs_filter: str = "written",
                n_boot: int = 1000, seed: int = 0) -> dict[str, SetResult]:
    """The source's Table 4 on one model: the same pairs decoded under each of
    Appendix C.1's strategies (:func:`strategy_settings`), scored and analysed."""
    return {name: analyse_set(name, discoverable(model, pairs, strategy_settings(name, seed=seed), lcs_filter,
                                                 progress=name), n_boot=n_boot, seed=seed)
            for name in strategies}


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


def strategy_sentence(table: pd.DataFrame) -> str:
    """Whether r stays above the source's 0.9 under every strategy, on this run and
    in the source's Table 4."""
    ok = table["r"].dropna()
    paper_min = float(table["paper r"].min())
    paper = (f"the source's r is at least {paper_min:.3f} under every strategy" if paper_min > PAPER_MIN_R
             else f"the source's r falls to {paper_min:.3f}")
    if ok.empty:
        return f"No strategy gives a line on the lab model (each has fewer than 3 level sets), where {paper}."
    high = int((ok > PAPER_MIN_R).sum())
    n = len(table)
    missing = f" ({n - len(ok)} of {n} have no line)" if len(ok) < n else ""
    verdict = (f"it stays above {PAPER_MIN_R:g} under every one, as in the source, where {paper}" if high == n
               else f"it is above {PAPER_MIN_R:g} under {high} of {n}, where {paper}")
    return (f"On the lab model r ranges from {ok.min():.2f} to {ok.max():.2f} across the {n} strategies"
            f"{missing}: {verdict}.")


def sample_size_summary(sens: pd.DataFrame) -> pd.DataFrame:
    """Per subsample size: subsamples with a line, and the mean, 10th and 90th
    percentile and 10–90 spread of their intercepts."""
    g = sens.groupby("size")["intercept"]
    out = pd.DataFrame({"subsamples": g.size(), "mean": g.mean(), "p10": g.quantile(0.1),
                        "p90": g.quantile(0.9)})
    out["spread"] = out["p90"] - out["p10"]
    return out.reset_index()


def sample_size_sentence(sens: pd.DataFrame) -> str:
    """Appendix E.1 in words: whether small samples move the intercept more than
    large ones, and whether the mean intercept is lower at the smallest size, as the
    source's falls towards −6."""
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
    verdict = ("Small samples move the intercept more than large ones" if small["spread"] > large["spread"]
               else "Here small samples do not move the intercept more than large ones")
    lower = (f"lower at the smallest size, as in {paper}" if small["mean"] < large["mean"] else
             f"not lower at the smallest size, unlike {paper}")
    return (f"{verdict}: between the 10th and 90th percentile of subsamples it spans {small['spread']:.2f} "
            f"bits at {int(small['size']):,} pairs and {large['spread']:.2f} at {int(large['size']):,}. The "
            f"mean intercept goes from {small['mean']:.2f} to {large['mean']:.2f}: {lower}.")


# ---------------------------------------------------------------------------
# Dataset inference, run and read
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CandidateSet:
    """A set of documents for dataset inference: its label, its documents (id →
    text), whether it is training data (``truth``), why we believe so, whether to
    share its windows evenly among documents, and whether it is the reference that
    sets τ."""

    label: str
    docs: Mapping[str, str]
    truth: int
    assumption: str
    balance: bool = False
    reference: bool = False


#: the lab's dataset-inference sets: the popular-text excerpts in this many sets of
#: contiguous copy bands, the held-out popular-text windows in this many sets, and
#: which member set is the reference ("background": background A; "popular": the
#: band of most-copied excerpts). Each set must hold at least as many windows of
#: |p| + |s| tokens as the pairs drawn from it (:func:`candidate_windows`).
LAB_POPULAR_SETS = 1
LAB_HELDOUT_SETS = 1
LAB_REFERENCE = "background"
LAB_REFERENCES = ("background", "popular")


def _bands(items: list, n: int) -> list[list]:
    """``items`` (sorted) cut into ``n`` contiguous runs of near-equal length, larger runs first."""
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for k in range(n):
        stop = start + size + (k < extra)
        out.append(items[start:stop])
        start = stop
    return out


def lab_candidate_sets(corpus, popular_sets: int = LAB_POPULAR_SETS, heldout_sets: int = LAB_HELDOUT_SETS,
                       reference: str = LAB_REFERENCE) -> list[CandidateSet]:
    """The lab's sets: two halves of the background, the popular-text excerpts, and
    the held-out popular windows and 2024–26 stories, which no training document
    overlaps. The reference is background A, or (``reference="popular"``) the
    excerpts with the most copies.

    With ``popular_sets`` above 1 the excerpts, ordered by copies (then id), are cut
    into that many contiguous bands of near-equal numbers of excerpts, one set each,
    fewest copies first; with ``heldout_sets`` above 1 the held-out popular windows,
    ordered by id, are dealt round-robin into that many sets. The number of sets
    therefore comes from these two counts and the corpus; each set is labelled by
    what it holds.
    """
    from analysis.lab.corpus import SHINGLE_WORDS

    if reference not in LAB_REFERENCES:
        raise EntropyError(f"reference must be one of {LAB_REFERENCES}, got {reference!r}")
    background = [d for d in corpus.documents if d.kind == "background"]
    popular = sorted((d for d in corpus.documents if d.kind == "popular"), key=lambda d: (d.copies, d.doc_id))
    heldout = sorted((d for d in corpus.heldout if d.source == "popular"), key=lambda d: d.doc_id)
    for name, value, items in (("popular_sets", popular_sets, popular),
                               ("heldout_sets", heldout_sets, heldout)):
        whole = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
        if not whole or not 1 <= value <= max(1, len(items)):
            raise EntropyError(f"{name} must be an integer from 1 to the {len(items)} documents it splits, "
                               f"got {value!r}")
    member = "in the training stream (logged)"
    never = f"never in the training stream (checked by {SHINGLE_WORDS}-word shingles)"

    def docs(items):
        return {d.doc_id: d.text for d in items}

    def copies_text(items):
        copies = sorted({d.copies for d in items})
        return f"{copies[0]} copies" if len(copies) == 1 else f"{copies[0]} to {copies[-1]} copies"

    by_ref = reference == "popular"
    bands = _bands(popular, popular_sets)
    popular_out = []
    for k, band in enumerate(bands):
        if not band:
            continue
        is_ref = by_ref and k == len(bands) - 1
        popular_out.append(CandidateSet(f"training: popular excerpts ({copies_text(band)})"
                                        + (" (reference)" if is_ref else ""), docs(band), 1, member,
                                        reference=is_ref))
    heldout_out = [
        CandidateSet("held out: popular-text windows" + (f" {chr(65 + k)}" if heldout_sets > 1 else ""),
                     docs(heldout[k::heldout_sets]), 0, never, balance=True)
        for k in range(heldout_sets)
    ]
    background_a = "training: background A" + ("" if by_ref else " (reference)")
    out = [
        CandidateSet(background_a, docs(background[0::2]), 1, member, reference=not by_ref),
        CandidateSet("training: background B", docs(background[1::2]), 1, member),
        *popular_out,
        *heldout_out,
        CandidateSet("held out: 2024–26 stories", docs(d for d in corpus.heldout if d.source == "baseline"),
                     0, never, balance=True),
    ]
    # the reference first, as decide_membership and the tables expect it
    return sorted(out, key=lambda c: not c.reference)


def candidate_windows(sets: Sequence[CandidateSet], tokenize, window: int) -> pd.DataFrame:
    """How many distinct windows of ``window`` (= |p| + |s|) tokens each set's
    documents hold, to check before any model runs that every set can supply the
    pairs dataset inference draws from it (:func:`sample_pairs` needs at least as
    many windows as pairs). ``tokenize`` maps a list of texts to lists of token ids
    (a model's ``tokenize``). One row per set: ``set``, ``truth``, ``reference``,
    ``documents``, ``tokens`` and ``windows``."""
    rows = []
    for cand in sets:
        lengths = [len(t) for t in tokenize(list(cand.docs.values()))] if cand.docs else []
        rows.append({"set": cand.label, "truth": cand.truth, "reference": cand.reference,
                     "documents": len(lengths), "tokens": int(sum(lengths)),
                     "windows": available_windows(lengths, window)})
    return pd.DataFrame(rows, columns=["set", "truth", "reference", "documents", "tokens", "windows"])


def real_candidate_sets(popular: Mapping[str, str], baseline: Mapping[str, str]) -> list[CandidateSet]:
    """The real models' sets: the popular texts in two halves by sorted id (the
    first is the reference), likely members, and the 2024–26 stories, likely
    non-members; windows shared evenly among the texts of a set."""
    ids = sorted(popular)
    likely = "likely member: public-domain classics in every web corpus"
    return [
        CandidateSet("popular texts A (reference)", {k: popular[k] for k in ids[0::2]}, 1, likely, True,
                     True),
        CandidateSet("popular texts B", {k: popular[k] for k in ids[1::2]}, 1, likely, True),
        CandidateSet("2024–26 stories", dict(baseline), 0,
                     "likely non-member: published after the models' training data were collected", True),
    ]


@dataclass
class Inference:
    """One model's dataset inference: each set's :class:`SetResult` and the decision table."""

    model: str
    results: dict[str, SetResult]
    table: pd.DataFrame


def decide_membership(results: Mapping[str, SetResult], sets: Sequence[CandidateSet], model: str
                      ) -> pd.DataFrame:
    """The source's decision rule with this chapter's τ: τ is the
    :data:`DI_QUANTILE` quantile of the reference set's re-centred bootstrap
    intercepts (:func:`reference_threshold`); every set with a line is predicted a
    member when its intercept exceeds τ (:func:`di_predict`). ``agreement`` is the
    share of its re-centred resamples that make the same call. A set without a line,
    or a model whose reference has none, gets NaN."""
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
                   agreement=agreement)
        rows.append(row)
    return pd.DataFrame(rows)


def dataset_inference(model, sets: Sequence[CandidateSet], prefix_tokens: int, suffix_tokens: int, n: int,
                      settings, lcs_filter: str = "written", n_boot: int = 1000, seed: int = 0,
                      sample_seed: int | None = None) -> Inference:
    """The auditor's procedure (Section 6.4) on one model: tokenize each set with
    the model, draw ``n`` pairs from it (set ``k`` with seed ``sample_seed + k``),
    score them, fit each set's line with a bootstrap (seed ``seed``) and decide
    every set against τ from the reference set (:func:`decide_membership`)."""
    sample_seed = seed if sample_seed is None else sample_seed
    name = model.name.removeprefix("lab:")
    results = {}
    for k, cand in enumerate(sets):
        tokens = dict(zip(cand.docs, model.tokenize(list(cand.docs.values()))))
        pairs = sample_pairs(tokens, prefix_tokens, suffix_tokens, n, seed=sample_seed + k,
                             balance=cand.balance)
        scored = discoverable(model, pairs, settings, lcs_filter, progress=f"{name}: {cand.label}")
        results[cand.label] = analyse_set(cand.label, scored, n_boot=n_boot, seed=seed)
    table = decide_membership(results, sets, name)
    table["kind"] = "lab" if model.name.startswith("lab:") else "real"
    return Inference(name, results, table)


def di_table(inferences: Sequence[Inference]) -> pd.DataFrame:
    """Every model's decision table in one, with ``correct`` (1 when the prediction
    matches the truth; a set left undecided counts as wrong)."""
    table = pd.concat([i.table for i in inferences], ignore_index=True)
    table["correct"] = (table["prediction"] == table["truth"]).astype(int)
    return table


def correct_count(table: pd.DataFrame, kind: str | None = None) -> str:
    """``"k of n"`` candidate sets decided correctly (of kind ``"lab"`` or ``"real"``, or all)."""
    c = table[table["role"] == "candidate"]
    if kind is not None:
        c = c[c["kind"] == kind]
    return f"{int(c['correct'].sum())} of {len(c)}"


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


def intercept_slope_sentence(results: Sequence[SetResult]) -> str:
    """Whether a set's intercept and slope move against each other, as the source
    notes for a fixed model and dataset (Appendix C.7): the median over sets of the
    Pearson r between their bootstrap intercepts and slopes (below −0.5: "in
    opposite directions"; above 0.5: "together"; else "loosely")."""
    rs = [float(np.corrcoef(r.boot["intercept"], r.boot["slope"])[0, 1]) for r in results
          if len(r.boot) >= 3 and r.boot["slope"].std() > 0 and r.boot["intercept"].std() > 0]
    if not rs:
        return "No set has enough bootstrap lines to say how its intercept and slope move."
    m = float(np.median(rs))
    how = ("move in opposite directions" if m < -0.5 else "move in the same direction" if m > 0.5 else
           "are only loosely tied")
    agree = "as" if m < -0.5 else "where"
    source = "notes" if m < -0.5 else "sees the intercept rise as the slope falls"
    return (f"Within a set, the bootstrap's intercepts and slopes {how} (median r = {m:.2f} over {len(rs)} "
            f"sets), {agree} the source {source} for a fixed model and dataset (Appendix C.7).")


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


def lowest_score(inferences: Sequence[Inference]) -> int:
    """The lowest memorization score any set of these models reached."""
    return min(int(res.levels["e"].min()) for i in inferences for res in i.results.values())


# ---------------------------------------------------------------------------
# What the run shows
# ---------------------------------------------------------------------------


def pooling_sentence(instance: Mapping[str, Fit], main: SetResult) -> str:
    """The source's central contrast: does pooling into level sets strengthen the
    relation of entropy to the score (a larger |r| than instance by instance)?"""
    ri = instance["entropy"].r
    head = f"On the lab model, entropy taken one answer at a time correlates with the score at r = {ri:.2f}"
    if main.fit is None:
        return head + "; the level sets are too few for a line, so pooling cannot be judged here."
    rs = main.fit.r
    verdict = ("pooling strengthens the relation, as the source's central contrast says" if abs(rs) > abs(ri)
               else "pooling does not strengthen the relation here, against the source's central contrast")
    return f"{head}; pooled into level sets, at r = {rs:.3f}: {verdict}."


def agreement_sentence(table: pd.DataFrame) -> str:
    """How many candidate calls at least ``AGREEMENT_LEVEL`` of the re-centred
    resamples make too, and so how many a different sample could flip."""
    c = table[(table["role"] == "candidate") & table["agreement"].notna()]
    if c.empty:
        return "No candidate set was decided, so there is no call for a resample to flip."
    stable = int((c["agreement"] >= AGREEMENT_LEVEL).sum())
    return (f"{stable} of {len(c)} calls are made by at least {AGREEMENT_LEVEL:.0%} of the re-centred "
            f"resamples; a different sample of the same size could flip the other {len(c) - stable}.")


def _check_lab_model(value, settings):
    from analysis.lab.ladder import check_runs

    check_runs("lab_model", value, settings["lab_profile"])


PARAMS = Declaration(
    "entropy",
    PROFILES,
    (
        lab_profile_param(),
        Param("lab_model", "the lab run of the linearity study, such as pert-l2x", kind="str",
              check=_check_lab_model),
        Param("lab_popular_sets", "dataset inference: sets the lab's popular excerpts are cut into "
              "(by copies)", kind="int", lo=1),
        Param("lab_heldout_sets", "dataset inference: sets the lab's held-out popular-text windows are "
              "dealt into", kind="int", lo=1),
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
